/* SPDX-License-Identifier: MIT */
/*
 * check.c - the readable summary of `pith --check` (see check.h). One
 * aligned "what  value" line per concern, so an operator can diff two
 * configurations, and nothing printed here is ever a guess: every line
 * restates a value main has already validated.
 */
#include "cli/check.h"

#include "core/vhost.h"
#include "event/loop.h"
#include "sys/resolve.h"

#include <stdio.h>

static const char *on_off(bool v)
{
    return v ? "on" : "off";
}

/* The caching and directory lines of one site, indented by `in`. */
static void site_lines(const struct site_conf *site, const char *in)
{
    printf("%scaching     Cache-Control: %s", in, site->cache_control);
    for (unsigned i = 0; i < site->nimmutable; i++)
        printf("%s'%s'", i ? ", " : "; a year and immutable for ", site->immutable[i]);
    printf("\n");
    printf("%sdirectories index %s, listing %s, symlinks %s\n", in, site->index,
           on_off(site->listing),
           site->follow_symlinks ? "followed beneath the root" : "refused (403)");
    const struct site *f = &site->site;
    if (!f->nheaders && !f->cors && !f->has_fallback && !f->clean_urls && !f->npages &&
        !f->no_server_header)
        return;
    printf("%sresponses  ", in);
    const char *sep = " ";
    if (f->nheaders) {
        printf("%s%u extra field%s", sep, f->nheaders, f->nheaders == 1 ? "" : "s");
        sep = ", ";
    }
    if (f->cors) {
        printf("%sCORS", sep);
        sep = ", ";
    }
    if (f->has_fallback) {
        printf("%sfallback /%s", sep, f->fallback);
        sep = ", ";
    }
    if (f->clean_urls) {
        printf("%sclean URLs", sep);
        sep = ", ";
    }
    for (unsigned i = 0; i < f->npages; i++) {
        printf("%s%d page /%s", sep, f->page[i].status, f->page[i].path);
        sep = ", ";
    }
    if (f->no_server_header)
        printf("%sno Server field", sep);
    printf("\n");
}

/* Basic auth: each protected prefix with its password file and realm. */
static void auth_lines(const struct settings *set, const struct site_conf *site, const char *in)
{
    for (unsigned i = site->auth_first; i < site->auth_first + site->nauth; i++)
        printf("%sauth        %s behind the users of %s (realm \"%s\")\n", in, set->auth[i].prefix,
               set->auth[i].file, set->auth[i].realm);
}

/* Sites (issue 22): each with its names, root and settings; the first
 * answers every host no name matches. */
static void sites_lines(const struct server *s)
{
    const struct settings *set = &s->set;
    printf("  sites       %u, chosen by the request's host; any other host gets the first\n",
           set->nsites);
    for (unsigned i = 0; i < set->nsites; i++) {
        const struct site_conf *site = &set->sites[i];
        printf("  site        ");
        if (!site->named)
            printf("(no name)");
        for (unsigned k = 0, first = 1; k < set->hosts.n; k++) {
            if (set->hosts.name[k].site != i)
                continue;
            struct span n = vhost_name_text(&set->hosts, k);
            printf("%s%.*s", first ? "" : ", ", (int)n.n, n.p);
            first = 0;
        }
        printf("%s\n", i == 0 ? " (default)" : "");
        printf("    serve       %s\n", s->sites[i].root_path);
        if (set->ntls && site->ntls == 1)
            printf("    https       certificate %u of %u\n", site->tls_first + 1, set->ntls);
        else if (set->ntls)
            printf("    https       certificates %u to %u of %u (SNI picks the one that names "
                   "the host)\n",
                   site->tls_first + 1, site->tls_first + site->ntls, set->ntls);
        site_lines(site, "    ");
        auth_lines(set, site, "    ");
    }
}

void check_print(const struct config *cfg, const struct server *s, const char *listen)
{
    const struct settings *set = &s->set;
    printf("pith %s --check: the configuration is valid; pith would\n", PITH_VERSION);
    if (set->nsites == 1 && !set->sites[0].named)
        printf("  serve       %s (paths resolved with %s)\n", s->sites[0].root_path,
               resolve_method_name(s->resolve));
    else
        printf("  resolve     paths with %s\n", resolve_method_name(s->resolve));
    printf("  listen on   %s\n", listen);
    printf("  workers     %u, %s, %u connections each\n", set->workers, s->loop->name,
           set->max_conns);
    if (set->max_conns_per_client)
        printf("  clients     %u connections each at most, across the workers\n",
               set->max_conns_per_client);
    printf("  cache       %u MiB for files up to %u bytes, %u open files per worker\n",
           set->cache_size_mib, set->cache_max_file, set->cache_entries);
    if (set->nsites == 1 && !set->sites[0].named) {
        site_lines(&set->sites[0], "  ");
        auth_lines(set, &set->sites[0], "  ");
    } else
        sites_lines(s);
    printf("  timeouts    header %u s, keep-alive %u s, send %u s, grace %u s\n",
           set->timeout_header, set->timeout_keepalive, set->timeout_send, set->grace);
    printf("  access log  %s\n", !set->log                            ? "off"
                                 : set->log[0] == '-' && !set->log[1] ? "stdout, combined format"
                                                                      : set->log);
    printf("  pidfile     %s\n", set->pidfile ? set->pidfile : "none");
    printf("  user        %s\n", set->user ? set->user : "unchanged (workers keep this user)");
    printf("  run         %s\n", cfg->daemon ? "as a daemon" : "in the foreground");
}

/* SPDX-License-Identifier: MIT */
/*
 * check.c - the readable summary of `pith --check` (see check.h). One
 * aligned "what  value" line per concern, so an operator can diff two
 * configurations, and nothing printed here is ever a guess: every line
 * restates a value main has already validated.
 */
#include "cli/check.h"

#include "sys/resolve.h"

#include <stdio.h>

static const char *on_off(bool v)
{
    return v ? "on" : "off";
}

void check_print(const struct config *cfg, const struct server *s, const char *listen)
{
    const struct settings *set = &s->set;
    printf("pith %s --check: the configuration is valid; pith would\n", PITH_VERSION);
    printf("  serve       %s (paths resolved with %s)\n", s->root_path,
           resolve_method_name(s->resolve));
    printf("  listen on   %s\n", listen);
    printf("  workers     %u, %s, %u connections each\n", set->workers, s->loop->name,
           set->max_conns);
    printf("  cache       %u MiB for files up to %u bytes, %u open files per worker\n",
           set->cache_size_mib, set->cache_max_file, set->cache_entries);
    printf("  caching     Cache-Control: %s", set->cache_control);
    for (unsigned i = 0; i < set->nimmutable; i++)
        printf("%s'%s'", i ? ", " : "; a year and immutable for ", set->immutable[i]);
    printf("\n");
    printf("  directories index %s, listing %s, symlinks %s\n", set->index, on_off(set->listing),
           set->follow_symlinks ? "followed beneath the root" : "refused (403)");
    printf("  timeouts    header %u s, keep-alive %u s, send %u s, grace %u s\n",
           set->timeout_header, set->timeout_keepalive, set->timeout_send, set->grace);
    printf("  access log  %s\n", !set->log                            ? "off"
                                 : set->log[0] == '-' && !set->log[1] ? "stdout, combined format"
                                                                      : set->log);
    printf("  pidfile     %s\n", set->pidfile ? set->pidfile : "none");
    printf("  user        %s\n", set->user ? set->user : "unchanged (workers keep this user)");
    printf("  run         %s\n", cfg->daemon ? "as a daemon" : "in the foreground");
}

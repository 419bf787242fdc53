/* SPDX-License-Identifier: MIT */
/*
 * config_parse.c - argv to struct config: the defaults, the walk over the
 * command line, and config_parse()'s order of steps (the flags, the
 * configuration file, the sites' checks, the checks that need every
 * option). Long flags follow darkhttpd's spelling, short ones miniserve's;
 * "--flag=value" and "--flag value" both work; ROOT may stand anywhere, or
 * come as --root. libc-free, shared by both builds.
 */
#include "cli/config.h"
#include "cli/config_internal.h"

#include "core/bytes.h"
#include "core/core.h"

#include <stddef.h>

static void set_defaults(struct config *c, unsigned cpus)
{
    /* Everything before the large tables; of those only what is used is
     * ever written (config.h). */
    mem_zero(c, offsetof(struct config, hosts));
    c->top.root = ".";
    c->top.index = "index.html";
    c->top.listing = true;
    c->top.max_age = 60;
    c->port = 8080;
    c->workers = cpus < 1 ? 1 : cpus > CONFIG_WORKERS_MAX ? CONFIG_WORKERS_MAX : cpus;
    c->max_conns = 1024;
    c->cache_size_mib = 16;
    c->cache_max_file = 65536;
    c->cache_entries = 1024;
    c->timeout_header = 15;
    c->timeout_keepalive = 5;
    c->timeout_send = 30;
    c->grace = 10;
    c->unix_mode = 0666;
    c->tls_port = 8443;
    c->http2 = true;
    c->h2_max_streams = 100;
    c->http3 = -1;
    c->h3_alt_svc_max_age = 86400;
    c->timeout_handshake = 10;
}

/* One argument that starts with '-'; may consume the next one as its value. */
static enum config_verdict parse_flag(struct parser *ps, int argc, char **argv, int *i)
{
    const char *arg = argv[*i];
    const struct option *o;
    const char *value = NULL;
    if (arg[1] == '-') {
        size_t n = cstr_len(arg + 2), eq = mem_find(arg + 2, n, '=');
        if (config_refused(ps, span_make(arg + 2, eq)))
            return CONFIG_USAGE;
        o = config_find(span_make(arg + 2, eq));
        if (eq < n)
            value = arg + 2 + eq + 1;
    } else {
        o = config_find_short(arg[1]);
        if (o && arg[2] != '\0') {
            if (!o->takes_value)
                return config_fail(ps, "unknown option '", arg, "' (see pith --help)");
            value = arg + 2; /* "-p8080" */
        }
    }
    if (!o)
        return config_fail(ps, "unknown option '", arg, "' (see pith --help)");
    if (o->scope == SCOPE_BLOCK)
        return config_fail(ps, "--", o->name, " is for a site block of a configuration file");
    ps->given[o->kind] = true;
    if (!o->takes_value) {
        if (value)
            return config_fail(ps, "--", o->name, " takes no value");
        return config_apply(ps, o, NULL);
    }
    if (!value) {
        if (*i + 1 >= argc)
            return config_fail(ps, "--", o->name, " needs a value");
        value = argv[++*i];
    }
    return config_apply(ps, o, value);
}

enum config_verdict config_parse(int argc, char **argv, unsigned cpus, struct config *cfg,
                                 char *reason, size_t cap)
{
    static struct parser ps; /* its table of given options, and a large config behind it */
    set_defaults(cfg, cpus);
    mem_zero(&ps, sizeof ps);
    ps.cfg = cfg;
    ps.cur = &cfg->top;
    ps.reason = buf_make(reason, cap ? cap - 1 : 0);
    bool options_done = false;
    enum config_verdict v = CONFIG_RUN;
    for (int i = 1; i < argc && v == CONFIG_RUN; i++) {
        const char *arg = argv[i];
        if (!options_done && arg[0] == '-' && arg[1] != '\0') {
            if (arg[1] == '-' && arg[2] == '\0')
                options_done = true;
            else
                v = parse_flag(&ps, argc, argv, &i);
        } else if (cfg->have_root) {
            v = config_fail(&ps, "ROOT given twice ('", arg, "')");
        } else if (arg[0] == '\0') {
            v = config_fail(&ps, "ROOT is empty", "", "");
        } else {
            cfg->top.root = arg;
            cfg->have_root = true;
            ps.given[K_ROOT] = true;
        }
    }
    if (v == CONFIG_RUN && cfg->config_path)
        config_file_read(&ps);
    /* With a file, its sites' problems are reported along with its lines'. */
    if (v == CONFIG_RUN && (!ps.problems || cfg->nsites))
        v = config_check_sites(&ps);
    if (ps.problems)
        v = CONFIG_USAGE;
    if (v == CONFIG_RUN)
        v = config_check_together(&ps);
    /* len counts only what was written: never a byte past it. */
    size_t n = ps.reason.len;
    while (n && reason[n - 1] == '\n')
        n--; /* the file's problems end their lines */
    if (cap)
        reason[n] = '\0';
    return v;
}

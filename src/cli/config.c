/* SPDX-License-Identifier: MIT */
/*
 * config.c - argv to struct config: the option table and its lookup, the
 * walk over the command line, the reason's pieces, and config_parse()'s
 * order of steps. What one option's value means is config_apply.c's; the
 * checks that need every option (and the sites) are config_check.c's; the
 * server's settings from the result are config_settings.c's; the --help
 * text is usage.c's. libc-free (it uses core's byte helpers) so the
 * freestanding build can share it. Long flags follow darkhttpd's spelling,
 * short ones miniserve's; "--flag=value" and "--flag value" both work; ROOT
 * may stand anywhere, or come as --root.
 */
#include "cli/config.h"
#include "cli/config_internal.h"

#include "core/bytes.h"
#include "core/core.h"

static const struct option options[] = {
    {"port", 'p', true, K_PORT, SCOPE_SERVER},
    {"addr", 'a', true, K_ADDR, SCOPE_SERVER},
    {"workers", 'w', true, K_WORKERS, SCOPE_SERVER},
    {"max-conns", 0, true, K_MAX_CONNS, SCOPE_SERVER},
    {"root", 0, true, K_ROOT, SCOPE_SITE},
    {"index", 0, true, K_INDEX, SCOPE_SITE},
    {"no-listing", 0, false, K_NO_LISTING, SCOPE_SITE},
    {"follow-symlinks", 0, false, K_FOLLOW, SCOPE_SITE},
    {"max-age", 0, true, K_MAX_AGE, SCOPE_SITE},
    {"immutable", 0, true, K_IMMUTABLE, SCOPE_SITE},
    {"cache-size", 0, true, K_CACHE_SIZE, SCOPE_SERVER},
    {"cache-max-file", 0, true, K_CACHE_MAX_FILE, SCOPE_SERVER},
    {"cache-entries", 0, true, K_CACHE_ENTRIES, SCOPE_SERVER},
    {"timeout-header", 0, true, K_T_HEADER, SCOPE_SERVER},
    {"timeout-keepalive", 0, true, K_T_KEEPALIVE, SCOPE_SERVER},
    {"timeout-send", 0, true, K_T_SEND, SCOPE_SERVER},
    {"grace", 0, true, K_GRACE, SCOPE_SERVER},
    {"io", 0, true, K_IO, SCOPE_SERVER},
    {"log", 0, true, K_LOG, SCOPE_SERVER},
    {"pidfile", 0, true, K_PIDFILE, SCOPE_SERVER},
    {"daemon", 0, false, K_DAEMON, SCOPE_SERVER},
    {"user", 0, true, K_USER, SCOPE_SERVER},
    {"quiet", 'q', false, K_QUIET, SCOPE_SERVER},
    {"fallback", 0, true, K_FALLBACK, SCOPE_SITE},
    {"clean-urls", 0, false, K_CLEAN_URLS, SCOPE_SITE},
    {"header", 0, true, K_HEADER, SCOPE_SITE},
    {"cors", 0, false, K_CORS, SCOPE_SITE},
    {"no-server-header", 0, false, K_NO_SERVER_HEADER, SCOPE_SITE},
    {"error-page", 0, true, K_ERROR_PAGE, SCOPE_SITE},
    {"no-sandbox", 0, false, K_NO_SANDBOX, SCOPE_SERVER},
    {"group", 0, true, K_GROUP, SCOPE_SERVER},
    {"chroot", 0, true, K_CHROOT, SCOPE_SERVER},
    {"help", 'h', false, K_HELP, SCOPE_CMDLINE},
    {"version", 'V', false, K_VERSION, SCOPE_CMDLINE},
    {"precompressed", 0, true, K_PRECOMPRESSED, SCOPE_SITE},
    {"proxy-protocol", 0, false, K_PROXY_PROTOCOL, SCOPE_SERVER},
    {"trusted-proxy", 0, true, K_TRUSTED_PROXY, SCOPE_SERVER},
    {"real-ip-header", 0, true, K_REAL_IP_HEADER, SCOPE_SERVER},
    {"log-format", 0, true, K_LOG_FORMAT, SCOPE_SERVER},
    {"status", 0, true, K_STATUS, SCOPE_SERVER},
    {"unix-mode", 0, true, K_UNIX_MODE, SCOPE_SERVER}, /* production (issue 13, opssys) */
    {"unix-owner", 0, true, K_UNIX_OWNER, SCOPE_SERVER},
    {"check", 0, false, K_CHECK, SCOPE_CMDLINE},
#ifndef PITH_TINY /* refused by name in pith-tiny (tiny_refused), never looked up */
    {"tls-cert", 0, true, K_TLS_CERT, SCOPE_SITE},
    {"tls-key", 0, true, K_TLS_KEY, SCOPE_SITE},
    {"tls-port", 0, true, K_TLS_PORT, SCOPE_SERVER},
    {"tls-only", 0, false, K_TLS_ONLY, SCOPE_SERVER},
    {"redirect-http", 0, false, K_REDIRECT_HTTP, SCOPE_SERVER},
    {"hsts", 0, true, K_HSTS, SCOPE_SERVER},
    {"timeout-handshake", 0, true, K_T_HANDSHAKE, SCOPE_SERVER},
    {"http2", 0, true, K_HTTP2, SCOPE_SERVER},
    {"h2-max-streams", 0, true, K_H2_MAX_STREAMS, SCOPE_SERVER},
    {"http3", 0, true, K_HTTP3, SCOPE_SERVER}, /* issue 34 */
    {"h3-retry", 0, true, K_H3_RETRY, SCOPE_SERVER},
    {"h3-alt-svc-max-age", 0, true, K_H3_ALT_SVC_MAX_AGE, SCOPE_SERVER},
#endif
    {"site", 0, true, K_SITE, SCOPE_SERVER},
    {"config", 0, true, K_CONFIG, SCOPE_CMDLINE},
    {"default", 0, false, K_DEFAULT, SCOPE_BLOCK},
    {"max-conns-per-client", 0, true, K_MAX_CONNS_PER_CLIENT, SCOPE_SITE},
#ifndef PITH_TINY /* refused by name in pith-tiny (tiny_refused) */
    {"auth", 0, true, K_AUTH, SCOPE_SITE},
    {"acme", 0, true, K_ACME, SCOPE_SERVER}, /* issue 35 */
    {"acme-ca", 0, true, K_ACME_CA, SCOPE_SERVER},
    {"acme-ca-root", 0, true, K_ACME_CA_ROOT, SCOPE_SERVER},
    {"acme-dir", 0, true, K_ACME_DIR, SCOPE_SERVER},
#endif
};

/* ---- pith-tiny (the freestanding build): flags that need a library -------------
 * pith-tiny has no libc and links no library, so it refuses, with exit 2
 * and the reason, every flag of the full build whose feature needs one.
 * Listed by name, so a flag is refused with the right words whether or not
 * this build's table above has it yet. A branch adding such a flag adds
 * its name here. `--io uring` is refused in config_apply (config_apply.c). */
#ifdef PITH_TINY
static const struct {
    const char *name, *why;
} tiny_refused[] = {
    {"tls-cert", "TLS needs OpenSSL"},
    {"tls-key", "TLS needs OpenSSL"},
    {"tls-port", "TLS needs OpenSSL"},
    {"tls-only", "TLS needs OpenSSL"},
    {"timeout-handshake", "TLS needs OpenSSL"},
    {"hsts", "TLS needs OpenSSL"},
    {"redirect-http", "TLS needs OpenSSL"},
    {"http2", "HTTP/2 needs nghttp2"},
    {"h2-max-streams", "HTTP/2 needs nghttp2"},
    {"http3", "HTTP/3 needs ngtcp2 and nghttp3"},
    {"h3-retry", "HTTP/3 needs ngtcp2 and nghttp3"},
    {"h3-alt-svc-max-age", "HTTP/3 needs ngtcp2 and nghttp3"},
    {"precompressed",
     "precompressed variants are left out, like pith compress (zlib, brotli, zstd)"},
    {"auth", "basic auth needs libxcrypt"},
    {"acme", "ACME needs OpenSSL and libcurl"},
    {"acme-ca", "ACME needs OpenSSL and libcurl"},
    {"acme-ca-root", "ACME needs OpenSSL and libcurl"},
    {"acme-dir", "ACME needs OpenSSL and libcurl"},
};

static const char *tiny_refuses(struct span name)
{
    for (size_t i = 0; i < ARRAY_LEN(tiny_refused); i++)
        if (span_eq_cstr(name, tiny_refused[i].name))
            return tiny_refused[i].why;
    return NULL;
}
#endif

bool config_refused(struct parser *ps, struct span name)
{
#ifdef PITH_TINY
    const char *why = tiny_refuses(name);
    if (why) {
        buf_put_cstr(&ps->reason, "--");
        buf_put(&ps->reason, name.p, name.n > 64 ? 64 : name.n);
        config_fail(ps, ": not in pith-tiny (", why, "); use the full build");
        return true;
    }
#else
    (void)ps, (void)name;
#endif
    return false;
}

void config_put_piece(struct parser *ps, const char *s)
{
    size_t n = cstr_len(s);
    if (n <= CONFIG_PIECE_MAX) {
        buf_put(&ps->reason, s, n);
        return;
    }
    buf_put(&ps->reason, s, CONFIG_PIECE_MAX);
    buf_put_cstr(&ps->reason, "...");
}

enum config_verdict config_fail(struct parser *ps, const char *a, const char *b, const char *c)
{
    config_put_piece(ps, a);
    config_put_piece(ps, b);
    config_put_piece(ps, c);
    return CONFIG_USAGE;
}

const struct option *config_find(struct span name)
{
    for (size_t i = 0; i < ARRAY_LEN(options); i++)
        if (span_eq_cstr(name, options[i].name))
            return &options[i];
    return NULL;
}

static const struct option *find_short(char c)
{
    for (size_t i = 0; i < ARRAY_LEN(options); i++)
        if (options[i].short_name && options[i].short_name == c)
            return &options[i];
    return NULL;
}

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
        o = find_short(arg[1]);
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

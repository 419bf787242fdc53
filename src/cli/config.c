/* SPDX-License-Identifier: MIT */
/*
 * config.c - argv to struct config, and the --help text. libc-free (it uses
 * core's byte helpers) so the freestanding build can share it. Long flags
 * follow darkhttpd's spelling, short ones miniserve's; "--flag=value" and
 * "--flag value" both work; ROOT may stand anywhere, or come as --root.
 */
#include "cli/config.h"

#include "core/bytes.h"
#include "core/core.h"
#include "core/glob.h"
#include "server/server.h"

static const char usage[] =
    "Usage: pith [OPTIONS] [ROOT]\n"
    "Serve the files under ROOT (default: the current directory) over HTTP/1.1.\n"
    "\n"
    "Options (ranges in brackets):\n"
    "  -p, --port N              TCP port [0..65535] (default 8080; 0 = any free port,\n"
    "                            printed at start)\n"
    "  -a, --addr ADDR           numeric IPv4 or IPv6 address to bind\n"
    "                            (default: all addresses, IPv6 and IPv4)\n"
    "  -w, --workers N           worker processes [1..64] (default: number of CPUs)\n"
    "      --max-conns N         connections per worker [1..1000000] (default 1024)\n"
    "      --root DIR            the directory to serve (instead of ROOT)\n"
    "      --index NAME          file served for a directory (default index.html)\n"
    "      --no-listing          answer 403 for a directory without an index file\n"
    "      --follow-symlinks     follow symlinks that stay beneath ROOT (default: 403)\n"
    "      --max-age S           Cache-Control max-age in seconds (default 60; 0 = no-cache)\n"
    "      --immutable GLOB      files whose name matches get a year's max-age and\n"
    "                            'immutable' (repeatable; e.g. '*.[0-9a-f]{8}.*')\n"
    "      --cache-size MIB      memory per worker for small files [0..4096] (default 16)\n"
    "      --cache-max-file B    files up to B bytes are kept in memory [0..1048576]\n"
    "                            (default 65536); larger ones go by sendfile\n"
    "      --cache-entries N     open-file cache entries per worker [0..1000000]\n"
    "                            (default 1024; 0 = no cache)\n"
    "      --timeout-header S    time to receive a whole request head [1..3600] (default 15)\n"
    "      --timeout-keepalive S idle time between requests [1..3600] (default 5)\n"
    "      --timeout-send S      time without send progress [1..3600] (default 30)\n"
    "      --grace S             on SIGTERM/SIGINT, time to finish responses [0..3600]\n"
    "                            (default 10)\n"
    "      --io auto|epoll|uring event loop (default auto: io_uring where the kernel\n"
    "                            allows it, else epoll; the start line says which)\n"
    "      --log FILE|-          access log in combined format, UTC ('-' = stdout;\n"
    "                            default: off)\n"
    "      --pidfile FILE        write the master's process id to FILE\n"
    "      --daemon              detach from the terminal (use with --pidfile)\n"
    "      --user NAME           workers drop to NAME's uid and groups (needs root)\n"
    "      --tls-cert FILE       HTTPS: the certificate chain (PEM, leaf first); with\n"
    "      --tls-key FILE        its private key (RSA or ECDSA). Repeat the pair for more\n"
    "                            names: the client's SNI picks, the first is the default\n"
    "      --tls-port N          HTTPS port [0..65535] (default 8443)\n"
    "      --tls-only            no plain HTTP listener\n"
    "      --redirect-http       plain HTTP answers 308 to the same path over HTTPS\n"
    "      --hsts S              Strict-Transport-Security max-age on HTTPS responses\n"
    "                            [1..63072000] (default: none)\n"
    "      --timeout-handshake S time for a whole TLS handshake [1..3600] (default 10)\n"
    "  -q, --quiet               no start line, no worker exit summaries (errors still go\n"
    "                            to stderr)\n"
    "  -h, --help                show this help and exit\n"
    "  -V, --version             show the version and exit\n"
    "  --                        end of options (for a ROOT that starts with '-')\n"
    "\n"
    "Examples:\n"
    "  pith                                  serve . on port 8080, all addresses\n"
    "  pith -p 9000 ./public                 serve ./public on port 9000\n"
    "  pith --addr 127.0.0.1 --port 0 site   loopback only, any free port\n"
    "  pith --log access.log --max-age 3600 --no-listing /srv/www\n"
    "  pith --daemon --pidfile /run/pith.pid --user www-data --port 80 /srv/www\n"
    "\n"
    "Signals: TERM/INT finish responses in flight and exit (a second one exits at once);\n"
    "HUP and USR1 reopen the log file; HUP also reloads the TLS certificates and keys.\n"
    "Exit status: 0 success, 1 runtime failure, 2 bad usage.\n"
    "Security: only files beneath ROOT are served; dotfiles (except /.well-known/) and\n"
    "symlinks are refused with 403; requests are parsed strictly (RFC 9112).\n";

const char *config_usage(void)
{
    return usage;
}

enum kind {
    K_PORT,
    K_ADDR,
    K_WORKERS,
    K_MAX_CONNS,
    K_ROOT,
    K_INDEX,
    K_NO_LISTING,
    K_FOLLOW,
    K_MAX_AGE,
    K_IMMUTABLE,
    K_CACHE_SIZE,
    K_CACHE_MAX_FILE,
    K_CACHE_ENTRIES,
    K_T_HEADER,
    K_T_KEEPALIVE,
    K_T_SEND,
    K_GRACE,
    K_IO,
    K_LOG,
    K_PIDFILE,
    K_DAEMON,
    K_USER,
    K_QUIET,
    K_HELP,
    K_VERSION,
    K_TLS_CERT, /* HTTPS (issue 10) */
    K_TLS_KEY,
    K_TLS_PORT,
    K_TLS_ONLY,
    K_REDIRECT_HTTP,
    K_HSTS,
    K_T_HANDSHAKE,
};

struct option {
    const char *name;
    char short_name;
    bool takes_value;
    enum kind kind;
};

static const struct option options[] = {
    {"port", 'p', true, K_PORT},
    {"addr", 'a', true, K_ADDR},
    {"workers", 'w', true, K_WORKERS},
    {"max-conns", 0, true, K_MAX_CONNS},
    {"root", 0, true, K_ROOT},
    {"index", 0, true, K_INDEX},
    {"no-listing", 0, false, K_NO_LISTING},
    {"follow-symlinks", 0, false, K_FOLLOW},
    {"max-age", 0, true, K_MAX_AGE},
    {"immutable", 0, true, K_IMMUTABLE},
    {"cache-size", 0, true, K_CACHE_SIZE},
    {"cache-max-file", 0, true, K_CACHE_MAX_FILE},
    {"cache-entries", 0, true, K_CACHE_ENTRIES},
    {"timeout-header", 0, true, K_T_HEADER},
    {"timeout-keepalive", 0, true, K_T_KEEPALIVE},
    {"timeout-send", 0, true, K_T_SEND},
    {"grace", 0, true, K_GRACE},
    {"io", 0, true, K_IO},
    {"log", 0, true, K_LOG},
    {"pidfile", 0, true, K_PIDFILE},
    {"daemon", 0, false, K_DAEMON},
    {"user", 0, true, K_USER},
    {"quiet", 'q', false, K_QUIET},
    {"help", 'h', false, K_HELP},
    {"version", 'V', false, K_VERSION},
    {"tls-cert", 0, true, K_TLS_CERT},
    {"tls-key", 0, true, K_TLS_KEY},
    {"tls-port", 0, true, K_TLS_PORT},
    {"tls-only", 0, false, K_TLS_ONLY},
    {"redirect-http", 0, false, K_REDIRECT_HTTP},
    {"hsts", 0, true, K_HSTS},
    {"timeout-handshake", 0, true, K_T_HANDSHAKE},
};

struct parser {
    struct config *cfg;
    struct buf reason;
    bool have_root;
};

/* A piece of the reason, cut to a length that keeps the whole line within
 * the caller's buffer (a 300-character value must not crowd out the rest). */
#define PIECE_MAX 96
static void put_piece(struct parser *ps, const char *s)
{
    size_t n = cstr_len(s);
    if (n <= PIECE_MAX) {
        buf_put(&ps->reason, s, n);
        return;
    }
    buf_put(&ps->reason, s, PIECE_MAX);
    buf_put_cstr(&ps->reason, "...");
}

static enum config_verdict fail(struct parser *ps, const char *a, const char *b, const char *c)
{
    put_piece(ps, a);
    put_piece(ps, b);
    put_piece(ps, c);
    return CONFIG_USAGE;
}

/* Parses value as a decimal in [lo, hi]; on failure explains which flag. */
static bool number(struct parser *ps, const char *flag, const char *value, uint64_t lo, uint64_t hi,
                   unsigned *out)
{
    uint64_t v;
    if (u64_parse(span_make(value, cstr_len(value)), &v) && v >= lo && v <= hi) {
        *out = (unsigned)v;
        return true;
    }
    buf_put_cstr(&ps->reason, "--");
    put_piece(ps, flag);
    buf_put_cstr(&ps->reason, ": '");
    put_piece(ps, value);
    buf_put_cstr(&ps->reason, "' is not a number from ");
    buf_put_u64(&ps->reason, lo);
    buf_put_cstr(&ps->reason, " to ");
    buf_put_u64(&ps->reason, hi);
    return false;
}

static bool nonempty(struct parser *ps, const char *flag, const char *value)
{
    if (value[0])
        return true;
    fail(ps, "--", flag, ": the value is empty");
    return false;
}

/* HTTPS (issue 10): its flags, and the checks that need all of them. */
static enum config_verdict apply_tls_flag(struct parser *ps, const struct option *o, const char *v)
{
    struct config *c = ps->cfg;
    bool ok = true;
    switch (o->kind) {
    case K_TLS_CERT:
    case K_TLS_KEY: {
        bool cert = o->kind == K_TLS_CERT;
        unsigned *n = cert ? &c->ntls_cert : &c->ntls_key;
        if (!nonempty(ps, o->name, v))
            return CONFIG_USAGE;
        if (*n == CONFIG_TLS_PAIRS_MAX)
            return fail(ps, "--", o->name, ": more than 8 certificate/key pairs");
        (cert ? c->tls_cert : c->tls_key)[(*n)++] = v;
        break;
    }
    case K_TLS_PORT: ok = number(ps, o->name, v, 0, 65535, &c->tls_port); break;
    case K_HSTS: ok = number(ps, o->name, v, 1, 63072000, &c->hsts); break;
    case K_T_HANDSHAKE: ok = number(ps, o->name, v, 1, 3600, &c->timeout_handshake); break;
    case K_TLS_ONLY: c->tls_only = true; break;
    case K_REDIRECT_HTTP: c->redirect_http = true; break;
    default: break;
    }
    return ok ? CONFIG_RUN : CONFIG_USAGE;
}

static enum config_verdict check_tls(struct parser *ps)
{
    const struct config *c = ps->cfg;
    if (c->ntls_cert != c->ntls_key)
        return fail(ps, "--tls-cert and --tls-key must come in pairs (one key per certificate)", "",
                    "");
    if (c->ntls_cert == 0 && (c->tls_only || c->redirect_http || c->hsts))
        return fail(ps,
                    c->tls_only        ? "--tls-only"
                    : c->redirect_http ? "--redirect-http"
                                       : "--hsts",
                    " needs --tls-cert and --tls-key", "");
    if (c->tls_only && c->redirect_http)
        return fail(ps, "--redirect-http needs the plain listener that --tls-only drops", "", "");
    if (c->ntls_cert && !c->tls_only && c->port == c->tls_port && c->port != 0)
        return fail(ps, "--port and --tls-port must differ", "", "");
    return CONFIG_RUN;
}

static enum config_verdict apply_flag(struct parser *ps, const struct option *o, const char *v)
{
    if (o->kind >= K_TLS_CERT)
        return apply_tls_flag(ps, o, v);
    struct config *c = ps->cfg;
    bool ok = true;
    switch (o->kind) {
    case K_PORT: ok = number(ps, o->name, v, 0, 65535, &c->port); break;
    case K_WORKERS: ok = number(ps, o->name, v, 1, CONFIG_WORKERS_MAX, &c->workers); break;
    case K_MAX_CONNS: ok = number(ps, o->name, v, 1, CONFIG_MAX_CONNS_MAX, &c->max_conns); break;
    case K_MAX_AGE: ok = number(ps, o->name, v, 0, 315360000, &c->max_age); break;
    case K_CACHE_SIZE: ok = number(ps, o->name, v, 0, 4096, &c->cache_size_mib); break;
    case K_CACHE_MAX_FILE: ok = number(ps, o->name, v, 0, 1048576, &c->cache_max_file); break;
    case K_CACHE_ENTRIES: ok = number(ps, o->name, v, 0, 1000000, &c->cache_entries); break;
    case K_T_HEADER: ok = number(ps, o->name, v, 1, 3600, &c->timeout_header); break;
    case K_T_KEEPALIVE: ok = number(ps, o->name, v, 1, 3600, &c->timeout_keepalive); break;
    case K_T_SEND: ok = number(ps, o->name, v, 1, 3600, &c->timeout_send); break;
    case K_GRACE: ok = number(ps, o->name, v, 0, 3600, &c->grace); break;
    case K_ADDR: ok = nonempty(ps, o->name, v) && (c->addr = v); break;
    case K_ROOT:
        if (ps->have_root)
            return fail(ps, "ROOT given twice ('", v, "')");
        ok = nonempty(ps, o->name, v);
        c->root = v;
        ps->have_root = true;
        break;
    case K_LOG: ok = nonempty(ps, o->name, v) && (c->log = v); break;
    case K_PIDFILE: ok = nonempty(ps, o->name, v) && (c->pidfile = v); break;
    case K_USER: ok = nonempty(ps, o->name, v) && (c->user = v); break;
    case K_INDEX:
        ok = nonempty(ps, o->name, v);
        if (ok && (mem_find(v, cstr_len(v), '/') < cstr_len(v) || v[0] == '.'))
            return fail(ps, "--index: '", v, "' must be a plain file name");
        c->index = v;
        break;
    case K_IMMUTABLE:
        if (!glob_valid(span_make(v, cstr_len(v))))
            return fail(ps, "--immutable: '", v, "' is not a valid pattern");
        if (c->nimmutable == CONFIG_IMMUTABLE_MAX)
            return fail(ps, "--immutable: more than 8 patterns", "", "");
        c->immutable[c->nimmutable++] = v;
        break;
    case K_IO:
        if (span_eq_cstr(span_make(v, cstr_len(v)), "auto"))
            c->io = CONFIG_IO_AUTO;
        else if (span_eq_cstr(span_make(v, cstr_len(v)), "epoll"))
            c->io = CONFIG_IO_EPOLL;
        else if (span_eq_cstr(span_make(v, cstr_len(v)), "uring"))
            c->io = CONFIG_IO_URING;
        else
            return fail(ps, "--io: '", v, "' is not one of auto, epoll, uring");
        break;
    case K_NO_LISTING: c->listing = false; break;
    case K_FOLLOW: c->follow_symlinks = true; break;
    case K_DAEMON: c->daemon = true; break;
    case K_QUIET: c->quiet = true; break;
    case K_HELP: return CONFIG_HELP;
    case K_VERSION: return CONFIG_VERSION;
    default: break;
    }
    return ok ? CONFIG_RUN : CONFIG_USAGE;
}

static const struct option *find_long(struct span name)
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
    *c = (struct config){0};
    c->root = ".";
    c->port = 8080;
    c->workers = cpus < 1 ? 1 : cpus > CONFIG_WORKERS_MAX ? CONFIG_WORKERS_MAX : cpus;
    c->max_conns = 1024;
    c->index = "index.html";
    c->listing = true;
    c->max_age = 60;
    c->cache_size_mib = 16;
    c->cache_max_file = 65536;
    c->cache_entries = 1024;
    c->timeout_header = 15;
    c->timeout_keepalive = 5;
    c->timeout_send = 30;
    c->grace = 10;
    c->tls_port = 8443;
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
        o = find_long(span_make(arg + 2, eq));
        if (eq < n)
            value = arg + 2 + eq + 1;
    } else {
        o = find_short(arg[1]);
        if (o && arg[2] != '\0') {
            if (!o->takes_value)
                return fail(ps, "unknown option '", arg, "' (see pith --help)");
            value = arg + 2; /* "-p8080" */
        }
    }
    if (!o)
        return fail(ps, "unknown option '", arg, "' (see pith --help)");
    if (!o->takes_value) {
        if (value)
            return fail(ps, "--", o->name, " takes no value");
        return apply_flag(ps, o, NULL);
    }
    if (!value) {
        if (*i + 1 >= argc)
            return fail(ps, "--", o->name, " needs a value");
        value = argv[++*i];
    }
    return apply_flag(ps, o, value);
}

enum config_verdict config_parse(int argc, char **argv, unsigned cpus, struct config *cfg,
                                 char *reason, size_t cap)
{
    struct parser ps = {cfg, buf_make(reason, cap ? cap - 1 : 0), false};
    bool options_done = false;
    enum config_verdict v = CONFIG_RUN;
    set_defaults(cfg, cpus);
    for (int i = 1; i < argc && v == CONFIG_RUN; i++) {
        const char *arg = argv[i];
        if (!options_done && arg[0] == '-' && arg[1] != '\0') {
            if (arg[1] == '-' && arg[2] == '\0')
                options_done = true;
            else
                v = parse_flag(&ps, argc, argv, &i);
        } else if (ps.have_root) {
            v = fail(&ps, "ROOT given twice ('", arg, "')");
        } else if (arg[0] == '\0') {
            v = fail(&ps, "ROOT is empty", "", "");
        } else {
            cfg->root = arg;
            ps.have_root = true;
        }
    }
    if (v == CONFIG_RUN)
        v = check_tls(&ps);
    /* len counts only what was written: never a byte past it. */
    if (cap)
        reason[ps.reason.len] = '\0';
    return v;
}

_Static_assert(CONFIG_IMMUTABLE_MAX == SETTINGS_GLOBS_MAX, "--immutable's bound is the server's");
_Static_assert(CONFIG_TLS_PAIRS_MAX == SETTINGS_TLS_PAIRS_MAX, "the pairs' bound is the server's");
_Static_assert(CONFIG_WORKERS_MAX == SETTINGS_WORKERS_MAX, "--workers' bound is the server's");

void settings_from_config(const struct config *cfg, struct settings *out)
{
    *out = (struct settings){
        .workers = cfg->workers,
        .max_conns = cfg->max_conns,
        .index = cfg->index,
        .listing = cfg->listing,
        .follow_symlinks = cfg->follow_symlinks,
        .nimmutable = cfg->nimmutable,
        .cache_size_mib = cfg->cache_size_mib,
        .cache_max_file = cfg->cache_max_file,
        .cache_entries = cfg->cache_entries,
        .timeout_header = cfg->timeout_header,
        .timeout_keepalive = cfg->timeout_keepalive,
        .timeout_send = cfg->timeout_send,
        .grace = cfg->grace,
        .log = cfg->log,
        .pidfile = cfg->pidfile,
        .user = cfg->user,
        .quiet = cfg->quiet,
    };
    for (unsigned i = 0; i < cfg->nimmutable; i++)
        out->immutable[i] = cfg->immutable[i];
    /* HTTPS (issue 10) */
    for (unsigned i = 0; i < cfg->ntls_cert; i++) {
        out->tls_cert[i] = cfg->tls_cert[i];
        out->tls_key[i] = cfg->tls_key[i];
    }
    out->ntls = cfg->ntls_cert;
    out->tls_port = cfg->tls_port;
    out->tls_only = cfg->tls_only;
    out->redirect_http = cfg->redirect_http;
    out->hsts = cfg->hsts;
    struct buf hb = buf_make(out->hsts_value, sizeof out->hsts_value - 1);
    buf_put_cstr(&hb, "max-age=");
    buf_put_u64(&hb, cfg->hsts);
    out->hsts_value[hb.len] = '\0';
    out->timeout_handshake = cfg->timeout_handshake;
    struct buf b = buf_make(out->cache_control, sizeof out->cache_control - 1);
    if (cfg->max_age == 0) {
        buf_put_cstr(&b, "no-cache");
    } else {
        buf_put_cstr(&b, "max-age=");
        buf_put_u64(&b, cfg->max_age);
    }
    out->cache_control[b.len] = '\0';
}

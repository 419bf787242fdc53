/* SPDX-License-Identifier: MIT */
/*
 * config.c - argv to struct config (the --help text is in usage.c).
 * libc-free (it uses core's byte helpers) so the freestanding build can
 * share it. Long flags
 * follow darkhttpd's spelling, short ones miniserve's; "--flag=value" and
 * "--flag value" both work; ROOT may stand anywhere, or come as --root.
 */
#include "cli/config.h"

#include "core/bytes.h"
#include "core/core.h"
#include "core/glob.h"
#include "core/netaddr.h"
#include "server/filecache.h"
#include "server/server.h"
#include "server/tls.h"

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
    K_FALLBACK,
    K_CLEAN_URLS,
    K_HEADER,
    K_CORS,
    K_NO_SERVER_HEADER,
    K_ERROR_PAGE,
    K_NO_SANDBOX,
    K_GROUP,
    K_CHROOT,
    K_HELP,
    K_VERSION,
    K_PRECOMPRESSED,
    K_PROXY_PROTOCOL, /* issue 13: load balancers, status, log format */
    K_TRUSTED_PROXY,
    K_REAL_IP_HEADER,
    K_LOG_FORMAT,
    K_STATUS,
    K_UNIX_MODE, /* production (issue 13, opssys) */
    K_UNIX_OWNER,
    K_CHECK,
    K_TLS_CERT, /* HTTPS (issue 10) */
    K_TLS_KEY,
    K_TLS_PORT,
    K_TLS_ONLY,
    K_REDIRECT_HTTP,
    K_HSTS,
    K_T_HANDSHAKE,
    K_SITE, /* sites (issue 22) */
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
    {"fallback", 0, true, K_FALLBACK},
    {"clean-urls", 0, false, K_CLEAN_URLS},
    {"header", 0, true, K_HEADER},
    {"cors", 0, false, K_CORS},
    {"no-server-header", 0, false, K_NO_SERVER_HEADER},
    {"error-page", 0, true, K_ERROR_PAGE},
    {"no-sandbox", 0, false, K_NO_SANDBOX},
    {"group", 0, true, K_GROUP},
    {"chroot", 0, true, K_CHROOT},
    {"help", 'h', false, K_HELP},
    {"version", 'V', false, K_VERSION},
    {"precompressed", 0, true, K_PRECOMPRESSED},
    {"proxy-protocol", 0, false, K_PROXY_PROTOCOL},
    {"trusted-proxy", 0, true, K_TRUSTED_PROXY},
    {"real-ip-header", 0, true, K_REAL_IP_HEADER},
    {"log-format", 0, true, K_LOG_FORMAT},
    {"status", 0, true, K_STATUS},
    {"unix-mode", 0, true, K_UNIX_MODE}, /* production (issue 13, opssys) */
    {"unix-owner", 0, true, K_UNIX_OWNER},
    {"check", 0, false, K_CHECK},
#ifndef PITH_TINY /* refused by name in pith-tiny (tiny_refused), never looked up */
    {"tls-cert", 0, true, K_TLS_CERT},
    {"tls-key", 0, true, K_TLS_KEY},
    {"tls-port", 0, true, K_TLS_PORT},
    {"tls-only", 0, false, K_TLS_ONLY},
    {"redirect-http", 0, false, K_REDIRECT_HTTP},
    {"hsts", 0, true, K_HSTS},
    {"timeout-handshake", 0, true, K_T_HANDSHAKE},
#endif
    {"site", 0, true, K_SITE},
};

/* ---- pith-tiny (the freestanding build): flags that need a library -------------
 * pith-tiny has no libc and links no library, so it refuses, with exit 2
 * and the reason, every flag of the full build whose feature needs one.
 * Listed by name, so a flag is refused with the right words whether or not
 * this build's table above has it yet. A branch adding such a flag adds
 * its name here. `--io uring` is refused in apply_flag. */
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
    {"precompressed",
     "precompressed variants are left out, like pith compress (zlib, brotli, zstd)"},
};

static const char *tiny_refuses(struct span name)
{
    for (size_t i = 0; i < ARRAY_LEN(tiny_refused); i++)
        if (span_eq_cstr(name, tiny_refused[i].name))
            return tiny_refused[i].why;
    return NULL;
}
#endif

struct parser {
    struct config *cfg;
    struct config_site *cur; /* where a site option goes: the top level */
    struct buf reason;
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

/* ---- load balancers, status, log format (issue 13) ---------------------------- */

static bool is_token(const char *v)
{
    static const char tchar[] = "!#$%&'*+-.^_`|~";
    for (const char *p = v; *p; p++)
        if (!(ascii_is_digit(*p) || (ascii_lower(*p) >= 'a' && ascii_lower(*p) <= 'z') ||
              mem_find(tchar, sizeof tchar - 1, *p) < sizeof tchar - 1))
            return false;
    return v[0] != '\0';
}

/* "127.0.0.1:9100" or "[::1]:9100": an address, a colon, a port. The
 * address itself is checked where it is bound (start.c). */
static bool status_addr_valid(const char *v)
{
    size_t n = cstr_len(v), colon = n;
    while (colon > 0 && v[colon - 1] != ':')
        colon--;
    uint64_t port;
    if (colon < 2 || !u64_parse(span_make(v + colon, n - colon), &port) || port > 65535)
        return false;
    /* An IPv6 address needs its brackets, or its last group is the port. */
    return v[0] == '[' ? v[colon - 2] == ']' : mem_find(v, colon - 1, ':') == colon - 1;
}

static enum config_verdict apply_opsnet_flag(struct parser *ps, const struct option *o,
                                             const char *v)
{
    struct config *c = ps->cfg;
    struct net_cidr cidr;
    switch (o->kind) {
    case K_PROXY_PROTOCOL: c->proxy_protocol = true; break;
    case K_TRUSTED_PROXY: {
        int r = net_cidr_parse(span_make(v, cstr_len(v)), &cidr);
        if (r == NET_CIDR_HOST_BITS)
            return fail(ps, "--trusted-proxy: '", v, "' has bits set past its prefix length");
        if (r < 0)
            return fail(ps, "--trusted-proxy: '", v, "' is not an IP address or CIDR prefix");
        if (c->ntrusted == CONFIG_TRUSTED_MAX)
            return fail(ps, "--trusted-proxy: more than 32 prefixes", "", "");
        c->trusted[c->ntrusted++] = v;
        break;
    }
    case K_REAL_IP_HEADER:
        if (!is_token(v))
            return fail(ps, "--real-ip-header: '", v, "' is not a header field name");
        c->real_ip_header = v;
        break;
    case K_LOG_FORMAT:
        if (!span_eq_cstr(span_make(v, cstr_len(v)), "combined") &&
            !span_eq_cstr(span_make(v, cstr_len(v)), "json"))
            return fail(ps, "--log-format: '", v, "' is not one of combined, json");
        c->log_format = v;
        break;
    case K_STATUS:
        if (!status_addr_valid(v))
            return fail(ps, "--status: '", v,
                        "' is not ADDR:PORT (e.g. 127.0.0.1:9100 or [::1]:9100)");
        c->status = v;
        break;
    default: break;
    }
    return CONFIG_RUN;
}

/* What only makes sense together. */
static enum config_verdict check_opsnet(struct parser *ps)
{
    const struct config *c = ps->cfg;
    if (c->proxy_protocol && !c->ntrusted)
        return fail(ps, "--proxy-protocol needs at least one --trusted-proxy", "", "");
    if (c->real_ip_header && !c->ntrusted)
        return fail(ps, "--real-ip-header needs at least one --trusted-proxy", "", "");
    return CONFIG_RUN;
}

static void opsnet_settings(const struct config *cfg, struct settings *out)
{
    out->proxy_protocol = cfg->proxy_protocol;
    for (unsigned i = 0; i < cfg->ntrusted; i++)
        net_cidr_parse(span_make(cfg->trusted[i], cstr_len(cfg->trusted[i])), &out->trusted[i]);
    out->ntrusted = cfg->ntrusted;
    if (cfg->real_ip_header)
        out->real_ip_header = span_make(cfg->real_ip_header, cstr_len(cfg->real_ip_header));
    out->log_json = cfg->log_format && cfg->log_format[0] == 'j';
    out->status = cfg->status;
}

/* --unix-mode: 1 to 4 octal digits, at most 0777 (no set-id or sticky bits:
 * they mean nothing on a socket). */
static bool octal_mode(struct parser *ps, const char *v, unsigned *out)
{
    unsigned m = 0;
    size_t n = cstr_len(v);
    for (size_t i = 0; i < n && n <= 4; i++)
        m = v[i] >= '0' && v[i] <= '7' ? m * 8 + (unsigned)(v[i] - '0') : 01000;
    if (n >= 1 && n <= 4 && m <= 0777) {
        *out = m;
        return true;
    }
    fail(ps, "--unix-mode: '", v, "' is not an octal mode from 0 to 0777 (e.g. 0660)");
    return false;
}

/* The options of issue 13 (systemd, Unix sockets, upgrades), in one place. */
static bool apply_production_flag(struct parser *ps, const struct option *o, const char *v)
{
    struct config *c = ps->cfg;
    switch (o->kind) {
    case K_UNIX_MODE: return octal_mode(ps, v, &c->unix_mode);
    case K_UNIX_OWNER: return nonempty(ps, o->name, v) && (c->unix_owner = v);
    case K_CHECK: c->check = true; return true;
    default: return true;
    }
}

/* The site and lockdown options (issue 14). */
static enum config_verdict apply_site_flag(struct parser *ps, const struct option *o, const char *v)
{
    struct config *c = ps->cfg;
    struct site *site = &ps->cur->site;
    struct span sv = span_make(v ? v : "", v ? cstr_len(v) : 0);
    site_error e = NULL;
    switch (o->kind) {
    case K_FALLBACK: e = site_set_fallback(site, sv); break;
    case K_CLEAN_URLS: site->clean_urls = true; break;
    case K_HEADER: e = site_add_header(site, sv); break;
    case K_CORS: site->cors = true; break;
    case K_NO_SERVER_HEADER: site->no_server_header = true; break;
    case K_ERROR_PAGE: e = site_add_page(site, sv); break;
    case K_NO_SANDBOX: c->no_sandbox = true; break;
    case K_GROUP: return nonempty(ps, o->name, v) && (c->group = v) ? CONFIG_RUN : CONFIG_USAGE;
    case K_CHROOT:
        return nonempty(ps, o->name, v) && (c->chroot_dir = v) ? CONFIG_RUN : CONFIG_USAGE;
    default: break;
    }
    if (!e)
        return CONFIG_RUN;
    buf_put_cstr(&ps->reason, "--");
    buf_put_cstr(&ps->reason, o->name);
    buf_put_cstr(&ps->reason, ": '");
    put_piece(ps, v);
    buf_put_cstr(&ps->reason, "': ");
    buf_put_cstr(&ps->reason, e);
    return CONFIG_USAGE;
}

/* Options that only make sense together, checked once all are known. */
static enum config_verdict check_site_flags(struct parser *ps)
{
    const struct config *c = ps->cfg;
    site_error e = site_check(&c->top.site);
    if (e)
        return fail(ps, e, "", "");
    if (c->group && !c->user)
        return fail(ps, "--group needs --user", "", "");
    if (c->chroot_dir && !c->user)
        return fail(ps, "--chroot needs --user (root can leave a chroot)", "", "");
    return CONFIG_RUN;
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

/* An option of a site's own (issue 22), into ps->cur: the top level, whose
 * values every site starts from. */
static enum config_verdict apply_site_option(struct parser *ps, const struct option *o,
                                             const char *v)
{
    struct config_site *c = ps->cur;
    bool ok = true;
    switch (o->kind) {
    case K_MAX_AGE: ok = number(ps, o->name, v, 0, 315360000, &c->max_age); break;
    case K_ROOT:
        if (ps->cfg->have_root)
            return fail(ps, "ROOT given twice ('", v, "')");
        ok = nonempty(ps, o->name, v);
        c->root = v;
        ps->cfg->have_root = true;
        break;
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
    case K_NO_LISTING: c->listing = false; break;
    case K_FOLLOW: c->follow_symlinks = true; break;
    case K_PRECOMPRESSED: ok = nonempty(ps, o->name, v) && (c->precompressed = v); break;
    default: return apply_site_flag(ps, o, v);
    }
    return ok ? CONFIG_RUN : CONFIG_USAGE;
}

/* --site NAMES=ROOT: kept as given; the site is made once the top level is
 * complete (check_sites), since it starts from the top level's options. */
static enum config_verdict add_site(struct parser *ps, const char *v)
{
    struct config *c = ps->cfg;
    size_t n = cstr_len(v), eq = mem_find(v, n, '=');
    if (eq == 0 || eq >= n - 1)
        return fail(ps, "--site: '", v,
                    "' is not NAMES=ROOT (e.g. 'example.com,www.example.com=/srv/www')");
    if (c->nsites == CONFIG_SITES_MAX)
        return fail(ps, "--site: more than 64 sites", "", "");
    c->sites[c->nsites++].spec = v;
    return CONFIG_RUN;
}

static enum config_verdict apply_flag(struct parser *ps, const struct option *o, const char *v)
{
    struct config *c = ps->cfg;
    bool ok = true;
    switch (o->kind) {
    case K_PORT: ok = number(ps, o->name, v, 0, 65535, &c->port); break;
    case K_WORKERS: ok = number(ps, o->name, v, 1, CONFIG_WORKERS_MAX, &c->workers); break;
    case K_MAX_CONNS: ok = number(ps, o->name, v, 1, CONFIG_MAX_CONNS_MAX, &c->max_conns); break;
    case K_CACHE_SIZE: ok = number(ps, o->name, v, 0, 4096, &c->cache_size_mib); break;
    case K_CACHE_MAX_FILE: ok = number(ps, o->name, v, 0, 1048576, &c->cache_max_file); break;
    case K_CACHE_ENTRIES: ok = number(ps, o->name, v, 0, 1000000, &c->cache_entries); break;
    case K_T_HEADER: ok = number(ps, o->name, v, 1, 3600, &c->timeout_header); break;
    case K_T_KEEPALIVE: ok = number(ps, o->name, v, 1, 3600, &c->timeout_keepalive); break;
    case K_T_SEND: ok = number(ps, o->name, v, 1, 3600, &c->timeout_send); break;
    case K_GRACE: ok = number(ps, o->name, v, 0, 3600, &c->grace); break;
    case K_ADDR: ok = nonempty(ps, o->name, v) && (c->addr = v); break;
    case K_LOG: ok = nonempty(ps, o->name, v) && (c->log = v); break;
    case K_PIDFILE: ok = nonempty(ps, o->name, v) && (c->pidfile = v); break;
    case K_USER: ok = nonempty(ps, o->name, v) && (c->user = v); break;
    case K_IO:
        if (span_eq_cstr(span_make(v, cstr_len(v)), "auto"))
            c->io = CONFIG_IO_AUTO;
        else if (span_eq_cstr(span_make(v, cstr_len(v)), "epoll"))
            c->io = CONFIG_IO_EPOLL;
        else if (span_eq_cstr(span_make(v, cstr_len(v)), "uring"))
#ifdef PITH_TINY
            return fail(ps, "--io uring: not in pith-tiny (io_uring needs liburing); ",
                        "use --io epoll or the full build", "");
#else
            c->io = CONFIG_IO_URING;
#endif
        else
            return fail(ps, "--io: '", v, "' is not one of auto, epoll, uring");
        break;
    case K_DAEMON: c->daemon = true; break;
    case K_QUIET: c->quiet = true; break;
    case K_HELP: return CONFIG_HELP;
    case K_VERSION: return CONFIG_VERSION;
    case K_PROXY_PROTOCOL:
    case K_TRUSTED_PROXY:
    case K_REAL_IP_HEADER:
    case K_LOG_FORMAT:
    case K_STATUS: return apply_opsnet_flag(ps, o, v);
    case K_UNIX_MODE:
    case K_UNIX_OWNER:
    case K_CHECK: ok = apply_production_flag(ps, o, v); break;
    case K_TLS_CERT:
    case K_TLS_KEY:
    case K_TLS_PORT:
    case K_TLS_ONLY:
    case K_REDIRECT_HTTP:
    case K_HSTS:
    case K_T_HANDSHAKE: /* pith-tiny refuses them before this (tiny_refused): not built there */
        return TLS_BUILT ? apply_tls_flag(ps, o, v) : CONFIG_USAGE;
    case K_SITE: return add_site(ps, v);
    case K_NO_SANDBOX:
    case K_GROUP:
    case K_CHROOT: return apply_site_flag(ps, o, v);
    default: return apply_site_option(ps, o, v);
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
    /* Field by field: the struct is large (its sites), and a compound
     * literal would be built on the stack first. */
    mem_zero(c, sizeof *c);
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
#ifdef PITH_TINY
        const char *why = tiny_refuses(span_make(arg + 2, eq));
        if (why) {
            fail(ps, "--", arg + 2, ": not in pith-tiny (");
            return fail(ps, why, "); use the full build", "");
        }
#endif
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

/* ---- sites (issue 22) ---------------------------------------------------------- */

/* "--site 'SPEC'" at the front of a message about that site. */
static void site_where(struct parser *ps, const struct config_site *site)
{
    buf_put_cstr(&ps->reason, "--site '");
    put_piece(ps, site->spec);
    buf_put_cstr(&ps->reason, "': ");
}

/* Each name of site's comma list into the table for serve index i. */
static enum config_verdict add_names(struct parser *ps, struct config_site *site, unsigned i)
{
    struct vhost_table *t = &ps->cfg->hosts;
    const char *p = site->names;
    size_t n = cstr_len(p), at = 0;
    while (at <= n) {
        size_t end = at + mem_find(p + at, n - at, ',');
        struct span name = span_trim_ows(span_make(p + at, end - at));
        vhost_error e = name.n ? vhost_add(t, name, i) : "an empty name in the list";
        if (e) {
            site_where(ps, site);
            if (name.n) {
                buf_put_char(&ps->reason, '\'');
                buf_put(&ps->reason, name.p, name.n > PIECE_MAX ? PIECE_MAX : name.n);
                buf_put_cstr(&ps->reason, "' ");
            }
            buf_put_cstr(&ps->reason, e);
            return CONFIG_USAGE;
        }
        if (!site->label[0]) {
            struct span lower = vhost_name_text(t, t->n - 1);
            mem_copy(site->label, lower.p, lower.n);
            site->label[lower.n] = '\0';
        }
        at = end + 1;
    }
    return CONFIG_RUN;
}

/* Makes each --site from the top level plus its names and root, puts the
 * default site first (the top level when ROOT was given, else the first
 * site) and fills the name table; two sites may not share a name. */
static enum config_verdict check_sites(struct parser *ps)
{
    struct config *c = ps->cfg;
    c->nserve = 0;
    mem_zero(&c->hosts, sizeof c->hosts);
    if (c->nsites == 0 || c->have_root)
        c->serve[c->nserve++] = &c->top;
    if (c->nserve + c->nsites > SETTINGS_SITES_MAX)
        return fail(ps, "more than 64 sites (ROOT, when given, is one)", "", "");
    for (unsigned i = 0; i < c->nsites; i++) {
        struct config_site *site = &c->sites[i];
        const char *spec = site->spec;
        size_t eq = mem_find(spec, cstr_len(spec), '=');
        *site = c->top;
        site->spec = spec;
        site->names = spec;
        site->root = spec + eq + 1;
        site->label[0] = '\0';
        c->serve[c->nserve] = site;
        /* The names end at the '=' (a comma list is read up to there). */
        char names[1024];
        if (eq >= sizeof names)
            return fail(ps, "--site '", spec, "': the names are longer than 1023 bytes");
        mem_copy(names, spec, eq);
        names[eq] = '\0';
        site->names = names;
        enum config_verdict v = add_names(ps, site, c->nserve);
        site->names = NULL; /* only needed here */
        if (v != CONFIG_RUN)
            return v;
        c->nserve++;
    }
    unsigned dup, other;
    if (!vhost_sort(&c->hosts, &dup, &other)) {
        struct span name = vhost_name_text(&c->hosts, dup);
        unsigned a = c->hosts.name[dup].site;
        site_where(ps, c->serve[a > other ? a : other]);
        buf_put_char(&ps->reason, '\'');
        buf_put_span(&ps->reason, name);
        buf_put_cstr(&ps->reason, "' is a name of another site already (--site '");
        put_piece(ps, c->serve[a > other ? other : a]->spec);
        buf_put_cstr(&ps->reason, "')");
        return CONFIG_USAGE;
    }
    return CONFIG_RUN;
}

enum config_verdict config_parse(int argc, char **argv, unsigned cpus, struct config *cfg,
                                 char *reason, size_t cap)
{
    set_defaults(cfg, cpus);
    struct parser ps = {cfg, &cfg->top, buf_make(reason, cap ? cap - 1 : 0)};
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
            v = fail(&ps, "ROOT given twice ('", arg, "')");
        } else if (arg[0] == '\0') {
            v = fail(&ps, "ROOT is empty", "", "");
        } else {
            cfg->top.root = arg;
            cfg->have_root = true;
        }
    }
    if (v == CONFIG_RUN)
        v = check_opsnet(&ps);
    if (v == CONFIG_RUN)
        v = check_site_flags(&ps);
    if (v == CONFIG_RUN && TLS_BUILT) /* pith-tiny: no TLS flag got this far */
        v = check_tls(&ps);
    if (v == CONFIG_RUN)
        v = check_sites(&ps);
    /* len counts only what was written: never a byte past it. */
    if (cap)
        reason[ps.reason.len] = '\0';
    return v;
}

_Static_assert(CONFIG_IMMUTABLE_MAX == SETTINGS_GLOBS_MAX, "--immutable's bound is the server's");
_Static_assert(CONFIG_TLS_PAIRS_MAX == SETTINGS_TLS_PAIRS_MAX, "the pairs' bound is the server's");
_Static_assert(CONFIG_WORKERS_MAX == SETTINGS_WORKERS_MAX, "--workers' bound is the server's");
_Static_assert(CONFIG_TRUSTED_MAX == SETTINGS_TRUSTED_MAX,
               "--trusted-proxy's bound is the server's");

/* HTTPS (issue 10) */
static void tls_settings(const struct config *cfg, struct settings *out)
{
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
}

/* One site's settings from its options (the top level's where it named
 * none). */
static void site_settings(const struct config_site *c, bool named, struct site_conf *out)
{
    out->root = c->root;
    out->label = named ? c->label : "default";
    out->origin = c->spec;
    out->named = named;
    out->index = c->index;
    out->listing = c->listing;
    out->follow_symlinks = c->follow_symlinks;
    out->nimmutable = c->nimmutable;
    for (unsigned i = 0; i < c->nimmutable; i++)
        out->immutable[i] = c->immutable[i];
    /* precompressed variants (issue 11): "off", a mirror tree, or beside. */
    bool off = c->precompressed &&
               span_eq_cstr(span_make(c->precompressed, cstr_len(c->precompressed)), "off");
    out->precompressed = !off && FILECACHE_VARIANTS; /* pith-tiny: none, not even beside */
    out->precompressed_dir = off ? NULL : c->precompressed;
    out->site = c->site;
    struct buf b = buf_make(out->cache_control, sizeof out->cache_control - 1);
    if (c->max_age == 0) {
        buf_put_cstr(&b, "no-cache");
    } else {
        buf_put_cstr(&b, "max-age=");
        buf_put_u64(&b, c->max_age);
    }
    out->cache_control[b.len] = '\0';
}

void settings_from_config(const struct config *cfg, struct settings *out)
{
    mem_zero(out, sizeof *out);
    out->workers = cfg->workers;
    out->max_conns = cfg->max_conns;
    out->cache_size_mib = cfg->cache_size_mib;
    out->cache_max_file = cfg->cache_max_file;
    out->cache_entries = cfg->cache_entries;
    out->timeout_header = cfg->timeout_header;
    out->timeout_keepalive = cfg->timeout_keepalive;
    out->timeout_send = cfg->timeout_send;
    out->grace = cfg->grace;
    out->log = cfg->log;
    out->pidfile = cfg->pidfile;
    out->user = cfg->user;
    out->quiet = cfg->quiet;
    out->check = cfg->check;
    out->sandbox = !cfg->no_sandbox;
    out->group = cfg->group;
    out->chroot_dir = cfg->chroot_dir;
    opsnet_settings(cfg, out);
    if (TLS_BUILT) /* pith-tiny: HTTPS left out, its settings stay zero */
        tls_settings(cfg, out);
    out->nsites = cfg->nserve;
    for (unsigned i = 0; i < cfg->nserve; i++)
        site_settings(cfg->serve[i], cfg->serve[i] != &cfg->top, &out->sites[i]);
    out->hosts = cfg->hosts;
}

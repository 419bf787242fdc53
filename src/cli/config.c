/* SPDX-License-Identifier: MIT */
/*
 * config.c - argv to struct config (the --help text is in usage.c).
 * libc-free (it uses core's byte helpers) so the freestanding build can
 * share it. Long flags
 * follow darkhttpd's spelling, short ones miniserve's; "--flag=value" and
 * "--flag value" both work; ROOT may stand anywhere, or come as --root.
 */
#include "cli/config.h"
#include "cli/config_internal.h"

#include "core/bytes.h"
#include "core/core.h"
#include "core/glob.h"
#include "core/netaddr.h"
#include "core/target.h"
#include "server/filecache.h"
#include "server/server.h"
#include "server/tls.h"

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
#endif
    {"site", 0, true, K_SITE, SCOPE_SERVER},
    {"config", 0, true, K_CONFIG, SCOPE_CMDLINE},
    {"default", 0, false, K_DEFAULT, SCOPE_BLOCK},
    {"max-conns-per-client", 0, true, K_MAX_CONNS_PER_CLIENT, SCOPE_SITE},
#ifndef PITH_TINY /* refused by name in pith-tiny (tiny_refused) */
    {"auth", 0, true, K_AUTH, SCOPE_SITE},
#endif
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
    {"http2", "HTTP/2 needs nghttp2"},
    {"h2-max-streams", "HTTP/2 needs nghttp2"},
    {"precompressed",
     "precompressed variants are left out, like pith compress (zlib, brotli, zstd)"},
    {"auth", "basic auth needs libxcrypt"},
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

enum config_verdict config_fail(struct parser *ps, const char *a, const char *b, const char *c)
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
    config_fail(ps, "--", flag, ": the value is empty");
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
            return config_fail(ps, "--trusted-proxy: '", v,
                               "' has bits set past its prefix length");
        if (r < 0)
            return config_fail(ps, "--trusted-proxy: '", v,
                               "' is not an IP address or CIDR prefix");
        if (c->ntrusted == CONFIG_TRUSTED_MAX)
            return config_fail(ps, "--trusted-proxy: more than 32 prefixes", "", "");
        c->trusted[c->ntrusted++] = v;
        break;
    }
    case K_REAL_IP_HEADER:
        if (!is_token(v))
            return config_fail(ps, "--real-ip-header: '", v, "' is not a header field name");
        c->real_ip_header = v;
        break;
    case K_LOG_FORMAT:
        if (!span_eq_cstr(span_make(v, cstr_len(v)), "combined") &&
            !span_eq_cstr(span_make(v, cstr_len(v)), "json"))
            return config_fail(ps, "--log-format: '", v, "' is not one of combined, json");
        c->log_format = v;
        break;
    case K_STATUS:
        if (!status_addr_valid(v))
            return config_fail(ps, "--status: '", v,
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
        return config_fail(ps, "--proxy-protocol needs at least one --trusted-proxy", "", "");
    if (c->real_ip_header && !c->ntrusted)
        return config_fail(ps, "--real-ip-header needs at least one --trusted-proxy", "", "");
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
    config_fail(ps, "--unix-mode: '", v, "' is not an octal mode from 0 to 0777 (e.g. 0660)");
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
        return config_fail(ps, e, "", "");
    if (c->group && !c->user)
        return config_fail(ps, "--group needs --user", "", "");
    if (c->chroot_dir && !c->user)
        return config_fail(ps, "--chroot needs --user (root can leave a chroot)", "", "");
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
        bool cert = o->kind == K_TLS_CERT, top = ps->cur == &c->top;
        struct config_site *site = ps->cur;
        unsigned *n = top ? (cert ? &c->ntls_cert : &c->ntls_key)
                          : (cert ? &site->ntls_cert : &site->ntls_key);
        if (!nonempty(ps, o->name, v))
            return CONFIG_USAGE;
        if (*n == (top ? CONFIG_TLS_PAIRS_MAX : CONFIG_SITE_PAIRS_MAX))
            return config_fail(ps, "--", o->name,
                               top ? ": more than 8 certificate/key pairs"
                                   : ": more than 4 certificate/key pairs in one site");
        if (top)
            (cert ? c->tls_cert : c->tls_key)[(*n)++] = v;
        else
            (cert ? site->tls_cert : site->tls_key)[(*n)++] = v;
        break;
    }
    case K_TLS_PORT: ok = number(ps, o->name, v, 0, 65535, &c->tls_port); break;
    case K_HSTS: ok = number(ps, o->name, v, 1, 63072000, &c->hsts); break;
    case K_T_HANDSHAKE: ok = number(ps, o->name, v, 1, 3600, &c->timeout_handshake); break;
    case K_TLS_ONLY: c->tls_only = true; break;
    case K_REDIRECT_HTTP: c->redirect_http = true; break;
    case K_HTTP2:
        if (!span_eq_cstr(span_make(v, cstr_len(v)), "on") &&
            !span_eq_cstr(span_make(v, cstr_len(v)), "off"))
            return config_fail(ps, "--http2: '", v, "' is not on or off");
        c->http2 = v[1] == 'n';
        break;
    case K_H2_MAX_STREAMS: ok = number(ps, o->name, v, 1, 1000, &c->h2_max_streams); break;
    default: break;
    }
    return ok ? CONFIG_RUN : CONFIG_USAGE;
}

static void site_where(struct parser *ps, const struct config_site *site);

unsigned config_tls_pairs(const struct config *c)
{
    unsigned n = c->ntls_cert;
    for (unsigned i = 0; i < c->nsites; i++)
        n += c->sites[i].ntls_cert;
    return n;
}

static enum config_verdict check_tls(struct parser *ps)
{
    const struct config *c = ps->cfg;
    if (c->ntls_cert != c->ntls_key)
        return config_fail(
            ps, "--tls-cert and --tls-key must come in pairs (one key per certificate)", "", "");
    for (unsigned i = 0; i < c->nsites; i++)
        if (c->sites[i].ntls_cert != c->sites[i].ntls_key) {
            site_where(ps, &c->sites[i]);
            return config_fail(ps,
                               "tls-cert and tls-key must come in pairs (one key per "
                               "certificate)",
                               "", "");
        }
    if (config_tls_pairs(c) > SETTINGS_TLS_PAIRS_MAX)
        return config_fail(ps, "more than 64 certificate/key pairs in all", "", "");
    if (config_tls_pairs(c) == 0 && (c->tls_only || c->redirect_http || c->hsts))
        return config_fail(ps,
                           c->tls_only        ? "--tls-only"
                           : c->redirect_http ? "--redirect-http"
                                              : "--hsts",
                           " needs --tls-cert and --tls-key", "");
    if (c->tls_only && c->redirect_http)
        return config_fail(ps, "--redirect-http needs the plain listener that --tls-only drops", "",
                           "");
    if (config_tls_pairs(c) && !c->tls_only && c->port == c->tls_port && c->port != 0)
        return config_fail(ps, "--port and --tls-port must differ", "", "");
    return CONFIG_RUN;
}

#ifndef PITH_TINY
static enum config_verdict add_auth(struct parser *ps, const char *v);
#endif

/* An option of a site's own (issue 22), into ps->cur: the top level, whose
 * values every site starts from. */
static enum config_verdict apply_site_option(struct parser *ps, const struct option *o,
                                             const char *v)
{
    struct config_site *c = ps->cur;
    bool ok = true;
    switch (o->kind) {
    case K_MAX_AGE: ok = number(ps, o->name, v, 0, 315360000, &c->max_age); break;
    case K_MAX_CONNS_PER_CLIENT:
        ok = number(ps, o->name, v, 0, CONFIG_MAX_CONNS_MAX, &c->max_conns_per_client);
        break;
#ifndef PITH_TINY
    case K_AUTH: return add_auth(ps, v);
#endif
    case K_ROOT:
        if (c == &ps->cfg->top ? ps->cfg->have_root : c->own_root)
            return config_fail(ps, "ROOT given twice ('", v, "')");
        ok = nonempty(ps, o->name, v);
        c->root = v;
        c->own_root = true;
        if (c == &ps->cfg->top)
            ps->cfg->have_root = true;
        break;
    case K_INDEX:
        ok = nonempty(ps, o->name, v);
        if (ok && (mem_find(v, cstr_len(v), '/') < cstr_len(v) || v[0] == '.'))
            return config_fail(ps, "--index: '", v, "' must be a plain file name");
        c->index = v;
        break;
    case K_IMMUTABLE:
        if (!glob_valid(span_make(v, cstr_len(v))))
            return config_fail(ps, "--immutable: '", v, "' is not a valid pattern");
        if (c->nimmutable == CONFIG_IMMUTABLE_MAX)
            return config_fail(ps, "--immutable: more than 8 patterns", "", "");
        c->immutable[c->nimmutable++] = v;
        break;
    case K_NO_LISTING: c->listing = false; break;
    case K_FOLLOW: c->follow_symlinks = true; break;
    case K_PRECOMPRESSED: ok = nonempty(ps, o->name, v) && (c->precompressed = v); break;
    default: return apply_site_flag(ps, o, v);
    }
    return ok ? CONFIG_RUN : CONFIG_USAGE;
}

/* ---- basic auth (issue 22) ------------------------------------------------------ */

#ifndef PITH_TINY
/* A NUL-terminated copy of s that lives as long as the process. */
static const char *keep(struct span s)
{
    static char pool[32768];
    static size_t used;
    if (used + s.n + 1 > sizeof pool)
        return NULL;
    char *p = pool + used;
    mem_copy(p, s.p, s.n);
    p[s.n] = '\0';
    used += s.n + 1;
    return p;
}

static bool realm_ok(struct span r)
{
    if (r.n == 0 || r.n > 64)
        return false;
    for (size_t i = 0; i < r.n; i++)
        if (r.p[i] < 0x20 || r.p[i] > 0x7e || r.p[i] == '"' || r.p[i] == '\\')
            return false;
    return true;
}

/* "PREFIX FILE [REALM]" (or "PREFIX=FILE"): a path prefix a request's
 * normalized path is compared with, the password file, and the realm the
 * 401 names (default "pith"). */
static enum config_verdict add_auth(struct parser *ps, const char *v)
{
    struct config_site *c = ps->cur;
    struct span all = span_make(v, cstr_len(v));
    size_t cut = 0;
    while (cut < all.n && all.p[cut] != ' ' && all.p[cut] != '\t' && all.p[cut] != '=')
        cut++;
    struct span prefix = span_make(v, cut);
    struct span rest =
        span_trim_ows(span_make(v + cut + (cut < all.n), all.n - cut - (cut < all.n)));
    size_t fe = 0;
    while (fe < rest.n && rest.p[fe] != ' ' && rest.p[fe] != '\t')
        fe++;
    struct span file = span_make(rest.p, fe),
                realm = span_trim_ows(span_make(rest.p + fe, rest.n - fe));
    char norm[SITE_PATH_MAX];
    unsigned flags;
    long n = prefix.n ? target_normalize(prefix, norm, sizeof norm, &flags) : -400;
    if (n == -403)
        return config_fail(ps, "--auth: '", v, "': the prefix names a dotfile");
    if (n < 0 || !file.n)
        return config_fail(ps, "--auth: '", v,
                           "' is not PREFIX FILE [REALM] (e.g. '/private/ /etc/pith/users')");
    if (realm.n && !realm_ok(realm))
        return config_fail(ps, "--auth: '", v,
                           "': a realm is 1 to 64 visible ASCII characters, without '\"' and '\\'");
    if (c->nauth == CONFIG_AUTH_MAX)
        return config_fail(ps, "--auth: more than 8 prefixes in one site", "", "");
    struct config_auth *a = &c->auth[c->nauth];
    a->prefix = keep(prefix);
    a->file = keep(file);
    a->realm = realm.n ? keep(realm) : "pith";
    a->where = keep(ps->where ? span_make(ps->where, cstr_len(ps->where)) : SPAN_LIT("--auth"));
    if (!a->prefix || !a->file || !a->realm || !a->where)
        return config_fail(ps, "--auth: too many rules in all", "", "");
    c->nauth++;
    return CONFIG_RUN;
}
#endif

/* --site NAMES=ROOT: kept as given; the site is made once the top level is
 * complete (make_sites), since it starts from the top level's options. */
static enum config_verdict add_site(struct parser *ps, const char *v)
{
    struct config *c = ps->cfg;
    size_t n = cstr_len(v), eq = mem_find(v, n, '=');
    if (eq == 0 || eq >= n - 1)
        return config_fail(ps, "--site: '", v,
                           "' is not NAMES=ROOT (e.g. 'example.com,www.example.com=/srv/www')");
    if (c->nsites == CONFIG_SITES_MAX)
        return config_fail(ps, "--site: more than 64 sites", "", "");
    c->sites[c->nsites++].spec = v;
    return CONFIG_RUN;
}

enum config_verdict config_apply(struct parser *ps, const struct option *o, const char *v)
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
            return config_fail(ps, "--io uring: not in pith-tiny (io_uring needs liburing); ",
                               "use --io epoll or the full build", "");
#else
            c->io = CONFIG_IO_URING;
#endif
        else
            return config_fail(ps, "--io: '", v, "' is not one of auto, epoll, uring");
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
    case K_HTTP2:
    case K_H2_MAX_STREAMS:
    case K_T_HANDSHAKE: /* pith-tiny refuses them before this (tiny_refused): not built there */
        return TLS_BUILT ? apply_tls_flag(ps, o, v) : CONFIG_USAGE;
    case K_SITE: return add_site(ps, v);
    case K_CONFIG:
        if (c->config_path)
            return config_fail(ps, "--config given twice ('", v, "')");
        ok = nonempty(ps, o->name, v) && (c->config_path = v);
        break;
    case K_DEFAULT: ps->cur->is_default = true; break;
    case K_NO_SANDBOX:
    case K_GROUP:
    case K_CHROOT: return apply_site_flag(ps, o, v);
    default: return apply_site_option(ps, o, v);
    }
    return ok ? CONFIG_RUN : CONFIG_USAGE;
}

void config_apply_off(struct parser *ps, const struct option *o)
{
    struct config *c = ps->cfg;
    struct config_site *site = ps->cur;
    switch (o->kind) {
    case K_NO_LISTING: site->listing = true; break;
    case K_FOLLOW: site->follow_symlinks = false; break;
    case K_CLEAN_URLS: site->site.clean_urls = false; break;
    case K_CORS: site->site.cors = false; break;
    case K_NO_SERVER_HEADER: site->site.no_server_header = false; break;
    case K_DEFAULT: site->is_default = false; break;
    case K_DAEMON: c->daemon = false; break;
    case K_QUIET: c->quiet = false; break;
    case K_NO_SANDBOX: c->no_sandbox = false; break;
    case K_PROXY_PROTOCOL: c->proxy_protocol = false; break;
    case K_TLS_ONLY: c->tls_only = false; break;
    case K_REDIRECT_HTTP: c->redirect_http = false; break;
    default: break; /* the command line's own flags never come from a file */
    }
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

/* ---- sites (issue 22) ---------------------------------------------------------- */

/* Where a site was given, at the front of a message about it. */
static void site_where(struct parser *ps, const struct config_site *site)
{
    buf_put_cstr(&ps->reason, site->where);
    buf_put_cstr(&ps->reason, ": ");
}

/* Each name of site's comma list (site->names, ending at its NUL or at
 * `len`) into the table for serve index i. */
static enum config_verdict add_names(struct parser *ps, struct config_site *site, size_t len,
                                     unsigned i)
{
    struct vhost_table *t = &ps->cfg->hosts;
    const char *p = site->names;
    size_t at = 0;
    while (at <= len) {
        size_t end = at + mem_find(p + at, len - at, ',');
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

/* Each site as the top level plus what it names itself: --site its names
 * and root, a block of the file its options (config_file_site). */
static void make_sites(struct parser *ps)
{
    static char wheres[CONFIG_SITES_MAX][320];
    struct config *c = ps->cfg;
    for (unsigned i = 0; i < c->nsites; i++) {
        struct config_site *site = &c->sites[i], own = *site;
        *site = c->top;
        site->spec = own.spec;
        site->names = own.names;
        site->file = own.file;
        site->line = own.line;
        site->opt_first = own.opt_first;
        site->nopts = own.nopts;
        site->label[0] = '\0';
        site->own_root = false;
        site->is_default = false;
        site->where = wheres[i];
        struct buf w = buf_make(wheres[i], sizeof wheres[i] - 1);
        if (site->file) {
            buf_put_cstr(&w, site->file);
            buf_put_char(&w, ':');
            buf_put_u64(&w, site->line);
            buf_put_cstr(&w, ": site ");
            buf_put(&w, site->names, cstr_len(site->names) > 128 ? 128 : cstr_len(site->names));
            config_file_site(ps, site);
        } else {
            buf_put_cstr(&w, "--site '");
            buf_put(&w, own.spec, cstr_len(own.spec) > 200 ? 200 : cstr_len(own.spec));
            buf_put_char(&w, '\'');
            site->names = own.spec; /* up to its '=' */
            site->root = own.spec + mem_find(own.spec, cstr_len(own.spec), '=') + 1;
        }
        wheres[i][w.full ? 0 : w.len] = '\0';
    }
}

/* The default site goes first: ROOT when it was given (or there are no
 * sites), else the one marked "default", else the first. */
static enum config_verdict order_sites(struct parser *ps)
{
    struct config *c = ps->cfg;
    const struct config_site *marked = NULL;
    for (unsigned i = 0; i < c->nsites; i++) {
        const struct config_site *site = &c->sites[i];
        if (!site->is_default)
            continue;
        if (marked || c->have_root) {
            site_where(ps, site);
            buf_put_cstr(&ps->reason, "'default', but ");
            buf_put_cstr(&ps->reason, marked ? marked->where : "ROOT"); /* bounded */
            return config_fail(ps, " is the default site already", "", "");
        }
        marked = site;
    }
    c->nserve = 0;
    if (c->nsites == 0 || c->have_root)
        c->serve[c->nserve++] = &c->top;
    if (c->nserve + c->nsites > SETTINGS_SITES_MAX)
        return config_fail(ps, "more than 64 sites (ROOT, when given, is one)", "", "");
    if (marked)
        c->serve[c->nserve++] = marked;
    for (unsigned i = 0; i < c->nsites; i++)
        if (&c->sites[i] != marked)
            c->serve[c->nserve++] = &c->sites[i];
    return CONFIG_RUN;
}

/* A problem line is complete; the next one starts after it. */
static void next_problem(struct parser *ps)
{
    buf_put_char(&ps->reason, '\n');
    ps->problems++;
}

/* The sites, in the order they are served, and the table of their names;
 * two sites may not share a name. Every site's problems are reported. */
static enum config_verdict check_sites(struct parser *ps)
{
    struct config *c = ps->cfg;
    c->hosts.n = 0; /* its arrays are written as names are added */
    c->hosts.used = 0;
    make_sites(ps);
    if (order_sites(ps) != CONFIG_RUN)
        return CONFIG_USAGE;
    for (unsigned i = 0; i < c->nserve; i++) {
        struct config_site *site = (struct config_site *)c->serve[i];
        if (site == &c->top)
            continue;
        site_error e = site_check(&site->site);
        if (e) {
            site_where(ps, site);
            config_fail(ps, e, "", "");
            next_problem(ps);
        }
        size_t len =
            site->file ? cstr_len(site->names) : mem_find(site->spec, cstr_len(site->spec), '=');
        if (add_names(ps, site, len, i) != CONFIG_RUN)
            next_problem(ps);
    }
    unsigned dup, other;
    if (!ps->problems && !vhost_sort(&c->hosts, &dup, &other)) {
        struct span name = vhost_name_text(&c->hosts, dup);
        unsigned a = c->hosts.name[dup].site;
        site_where(ps, c->serve[a > other ? a : other]);
        buf_put_char(&ps->reason, '\'');
        buf_put_span(&ps->reason, name);
        buf_put_cstr(&ps->reason, "' is a name of another site already (");
        buf_put_cstr(&ps->reason, c->serve[a > other ? other : a]->where); /* bounded */
        buf_put_char(&ps->reason, ')');
        next_problem(ps);
    }
    return ps->problems ? CONFIG_USAGE : CONFIG_RUN;
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
        v = check_sites(&ps);
    if (ps.problems)
        v = CONFIG_USAGE;
    if (v == CONFIG_RUN)
        v = check_opsnet(&ps);
    if (v == CONFIG_RUN)
        v = check_site_flags(&ps);
    if (v == CONFIG_RUN && TLS_BUILT) /* pith-tiny: no TLS flag got this far */
        v = check_tls(&ps);
    /* len counts only what was written: never a byte past it. */
    size_t n = ps.reason.len;
    while (n && reason[n - 1] == '\n')
        n--; /* the file's problems end their lines */
    if (cap)
        reason[n] = '\0';
    return v;
}

_Static_assert(CONFIG_IMMUTABLE_MAX == SETTINGS_GLOBS_MAX, "--immutable's bound is the server's");
_Static_assert(CONFIG_TLS_PAIRS_MAX <= SETTINGS_TLS_PAIRS_MAX, "the pairs' bound is the server's");
_Static_assert(CONFIG_WORKERS_MAX == SETTINGS_WORKERS_MAX, "--workers' bound is the server's");
_Static_assert(CONFIG_TRUSTED_MAX == SETTINGS_TRUSTED_MAX,
               "--trusted-proxy's bound is the server's");

/* HTTPS (issue 10) */
static void tls_settings(const struct config *cfg, struct settings *out)
{
    /* The top level's pairs first (the first is the default), then each
     * site's own in the order sites are served; a site without its own uses
     * the top level's, or all when the top level has none (issue 22). */
    unsigned n = 0;
    for (unsigned i = 0; i < cfg->ntls_cert; i++, n++) {
        out->tls_cert[n] = cfg->tls_cert[i];
        out->tls_key[n] = cfg->tls_key[i];
    }
    for (unsigned k = 0; k < cfg->nserve; k++) {
        const struct config_site *site = cfg->serve[k];
        struct site_conf *sc = &out->sites[k];
        sc->tls_first = site->ntls_cert ? n : 0;
        for (unsigned i = 0; i < site->ntls_cert; i++, n++) {
            out->tls_cert[n] = site->tls_cert[i];
            out->tls_key[n] = site->tls_key[i];
            out->tls_origin[n] = site->where;
        }
        sc->ntls = site->ntls_cert;
    }
    for (unsigned k = 0; k < cfg->nserve; k++)
        if (out->sites[k].ntls == 0)
            out->sites[k].ntls = cfg->ntls_cert ? cfg->ntls_cert : n;
    out->ntls = n;
    out->tls_port = cfg->tls_port;
    out->tls_only = cfg->tls_only;
    out->redirect_http = cfg->redirect_http;
    out->hsts = cfg->hsts;
    struct buf hb = buf_make(out->hsts_value, sizeof out->hsts_value - 1);
    buf_put_cstr(&hb, "max-age=");
    buf_put_u64(&hb, cfg->hsts);
    out->hsts_value[hb.len] = '\0';
    out->timeout_handshake = cfg->timeout_handshake;
    out->http2 = cfg->http2;
    out->h2_max_streams = cfg->h2_max_streams;
}

/* One site's settings from its options (the top level's where it named
 * none). */
static void site_settings(const struct config_site *c, bool named, struct site_conf *out)
{
    out->root = c->root;
    out->label = named ? c->label : "default";
    out->origin = named ? c->where : NULL;
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
    out->max_conns_per_client = c->max_conns_per_client;
    struct buf b = buf_make(out->cache_control, sizeof out->cache_control - 1);
    if (c->max_age == 0) {
        buf_put_cstr(&b, "no-cache");
    } else {
        buf_put_cstr(&b, "max-age=");
        buf_put_u64(&b, c->max_age);
    }
    out->cache_control[b.len] = '\0';
}

/* Each site's basic-auth rules (its own, or the top level's it copied),
 * with their prefixes normalized as a request's path is. */
static void auth_settings(const struct config *cfg, struct settings *out)
{
    for (unsigned k = 0; k < cfg->nserve; k++) {
        const struct config_site *site = cfg->serve[k];
        out->sites[k].auth_first = out->nauth;
        for (unsigned i = 0; i < site->nauth && out->nauth < SETTINGS_AUTH_MAX; i++) {
            const struct config_auth *a = &site->auth[i];
            struct auth_rule *r = &out->auth[out->nauth++];
            unsigned flags;
            long n = target_normalize(span_make(a->prefix, cstr_len(a->prefix)), r->path,
                                      sizeof r->path - 1, &flags);
            r->path_len = n > 0 ? (size_t)n : 0;
            r->path[r->path_len] = '\0';
            r->prefix = a->prefix;
            r->file = a->file;
            r->realm = a->realm;
            r->origin = a->where;
        }
        out->sites[k].nauth = out->nauth - out->sites[k].auth_first;
    }
}

void settings_from_config(const struct config *cfg, struct settings *out)
{
    /* The large tables (sites, names, auth rules) are written where used:
     * out is the server's static settings, zero already (server.h). */
    mem_zero(out, offsetof(struct settings, hosts));
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
    out->config_path = cfg->config_path;
    out->sandbox = !cfg->no_sandbox;
    out->group = cfg->group;
    out->chroot_dir = cfg->chroot_dir;
    opsnet_settings(cfg, out);
    out->nsites = cfg->nserve;
    for (unsigned i = 0; i < cfg->nserve; i++)
        site_settings(cfg->serve[i], cfg->serve[i] != &cfg->top, &out->sites[i]);
    out->hosts.n = cfg->hosts.n; /* the used part only: see above */
    out->hosts.used = cfg->hosts.used;
    mem_copy(out->hosts.name, cfg->hosts.name, cfg->hosts.n * sizeof cfg->hosts.name[0]);
    mem_copy(out->hosts.text, cfg->hosts.text, cfg->hosts.used);
    auth_settings(cfg, out);
    out->max_conns_per_client = cfg->top.max_conns_per_client;
    for (unsigned i = 0; i < out->nsites; i++)
        out->clients_counted = out->clients_counted || out->sites[i].max_conns_per_client;
    out->clients_counted = out->clients_counted || out->max_conns_per_client;
    if (TLS_BUILT) /* pith-tiny: HTTPS left out, its settings stay zero */
        tls_settings(cfg, out);
}

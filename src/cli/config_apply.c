/* SPDX-License-Identifier: MIT */
/*
 * config_apply.c - one option's value, checked and stored (config_apply),
 * for the command line and the configuration file alike: numbers in their
 * range, names, addresses, modes, patterns, --auth rules and --site specs,
 * each failure a line of the reason naming the flag. What needs several
 * options together is checked afterwards (config_check.c).
 */
#include "cli/config_internal.h"

#include "core/bytes.h"
#include "core/core.h"
#include "core/glob.h"
#include "core/netaddr.h"
#include "core/target.h"
#include "http3/h3.h"
#include "tls/tls.h"

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
    config_put_piece(ps, flag);
    buf_put_cstr(&ps->reason, ": '");
    config_put_piece(ps, value);
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
    config_put_piece(ps, v);
    buf_put_cstr(&ps->reason, "': ");
    buf_put_cstr(&ps->reason, e);
    return CONFIG_USAGE;
}

/* --acme EMAIL (issue 35): an address the CA may write to about the
 * account (expiry notices); local@domain, visible ASCII, no ',' (the
 * contact is a mailto: URL in a JSON list). */
static bool email_ok(const char *v)
{
    size_t n = cstr_len(v), at = mem_find(v, n, '@');
    if (at == 0 || at + 1 >= n || mem_find(v + at + 1, n - at - 1, '@') < n - at - 1)
        return false;
    for (size_t i = 0; i < n; i++)
        if (v[i] <= ' ' || v[i] > '~' || v[i] == ',' || v[i] == '"' || v[i] == '\\' ||
            v[i] == '<' || v[i] == '>')
            return false;
    return n <= 254;
}

/* on or off, into *to; false after saying why. */
static bool on_off(struct parser *ps, const char *flag, const char *v, bool *to)
{
    struct span s = span_make(v, cstr_len(v));
    if (!span_eq_cstr(s, "on") && !span_eq_cstr(s, "off")) {
        config_fail(ps, flag, v, "' is not on or off");
        return false;
    }
    *to = v[1] == 'n';
    return true;
}

/* HTTP/3 (issue 34). A build without ngtcp2 and nghttp3 takes --http3 off
 * (what it does anyway) and refuses on, naming what it lacks. */
static enum config_verdict apply_h3_flag(struct parser *ps, const struct option *o, const char *v)
{
    struct config *c = ps->cfg;
    bool on = false;
    switch (o->kind) {
    case K_HTTP3:
        if (!on_off(ps, "--http3: '", v, &on))
            return CONFIG_USAGE;
        if (on && !H3_BUILT)
            return config_fail(ps, "--http3 on: this pith was built without HTTP/3; it needs ",
                               H3_PACKAGES, "");
        c->http3 = on;
        return CONFIG_RUN;
    case K_H3_RETRY:
        if (!on_off(ps, "--h3-retry: '", v, &c->h3_retry))
            return CONFIG_USAGE;
        return CONFIG_RUN;
    default:
        return number(ps, o->name, v, 0, 31536000, &c->h3_alt_svc_max_age) ? CONFIG_RUN
                                                                           : CONFIG_USAGE;
    }
}

static enum config_verdict apply_acme_flag(struct parser *ps, const struct option *o, const char *v)
{
    struct config *c = ps->cfg;
    if (!nonempty(ps, o->name, v))
        return CONFIG_USAGE;
    switch (o->kind) {
    case K_ACME:
        if (!email_ok(v))
            return config_fail(ps, "--acme: '", v, "' is not an email address (you@example.com)");
        c->acme_email = v;
        break;
    case K_ACME_CA:
        /* RFC 8555 §6.1: the API is HTTPS only. */
        if (cstr_len(v) <= 8 || !mem_eq(v, "https://", 8) || cstr_len(v) > 512)
            return config_fail(ps, "--acme-ca: '", v, "' is not an https:// URL");
        c->acme_ca = v;
        break;
    case K_ACME_CA_ROOT: c->acme_ca_root = v; break;
    case K_ACME_DIR:
        if (cstr_len(v) > CONFIG_ACME_DIR_MAX)
            return config_fail(ps, "--acme-dir: '", v, "' is longer than 200 bytes");
        c->acme_dir = v;
        break;
    default: break;
    }
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
    case K_HTTP3:
    case K_H3_RETRY:
    case K_H3_ALT_SVC_MAX_AGE: return apply_h3_flag(ps, o, v);
    case K_ACME:
    case K_ACME_CA:
    case K_ACME_CA_ROOT:
    case K_ACME_DIR: return apply_acme_flag(ps, o, v);
    default: break;
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
    case K_HTTP3:
    case K_H3_RETRY:
    case K_H3_ALT_SVC_MAX_AGE:
    case K_ACME:
    case K_ACME_CA:
    case K_ACME_CA_ROOT:
    case K_ACME_DIR:
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

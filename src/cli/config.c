/* SPDX-License-Identifier: MIT */
/*
 * config.c - the vocabulary every part of the option parser shares: the
 * option table and its lookup (long and short names), the options
 * pith-tiny refuses by name, and the reason's pieces (config_fail). The
 * walk over the command line and the order of steps are config_parse.c's;
 * what one option's value means is config_apply.c's; the checks that need
 * every option (and the sites) are config_check.c's; the configuration
 * file is config_file.c's; the server's settings from the result are
 * config_settings.c's; the --help text is usage.c's. Each of those uses
 * this file and none of them is used by it. libc-free (it uses core's byte
 * helpers) so the freestanding build can share it.
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

const struct option *config_find_short(char c)
{
    for (size_t i = 0; i < ARRAY_LEN(options); i++)
        if (options[i].short_name && options[i].short_name == c)
            return &options[i];
    return NULL;
}

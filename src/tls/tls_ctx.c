/* SPDX-License-Identifier: MIT */
/*
 * tls_ctx.c - HTTPS's policy and certificates (see tls.h): TLS 1.2 and 1.3
 * only, AEAD suites only (AES-GCM, ChaCha20-Poly1305) with ECDHE over X25519
 * or P-256, the server's order with ChaCha20 first for clients that prefer
 * it, no renegotiation, no compression, no 0-RTT, ALPN http/1.1. One SSL_CTX
 * per pair; SNI picks among them, the first is the default.
 *
 * The master reads the pairs before forking and keeps their PEM texts in a
 * shared mapping, so on HUP a worker can rebuild its contexts without
 * reading files it may no longer be allowed to. This file never touches a
 * connection (tls.c) or the ticket keys (tls_tickets.c).
 */
#include "tls/tls.h"
#include "tls/tls_internal.h"

#include "acme/acme.h"
#include "base/log.h"
#include "base/server.h"
#include "base/worker.h"
#include "core/authority.h"
#include "core/bytes.h"
#include "core/client_hello.h"
#include "core/http_parse.h"
#include "core/vhost.h"
#include "sys/sys.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <string.h>

#define CERT_PEM_MAX (64 * 1024) /* a certificate chain's PEM text */
#define KEY_PEM_MAX  (16 * 1024) /* a private key's */

#define TLS12_CIPHERS                                                                              \
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"                                   \
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"                                   \
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
#define TLS13_SUITES "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"

/* One set of PEM texts, a pair per --tls-cert/--tls-key. */
struct pem_slot {
    uint32_t cert_len[SETTINGS_TLS_PAIRS_MAX], key_len[SETTINGS_TLS_PAIRS_MAX];
    char cert[SETTINGS_TLS_PAIRS_MAX][CERT_PEM_MAX];
    char key[SETTINGS_TLS_PAIRS_MAX][KEY_PEM_MAX];
};

/* The texts the master published, shared with every worker (MAP_SHARED).
 * Two slots: slot[generation & 1] is the published one, which the master
 * (the only writer) never touches; a reload writes the other, and only a
 * reload that builds publishes it, by bumping generation (a release store:
 * the texts are complete before the number says so). A worker copies the
 * published slot, then checks that generation has not moved: the master
 * rewrites that slot only in the reload after the next one, which begins
 * after the next one was published, so an unchanged generation means an
 * unchanged copy (a seqlock with the publication as its write marker). */
struct tls_pems {
    uint32_t generation; /* bumped by each reload the master accepted */
    struct pem_slot slot[2];
};

/* ---- errors ------------------------------------------------------------------------ */

const char *tls_ssl_reason(char *out, size_t cap)
{
    unsigned long e = ERR_peek_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    if (e && ERR_SYSTEM_ERROR(e))
        snprintf(out, cap, "%s", strerror((int)(e & ERR_SYSTEM_MASK))); /* errno */
    else if (r)
        snprintf(out, cap, "%s", r);
    else if (e)
        ERR_error_string_n(e, out, cap);
    else
        snprintf(out, cap, "unknown error");
    ERR_clear_error();
    return out;
}

static void set_err(char *err, size_t cap, const char *flag, const char *file, const char *what)
{
    char reason[200];
    tls_ssl_reason(reason, sizeof reason);
    snprintf(err, cap, "%s %s: %s%s", flag, file, what, reason);
}

/* ---- the policy ------------------------------------------------------------------- */

static int no_passphrase(char *buf, int size, int rwflag, void *u);

/* Marks (SSL app data) a handshake that hello_select() gave a tls-alpn-01
 * challenge certificate (issue 35): nothing but acme-tls/1 is negotiated,
 * the SNI pass leaves its certificate alone, and tls.c closes it as soon
 * as the handshake ends (RFC 8737 §3). */
static const char acme_marker = 1;

static int alpn_select(SSL *s, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned inlen, void *arg)
{
    (void)arg;
    if (SSL_get_app_data(s) == &acme_marker) {
        static const unsigned char acme[] = "\x0a"
                                            "acme-tls/1";
        unsigned char *sel;
        if (SSL_select_next_proto(&sel, outlen, acme, sizeof acme - 1, in, inlen) !=
            OPENSSL_NPN_NEGOTIATED)
            return SSL_TLSEXT_ERR_ALERT_FATAL;
        *out = sel;
        return SSL_TLSEXT_ERR_OK;
    }
    /* The server's list, in its order of preference: h2 first (issue 20)
     * unless --http2 off; a client that offers only http/1.1 gets it. */
    static const unsigned char both[] = "\x02h2\x08http/1.1";
    const unsigned char *ours = both + 3;
    unsigned ours_len = sizeof both - 1 - 3;
    const struct tls_server *ts = SSL_CTX_get_app_data(SSL_get_SSL_CTX(s));
    if (ts && ts->set->http2) {
        ours = both;
        ours_len = sizeof both - 1;
    }
    unsigned char *sel;
    if (SSL_select_next_proto(&sel, outlen, ours, ours_len, in, inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK; /* no common protocol: go on without ALPN */
    *out = sel;
    return SSL_TLSEXT_ERR_OK;
}

/* Among site's pairs (its own, else the top level's, else all: issue 22),
 * the first whose certificate names host (a lowercase name), else the
 * first. With one site and no names that is every pair: as before sites. */
int tls_choose_ctx(const struct tls_server *ts, unsigned site, const char *host)
{
    const struct site_conf *sc = &ts->set->sites[site < ts->set->nsites ? site : 0];
    unsigned first = sc->tls_first, n = sc->ntls;
    if (first >= ts->nctx)
        return 0;
    if (n > ts->nctx - first)
        n = ts->nctx - first;
    for (unsigned i = first; host && n > 1 && i < first + n; i++) {
        /* An ACME pair (issue 35) is for its name, certificate or not yet. */
        if (ts->set->tls_acme[i]) {
            if (strcmp(ts->set->tls_acme[i], host) == 0)
                return (int)i;
            continue;
        }
        X509 *cert = ts->ctx[i] ? SSL_CTX_get0_certificate(ts->ctx[i]) : NULL;
        if (cert && X509_check_host(cert, host, 0, 0, NULL) == 1)
            return (int)i;
    }
    ERR_clear_error();
    return (int)first;
}

int tls_ctx_index(const struct tls_server *ts, const SSL_CTX *ctx)
{
    for (unsigned i = 0; i < ts->nctx; i++)
        if (ts->ctx[i] == ctx)
            return (int)i;
    return 0;
}

/* The pair for SNI name (name_len bytes, not terminated): the site the
 * name picks (the default site when none does), then the pair
 * tls_choose_ctx() gives for that site and name; -1 keeps the current one.
 * key[VHOST_NAME_MAX + 3] receives the name as a lowercase host. */
static int pair_for_name(const struct tls_server *ts, const char *name, size_t name_len, char *key)
{
    long n = vhost_host_key(span_make(name, name_len), key, VHOST_NAME_MAX + 2);
    if (n <= 0)
        return -1;
    key[n] = '\0';
    int site = vhost_lookup(&ts->set->hosts, span_make(key, (size_t)n));
    return tls_choose_ctx(ts, site < 0 ? 0 : (unsigned)site, key);
}

static SSL_CTX *ctx_for_name(const struct tls_server *ts, const char *name, size_t name_len)
{
    char key[VHOST_NAME_MAX + 3];
    int i = pair_for_name(ts, name, name_len, key);
    return i < 0 ? NULL : ts->ctx[i];
}

/* Whether the ClientHello's ALPN list offers acme-tls/1 (RFC 8737 §3):
 * the client's bytes, unparsed yet, read by core/client_hello.c. */
static bool offers_acme_tls(SSL *s)
{
    const unsigned char *p;
    size_t len;
    return SSL_client_hello_get0_ext(s, TLSEXT_TYPE_application_layer_protocol_negotiation, &p,
                                     &len) == 1 &&
           client_hello_alpn_offers(p, len, SPAN_LIT("acme-tls/1"));
}

/* tls-alpn-01 (issue 35): the challenge certificate the ACME process
 * published for the SNI name, on the base context (so that no pair's
 * certificate can be chosen beside it), or the handshake fails. */
static int acme_hello(struct tls_server *ts, SSL *s, const char *host, int *alert)
{
    char cert[4096], key[1024];
    size_t cl = sizeof cert, kl = sizeof key;
    *alert = SSL_AD_NO_APPLICATION_PROTOCOL;
    if (!ts->acme || acme_tlsalpn01(ts->acme, host, cert, &cl, key, &kl) < 0)
        return SSL_CLIENT_HELLO_ERROR;
    BIO *cb = BIO_new_mem_buf(cert, (int)cl), *kb = BIO_new_mem_buf(key, (int)kl);
    X509 *x = cb ? PEM_read_bio_X509(cb, NULL, no_passphrase, NULL) : NULL;
    EVP_PKEY *k = kb ? PEM_read_bio_PrivateKey(kb, NULL, no_passphrase, NULL) : NULL;
    SSL_set_SSL_CTX(s, ts->base);
    bool ok = x && k && SSL_use_certificate(s, x) == 1 && SSL_use_PrivateKey(s, k) == 1;
    X509_free(x);
    EVP_PKEY_free(k);
    BIO_free(cb);
    BIO_free(kb);
    ERR_clear_error();
    if (!ok) {
        *alert = SSL_AD_INTERNAL_ERROR;
        return SSL_CLIENT_HELLO_ERROR;
    }
    SSL_set_app_data(s, (void *)&acme_marker);
    return SSL_CLIENT_HELLO_SUCCESS;
}

/* SNI, first pass: the ClientHello callback runs before OpenSSL looks at
 * the session a client offers (a TLS 1.2 ticket, a TLS 1.3 PSK) and before
 * it makes a new one, so switching the context here gives both the chosen
 * certificate's session id context (ctx_build): a ticket is checked
 * against, and a new session issued under, the certificate the handshake
 * presents. The servername callback (OpenSSL's own parse of the name) comes
 * too late for that; it still acknowledges the extension and picks again,
 * which then changes nothing. */
static int hello_select(SSL *s, int *alert, void *arg)
{
    (void)arg;
    struct tls_server *ts = SSL_CTX_get_app_data(SSL_get_SSL_CTX(s));
    const unsigned char *ext;
    size_t ext_len;
    struct span name;
    char key[VHOST_NAME_MAX + 3];
    if (!ts || SSL_client_hello_get0_ext(s, TLSEXT_TYPE_server_name, &ext, &ext_len) != 1 ||
        !client_hello_sni(ext, ext_len, &name))
        return SSL_CLIENT_HELLO_SUCCESS;
    int i = pair_for_name(ts, name.p, name.n, key);
    if (i >= 0 && ts->acme && offers_acme_tls(s))
        return acme_hello(ts, s, key, alert);
    if (i >= 0 && !ts->ctx[i]) {
        /* An ACME name whose first certificate is still being obtained:
         * the handshake fails with an alert, as caddy's does, rather than
         * show another name's certificate (docs/DESIGN.md §12). */
        *alert = SSL_AD_INTERNAL_ERROR;
        return SSL_CLIENT_HELLO_ERROR;
    }
    SSL_CTX *ctx = i >= 0 ? ts->ctx[i] : NULL;
    if (ctx && SSL_get_SSL_CTX(s) != ctx)
        SSL_set_SSL_CTX(s, ctx);
    return SSL_CLIENT_HELLO_SUCCESS;
}

/* SNI, second pass (see hello_select). */
static int sni_select(SSL *s, int *alert, void *arg)
{
    (void)alert;
    (void)arg;
    struct tls_server *ts = SSL_CTX_get_app_data(SSL_get_SSL_CTX(s));
    const char *name = SSL_get_servername(s, TLSEXT_NAMETYPE_host_name);
    if (!ts || !name || SSL_get_app_data(s) == &acme_marker)
        return SSL_TLSEXT_ERR_OK;
    SSL_CTX *ctx = ctx_for_name(ts, name, strlen(name));
    if (ctx && SSL_get_SSL_CTX(s) != ctx)
        SSL_set_SSL_CTX(s, ctx);
    return SSL_TLSEXT_ERR_OK;
}

static SSL_CTX *ctx_policy(struct tls_server *ts)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx)
        return NULL;
    bool ok = SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) == 1 &&
              SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) == 1 &&
              SSL_CTX_set_cipher_list(ctx, TLS12_CIPHERS) == 1 &&
              SSL_CTX_set_ciphersuites(ctx, TLS13_SUITES) == 1 &&
              SSL_CTX_set1_groups_list(ctx, "X25519:P-256") == 1 && tls_tickets_use(ctx);
    if (!ok) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_PRIORITIZE_CHACHA |
                                 SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
                                 SSL_OP_ENABLE_KTLS);
    /* Idle connections give OpenSSL's record buffers back; a retried
     * SSL_write may come from the same buffer at another moment. */
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_max_early_data(ctx, 0); /* no 0-RTT: replayable requests */
    /* Tickets carry the sessions (stateless, shared keys); no per-worker
     * session cache. One ticket per handshake is enough for a client. */
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(ctx, 1);
    /* A session lives, and its ticket's lifetime hint says, a day: the
     * ticket keys rotate every 12 hours and the previous one still
     * decrypts (tls_tickets.c), so a ticket resumes for 12 to 24 hours;
     * OpenSSL's default would end it after 2. */
    SSL_CTX_set_timeout(ctx, TLS_SESSION_LIFETIME_S);
    SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
    SSL_CTX_set_client_hello_cb(ctx, hello_select, NULL);
    SSL_CTX_set_tlsext_servername_callback(ctx, sni_select);
    SSL_CTX_set_app_data(ctx, ts);
    return ctx;
}

static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return 0; /* an encrypted key is refused, never prompted for */
}

/* A session belongs to the certificate its handshake presented: OpenSSL
 * resumes a ticket only under the session id context it was issued with, so
 * each context's is the SHA-256 of its certificate (32 bytes, which is
 * SSL_MAX_SID_CTX_LENGTH). One context shared by all would let a ticket that
 * one certificate's handshake issued resume a handshake SNI gives another
 * (the client never sees the second certificate). The same certificate gets
 * the same id in every worker and after a reload that keeps it, so tickets
 * stay valid across both. */
static bool set_sid_ctx(SSL_CTX *ctx, X509 *leaf)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    if (X509_digest(leaf, EVP_sha256(), md, &len) != 1 || len > SSL_MAX_SID_CTX_LENGTH)
        return false;
    return SSL_CTX_set_session_id_context(ctx, md, len) == 1;
}

/* A context for pair i from the PEM texts in sh. */
static SSL_CTX *ctx_build(struct tls_server *ts, const struct pem_slot *sh, unsigned i, char *err,
                          size_t cap)
{
    const char *cert_file = ts->set->tls_cert[i], *key_file = ts->set->tls_key[i];
    SSL_CTX *ctx = ctx_policy(ts);
    if (!ctx) {
        set_err(err, cap, "--tls-cert", cert_file, "cannot set up the TLS policy: ");
        return NULL;
    }
    BIO *cb = BIO_new_mem_buf(sh->cert[i], (int)sh->cert_len[i]);
    BIO *kb = BIO_new_mem_buf(sh->key[i], (int)sh->key_len[i]);
    X509 *leaf = cb ? PEM_read_bio_X509_AUX(cb, NULL, no_passphrase, NULL) : NULL;
    EVP_PKEY *key = NULL;
    bool ok = false;
    if (!leaf) {
        set_err(err, cap, "--tls-cert", cert_file, "no certificate: ");
    } else if (SSL_CTX_use_certificate(ctx, leaf) != 1) {
        set_err(err, cap, "--tls-cert", cert_file, "");
    } else if (!set_sid_ctx(ctx, leaf)) {
        set_err(err, cap, "--tls-cert", cert_file, "session id context: ");
    } else {
        X509 *extra;
        ok = true;
        while (ok && (extra = PEM_read_bio_X509(cb, NULL, no_passphrase, NULL)))
            if (SSL_CTX_add0_chain_cert(ctx, extra) != 1) {
                X509_free(extra);
                set_err(err, cap, "--tls-cert", cert_file, "chain: ");
                ok = false;
            }
        ERR_clear_error(); /* the end of the file reads as "no start line" */
        key = ok && kb ? PEM_read_bio_PrivateKey(kb, NULL, no_passphrase, NULL) : NULL;
        EVP_PKEY *pub = X509_get0_pubkey(leaf);
        if (ok && !key) {
            set_err(err, cap, "--tls-key", key_file, "no private key: ");
            ok = false;
        } else if (ok && pub && !EVP_PKEY_is_a(key, EVP_PKEY_get0_type_name(pub))) {
            /* OpenSSL files a key of another type beside the certificate
             * and only then finds no certificate for it: say it plainly. */
            snprintf(err, cap, "--tls-key %s: a %s key, but the certificate's key is %s", key_file,
                     EVP_PKEY_get0_type_name(key), EVP_PKEY_get0_type_name(pub));
            ok = false;
        } else if (ok &&
                   (SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_check_private_key(ctx) != 1)) {
            set_err(err, cap, "--tls-key", key_file, "does not match the certificate: ");
            ok = false;
        }
    }
    X509_free(leaf);
    EVP_PKEY_free(key);
    BIO_free(cb);
    BIO_free(kb);
    if (!ok) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/* ---- the pairs (the master reads them) --------------------------------------------- */

/* Reads a whole PEM file into dst[cap]. */
static int read_pem(const char *flag, const char *path, char *dst, size_t cap, uint32_t *len,
                    char *err, size_t errcap)
{
    BIO *b = BIO_new_file(path, "r");
    if (!b) {
        set_err(err, errcap, flag, path, "cannot read: ");
        return -1;
    }
    size_t n = 0;
    int r;
    while (n < cap && (r = BIO_read(b, dst + n, (int)(cap - n))) > 0)
        n += (size_t)r;
    char extra;
    bool too_big = n == cap && BIO_read(b, &extra, 1) > 0;
    BIO_free(b);
    ERR_clear_error();
    if (too_big) {
        snprintf(err, errcap, "%s %s: larger than %zu KiB", flag, path, cap >> 10);
        return -1;
    }
    *len = (uint32_t)n;
    return 0;
}

/* A site's own pair (issue 22): the message names the site first
 * ("pith.conf:12: site b.test: --tls-key k.pem: ..."). Returns -1. */
static int where_from(const struct settings *set, unsigned pair, char *err, size_t cap)
{
    const char *origin = set->tls_origin[pair];
    size_t n = strlen(err), o = origin ? strlen(origin) + 2 : 0;
    if (o && n + o < cap) {
        memmove(err + o, err, n + 1);
        memcpy(err, origin, o - 2);
        memcpy(err + o - 2, ": ", 2);
    }
    return -1;
}

/* Reads every pair into sh, then builds a context from each into out[]. On
 * failure nothing is kept (the caller's contexts stay). An ACME pair (issue
 * 35) never fails the others: missing or unusable, it is pending (NULL,
 * lengths 0), and the ACME process says why and orders one. */
static int load_pairs(struct tls_server *ts, struct pem_slot *sh, SSL_CTX **out, char *err,
                      size_t cap)
{
    const struct settings *set = ts->set;
    char ignored[400];
    for (unsigned i = 0; i < set->ntls; i++) {
        bool acme = set->tls_acme[i] != NULL;
        char *e = acme ? ignored : err;
        size_t ecap = acme ? sizeof ignored : cap;
        if (read_pem("--tls-cert", set->tls_cert[i], sh->cert[i], CERT_PEM_MAX, &sh->cert_len[i], e,
                     ecap) < 0 ||
            read_pem("--tls-key", set->tls_key[i], sh->key[i], KEY_PEM_MAX, &sh->key_len[i], e,
                     ecap) < 0) {
            if (!acme)
                return where_from(set, i, err, cap);
            sh->cert_len[i] = sh->key_len[i] = 0;
        }
    }
    for (unsigned i = 0; i < set->ntls; i++) {
        bool acme = set->tls_acme[i] != NULL;
        out[i] = acme && !sh->cert_len[i]
                     ? NULL
                     : ctx_build(ts, sh, i, acme ? ignored : err, acme ? sizeof ignored : cap);
        if (!out[i] && acme) {
            sh->cert_len[i] = sh->key_len[i] = 0;
            continue;
        }
        if (!out[i]) {
            for (unsigned k = 0; k < i; k++)
                SSL_CTX_free(out[k]);
            return where_from(set, i, err, cap);
        }
    }
    return 0;
}

/* Whether the kernel offers the tls ULP that kernel TLS needs. */
static void probe_ktls(struct tls_server *ts)
{
    char ulps[256] = "";
    BIO *b = BIO_new_file("/proc/sys/net/ipv4/tcp_available_ulp", "r");
    int n = b ? BIO_read(b, ulps, sizeof ulps - 1) : 0;
    BIO_free(b);
    ERR_clear_error();
    ulps[n > 0 ? n : 0] = '\0';
    bool found = false;
    for (char *t = strtok(ulps, " \n"); t && !found; t = strtok(NULL, " \n"))
        found = strcmp(t, "tls") == 0;
    snprintf(ts->path_note, sizeof ts->path_note, "%s",
             found ? "kernel TLS available" : "userspace TLS: the kernel has no tls module loaded");
}

/* A server that failed to start gives back what it took, so a refused
 * --check or start leaves nothing behind (ASan's leak check watches). */
static struct tls_server *tls_server_abandon(struct tls_server *ts)
{
    tls_server_forget(ts);
    sys_unmap(ts, sizeof *ts);
    return NULL;
}

struct tls_server *tls_server_new(const struct settings *set, char *err, size_t cap)
{
    struct tls_server *ts = sys_map(sizeof *ts);
    struct tls_pems *sh = sys_map_shared(sizeof *sh);
    struct tls_tickets *tk = tls_tickets_new();
    if (!ts || !sh || !tk) {
        snprintf(err, cap, "cannot reserve memory for TLS");
        return NULL;
    }
    ts->pems = sh;
    ts->tickets = tk;
    ts->set = set;
    ts->base = ctx_policy(ts);
    if (!ts->base) {
        snprintf(err, cap, "cannot set up the TLS policy");
        return tls_server_abandon(ts);
    }
    if (load_pairs(ts, &sh->slot[0], ts->ctx, err, cap) < 0) /* generation 0, before any fork */
        return tls_server_abandon(ts);
    ts->nctx = set->ntls;
    probe_ktls(ts);
    return ts;
}

void tls_server_acme(struct tls_server *ts, struct acme_shared *sh)
{
    if (ts)
        ts->acme = sh;
}

const char *tls_server_path(const struct tls_server *ts)
{
    return ts->path_note;
}

/* ---- reload on HUP: the master, then each worker ----------------------------------- */

static void replace_contexts(struct tls_server *ts, SSL_CTX **fresh)
{
    /* Connections in flight hold a reference to their context: freeing
     * ours leaves theirs alive until they end. */
    for (unsigned i = 0; i < ts->nctx; i++) {
        SSL_CTX_free(ts->ctx[i]);
        ts->ctx[i] = fresh[i];
    }
}

/* An ACME pair that is served now but whose file no longer loads keeps
 * what it had (its texts and context): a good certificate is never
 * replaced by a bad one (issue 35); the ACME process says what is wrong. */
static void keep_served(struct tls_server *ts, const struct pem_slot *old, struct pem_slot *sh,
                        SSL_CTX **fresh)
{
    for (unsigned i = 0; i < ts->nctx; i++) {
        if (!ts->set->tls_acme[i] || fresh[i] || !ts->ctx[i])
            continue;
        sh->cert_len[i] = old->cert_len[i];
        sh->key_len[i] = old->key_len[i];
        memcpy(sh->cert[i], old->cert[i], old->cert_len[i]);
        memcpy(sh->key[i], old->key[i], old->key_len[i]);
        SSL_CTX_up_ref(ts->ctx[i]);
        fresh[i] = ts->ctx[i];
        log_error3("HUP: keeping the current certificate of ", ts->set->tls_acme[i],
                   ": its file in --acme-dir does not load");
    }
}

int tls_server_reload(struct tls_server *ts, const struct settings *set)
{
    (void)set;
    char err[400];
    SSL_CTX *fresh[SETTINGS_TLS_PAIRS_MAX];
    struct tls_pems *pm = ts->pems;
    uint32_t next = ts->generation + 1; /* the master's is the published one */
    /* The slot written now is the one of generation - 1: a worker still
     * copying it finds generation moved and waits for the next HUP. The
     * fence keeps these writes behind the last publication. */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    if (load_pairs(ts, &pm->slot[next & 1], fresh, err, sizeof err) < 0) {
        /* Nothing was published: the workers, and any worker started
         * later (a copy of the master's contexts), keep the old pairs. */
        log_error3("HUP: keeping the current TLS certificates and keys: ", err, "");
        return -1;
    }
    keep_served(ts, &pm->slot[ts->generation & 1], &pm->slot[next & 1], fresh);
    replace_contexts(ts, fresh);
    __atomic_store_n(&pm->generation, next, __ATOMIC_RELEASE);
    ts->generation = next;
    log_error("HUP: TLS certificates and keys reloaded");
    return 0;
}

/* Copies the used pairs of the published slot (a length read while the
 * master rewrites is bounded here, and the copy is then thrown away). */
static void copy_slot(struct pem_slot *dst, const struct pem_slot *src, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        uint32_t c = src->cert_len[i], k = src->key_len[i];
        dst->cert_len[i] = c < CERT_PEM_MAX ? c : CERT_PEM_MAX;
        dst->key_len[i] = k < KEY_PEM_MAX ? k : KEY_PEM_MAX;
        memcpy(dst->cert[i], src->cert[i], dst->cert_len[i]);
        memcpy(dst->key[i], src->key[i], dst->key_len[i]);
    }
}

void tls_worker_reload(struct worker *w)
{
    struct tls_server *ts = w->srv->tls;
    if (!ts)
        return;
    struct tls_pems *pm = ts->pems;
    uint32_t gen = __atomic_load_n(&pm->generation, __ATOMIC_ACQUIRE);
    if (gen == ts->generation)
        return;
    /* A private copy, taken quickly: the build below takes milliseconds
     * and must not read texts the master may rewrite meanwhile. */
    struct pem_slot *copy = sys_map(sizeof *copy);
    if (!copy) {
        log_error("HUP: this worker keeps its TLS certificates: out of memory");
        return;
    }
    copy_slot(copy, &pm->slot[gen & 1], ts->nctx);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&pm->generation, __ATOMIC_RELAXED) != gen) {
        /* A newer reload was published while we copied, and the one after
         * it may already be rewriting this slot. Its HUP reaches this
         * worker after the publication, so this worker copies again then. */
        sys_unmap(copy, sizeof *copy);
        return;
    }
    SSL_CTX *fresh[SETTINGS_TLS_PAIRS_MAX];
    char err[400];
    for (unsigned i = 0; i < ts->nctx; i++) {
        bool acme = ts->set->tls_acme[i] != NULL; /* pending while it has no text */
        fresh[i] = acme && !copy->cert_len[i] ? NULL : ctx_build(ts, copy, i, err, sizeof err);
        if (!fresh[i] && !(acme && !copy->cert_len[i])) {
            while (i--)
                SSL_CTX_free(fresh[i]);
            sys_unmap(copy, sizeof *copy);
            log_error3("HUP: this worker keeps its TLS certificates: ", err, "");
            return;
        }
    }
    sys_unmap(copy, sizeof *copy);
    replace_contexts(ts, fresh);
    ts->generation = gen;
}

/* ---- HTTP/3's copy of the texts (issue 34) ------------------------------------------ */

unsigned tls_pairs(const struct tls_server *ts)
{
    return ts->nctx;
}

uint32_t tls_published(const struct tls_server *ts)
{
    return __atomic_load_n(&ts->pems->generation, __ATOMIC_ACQUIRE);
}

bool tls_published_pair(const struct tls_server *ts, uint32_t gen, unsigned i, char *cert,
                        size_t cert_cap, size_t *cert_len, char *key, size_t key_cap,
                        size_t *key_len)
{
    const struct pem_slot *sl = &ts->pems->slot[gen & 1];
    uint32_t c = sl->cert_len[i], k = sl->key_len[i];
    if (c > cert_cap || k > key_cap || c > CERT_PEM_MAX || k > KEY_PEM_MAX)
        return false;
    memcpy(cert, sl->cert[i], c);
    memcpy(key, sl->key[i], k);
    *cert_len = c;
    *key_len = k;
    /* The same seqlock as tls_worker_reload(): unchanged, the copy is whole. */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return __atomic_load_n(&ts->pems->generation, __ATOMIC_RELAXED) == gen;
}

/* ---- --redirect-http ---------------------------------------------------------------- */

bool tls_names_host(const struct tls_server *ts, const char *host)
{
    for (unsigned i = 0; i < ts->nctx; i++) {
        if (ts->set->tls_acme[i] && strcmp(ts->set->tls_acme[i], host) == 0)
            return true; /* an ACME name, its certificate obtained or not yet */
        X509 *cert = ts->ctx[i] ? SSL_CTX_get0_certificate(ts->ctx[i]) : NULL;
        if (cert &&
            (X509_check_host(cert, host, 0, 0, NULL) == 1 || X509_check_ip_asc(cert, host, 0) == 1))
            return true;
    }
    ERR_clear_error();
    return false;
}

/* ---- the end ----------------------------------------------------------------------- */

void tls_server_free(struct tls_server *ts)
{
    if (!ts)
        return;
    for (unsigned i = 0; i < ts->nctx; i++) {
        SSL_CTX_free(ts->ctx[i]);
        ts->ctx[i] = NULL;
    }
    ts->nctx = 0;
    SSL_CTX_free(ts->base);
    ts->base = NULL;
}

void tls_server_forget(struct tls_server *ts)
{
    if (!ts)
        return;
    tls_server_free(ts);
    if (ts->pems) {
        sys_unmap(ts->pems, sizeof *ts->pems);
        ts->pems = NULL;
    }
    tls_tickets_forget(ts->tickets);
    ts->tickets = NULL;
}

/* SPDX-License-Identifier: MIT */
/*
 * tls.c - HTTPS: see tls.h. Three parts:
 *
 * - The policy and the certificates (master, before forking): TLS 1.2 and
 *   1.3 only, AEAD suites only (AES-GCM, ChaCha20-Poly1305) with ECDHE over
 *   X25519 or P-256, the server's order with ChaCha20 first for clients that
 *   prefer it, no renegotiation, no compression, no 0-RTT, ALPN http/1.1.
 *   One SSL_CTX per pair; SNI picks among them, the first is the default.
 *   The PEM texts live in a shared mapping, so a worker can rebuild its
 *   contexts on HUP without reading files it may no longer be allowed to.
 *
 * - Session tickets: AES-256-CBC + HMAC-SHA256 keys in the same shared
 *   mapping, made by the master before forking, so a ticket one worker
 *   issued resumes on any other. The master replaces the older key every
 *   12 hours; the previous one still decrypts (and such a ticket is renewed).
 *
 * - The transport: OpenSSL reads ciphertext from the connection's TLS
 *   buffer (a small BIO of our own: the event loop owns receiving, on both
 *   backends) and writes to the socket itself (a socket BIO, which is what
 *   lets OpenSSL switch the socket to kernel TLS after the handshake).
 */
#include "server/tls.h"

#include "core/authority.h"
#include "core/bytes.h"
#include "core/http_parse.h"
#include "server/conn.h"
#include "server/exchange.h"
#include "server/log.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/transport.h"
#include "server/worker.h"
#include "sys/sys.h"

#include <errno.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <string.h>

#define CERT_PEM_MAX    (64 * 1024) /* a certificate chain's PEM text */
#define KEY_PEM_MAX     (16 * 1024) /* a private key's */
#define TICKET_ROTATE_S (12 * 3600)

/* The TLS buffer of a connection with bytes in flight: a record's worth of
 * plaintext on its way out, then ciphertext the loop received and OpenSSL
 * has not read yet. Idle connections hold none. */
#define TLS_OUT_SIZE         (16 * 1024)
#define TLS_IN_SIZE          (8 * 1024)
#define TLS_BUF_SIZE         (TLS_OUT_SIZE + TLS_IN_SIZE)
#define TLS_RECORDS_PER_PUSH 16

#define TLS12_CIPHERS                                                                              \
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"                                   \
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"                                   \
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
#define TLS13_SUITES "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"

struct ticket_key {
    unsigned char name[16], aes[32], hmac[32];
};

/* Shared between the master and every worker (MAP_SHARED). */
struct tls_shared {
    uint32_t current;   /* keys[current] encrypts; the other one still decrypts */
    int64_t rotated_at; /* seconds */
    int64_t rotate_s;   /* TICKET_ROTATE_S (PITH_TICKET_ROTATE_S in tests) */
    struct ticket_key keys[2];
    uint32_t generation; /* bumped by each reload the master accepted */
    uint32_t npairs;
    uint32_t cert_len[SETTINGS_TLS_PAIRS_MAX], key_len[SETTINGS_TLS_PAIRS_MAX];
    char cert[SETTINGS_TLS_PAIRS_MAX][CERT_PEM_MAX];
    char key[SETTINGS_TLS_PAIRS_MAX][KEY_PEM_MAX];
};

/* The master's, copied into each worker by fork; a worker then updates its
 * own copy on HUP. */
struct tls_server {
    struct tls_shared *sh;
    SSL_CTX *ctx[SETTINGS_TLS_PAIRS_MAX]; /* ctx[0]: the default */
    unsigned nctx;
    uint32_t generation; /* of ctx[] */
    const struct settings *set;
    char path_note[160];
};

/* ---- errors ------------------------------------------------------------------------ */

/* OpenSSL's reason for the first error queued (the root cause), then the
 * queue is emptied. */
static const char *ssl_reason(char *out, size_t cap)
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
    ssl_reason(reason, sizeof reason);
    snprintf(err, cap, "%s %s: %s%s", flag, file, what, reason);
}

/* ---- the policy ------------------------------------------------------------------- */

static int alpn_select(SSL *s, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned inlen, void *arg)
{
    (void)s;
    (void)arg;
    /* The server's list, in its order of preference: "h2" goes first here
     * once HTTP/2 exists. */
    static const unsigned char ours[] = "\x08http/1.1";
    unsigned char *sel;
    if (SSL_select_next_proto(&sel, outlen, ours, sizeof ours - 1, in, inlen) !=
        OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK; /* no common protocol: go on without ALPN */
    *out = sel;
    return SSL_TLSEXT_ERR_OK;
}

/* SNI: the first context whose certificate names the host; the default
 * (the first pair) otherwise. */
static int sni_select(SSL *s, int *alert, void *arg)
{
    (void)alert;
    (void)arg;
    struct tls_server *ts = SSL_CTX_get_app_data(SSL_get_SSL_CTX(s));
    const char *name = SSL_get_servername(s, TLSEXT_NAMETYPE_host_name);
    if (!ts || !name)
        return SSL_TLSEXT_ERR_OK;
    for (unsigned i = 0; i < ts->nctx; i++) {
        X509 *cert = SSL_CTX_get0_certificate(ts->ctx[i]);
        if (cert && X509_check_host(cert, name, 0, 0, NULL) == 1) {
            if (SSL_get_SSL_CTX(s) != ts->ctx[i])
                SSL_set_SSL_CTX(s, ts->ctx[i]);
            break;
        }
    }
    return SSL_TLSEXT_ERR_OK;
}

static int ticket_mac(EVP_MAC_CTX *hctx, unsigned char *key)
{
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, key, 32),
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
        OSSL_PARAM_construct_end(),
    };
    return EVP_MAC_CTX_set_params(hctx, params);
}

/* Encrypts new tickets with the current key; decrypts with whichever of
 * the two made the ticket (1), asking for a fresh ticket when it was the
 * previous key (2); an unknown key means a full handshake (0). */
static int ticket_key_cb(SSL *s, unsigned char name[16], unsigned char *iv, EVP_CIPHER_CTX *ctx,
                         EVP_MAC_CTX *hctx, int enc)
{
    struct tls_server *ts = SSL_CTX_get_app_data(SSL_get_SSL_CTX(s));
    if (!ts)
        return -1;
    uint32_t cur = __atomic_load_n(&ts->sh->current, __ATOMIC_ACQUIRE) & 1;
    if (enc) {
        struct ticket_key *k = &ts->sh->keys[cur];
        if (RAND_bytes(iv, 16) != 1)
            return -1;
        memcpy(name, k->name, 16);
        if (EVP_EncryptInit_ex(ctx, EVP_aes_256_cbc(), NULL, k->aes, iv) != 1 ||
            ticket_mac(hctx, k->hmac) != 1)
            return -1;
        return 1;
    }
    for (uint32_t j = 0; j < 2; j++) {
        uint32_t i = cur ^ j;
        struct ticket_key *k = &ts->sh->keys[i];
        if (memcmp(name, k->name, 16) != 0)
            continue;
        if (EVP_DecryptInit_ex(ctx, EVP_aes_256_cbc(), NULL, k->aes, iv) != 1 ||
            ticket_mac(hctx, k->hmac) != 1)
            return -1;
        return j == 0 ? 1 : 2;
    }
    return 0;
}

static SSL_CTX *ctx_policy(struct tls_server *ts)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx)
        return NULL;
    static const unsigned char sid_ctx[] = "pith";
    bool ok = SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) == 1 &&
              SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) == 1 &&
              SSL_CTX_set_cipher_list(ctx, TLS12_CIPHERS) == 1 &&
              SSL_CTX_set_ciphersuites(ctx, TLS13_SUITES) == 1 &&
              SSL_CTX_set1_groups_list(ctx, "X25519:P-256") == 1 &&
              SSL_CTX_set_session_id_context(ctx, sid_ctx, sizeof sid_ctx - 1) == 1 &&
              SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, ticket_key_cb) == 1;
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
    SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
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

/* A context for pair i from the PEM texts in the shared mapping. */
static SSL_CTX *ctx_build(struct tls_server *ts, unsigned i, char *err, size_t cap)
{
    const struct tls_shared *sh = ts->sh;
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

/* Reads every pair into sh's PEM area, then builds a context from each
 * into out[]. On failure nothing is kept (the caller's contexts stay). */
static int load_pairs(struct tls_server *ts, SSL_CTX **out, char *err, size_t cap)
{
    const struct settings *set = ts->set;
    struct tls_shared *sh = ts->sh;
    for (unsigned i = 0; i < set->ntls; i++)
        if (read_pem("--tls-cert", set->tls_cert[i], sh->cert[i], CERT_PEM_MAX, &sh->cert_len[i],
                     err, cap) < 0 ||
            read_pem("--tls-key", set->tls_key[i], sh->key[i], KEY_PEM_MAX, &sh->key_len[i], err,
                     cap) < 0)
            return -1;
    for (unsigned i = 0; i < set->ntls; i++) {
        out[i] = ctx_build(ts, i, err, cap);
        if (!out[i]) {
            while (i--)
                SSL_CTX_free(out[i]);
            return -1;
        }
    }
    return 0;
}

static void new_ticket_key(struct ticket_key *k)
{
    if (RAND_bytes(k->name, sizeof k->name) != 1 || RAND_bytes(k->aes, sizeof k->aes) != 1 ||
        RAND_bytes(k->hmac, sizeof k->hmac) != 1)
        sys_random(k, sizeof *k); /* the kernel's CSPRNG directly */
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

struct tls_server *tls_server_new(const struct settings *set, char *err, size_t cap)
{
    struct tls_server *ts = sys_map(sizeof *ts);
    struct tls_shared *sh = sys_map_shared(sizeof *sh);
    if (!ts || !sh) {
        snprintf(err, cap, "cannot reserve memory for TLS");
        return NULL;
    }
    ts->sh = sh;
    ts->set = set;
    new_ticket_key(&sh->keys[0]);
    new_ticket_key(&sh->keys[1]);
    sh->rotated_at = sys_now_real();
    sh->rotate_s = TICKET_ROTATE_S;
    /* The tests shorten the 12 hours to watch a rotation happen. */
    const char *rot = sys_getenv("PITH_TICKET_ROTATE_S");
    if (rot && rot[0] >= '1' && rot[0] <= '9')
        sh->rotate_s = strtol(rot, NULL, 10);
    sh->npairs = set->ntls;
    if (load_pairs(ts, ts->ctx, err, cap) < 0)
        return NULL;
    ts->nctx = set->ntls;
    probe_ktls(ts);
    return ts;
}

const char *tls_server_path(const struct tls_server *ts)
{
    return ts->path_note;
}

void tls_server_tick(struct tls_server *ts, int64_t now)
{
    struct tls_shared *sh = ts->sh;
    if (now - sh->rotated_at < sh->rotate_s)
        return;
    /* The previous key is overwritten, the current one becomes the
     * previous: tickets from the last 12 hours still resume. */
    uint32_t next = (sh->current & 1) ^ 1;
    new_ticket_key(&sh->keys[next]);
    __atomic_store_n(&sh->current, next, __ATOMIC_RELEASE);
    sh->rotated_at = now;
}

static void replace_contexts(struct tls_server *ts, SSL_CTX **fresh)
{
    /* Connections in flight hold a reference to their context: freeing
     * ours leaves theirs alive until they end. */
    for (unsigned i = 0; i < ts->nctx; i++) {
        SSL_CTX_free(ts->ctx[i]);
        ts->ctx[i] = fresh[i];
    }
}

int tls_server_reload(struct tls_server *ts, const struct settings *set)
{
    char err[400];
    SSL_CTX *fresh[SETTINGS_TLS_PAIRS_MAX];
    /* The PEM area is rewritten in place: keep the old texts to restore
     * them when the new ones are refused (a worker restarted later must
     * build what the others run). */
    struct tls_shared *saved = sys_map(sizeof *saved);
    if (!saved) {
        log_error("HUP: keeping the current TLS certificates and keys: out of memory");
        return -1;
    }
    memcpy(saved->cert_len, ts->sh->cert_len, sizeof saved->cert_len);
    memcpy(saved->key_len, ts->sh->key_len, sizeof saved->key_len);
    memcpy(saved->cert, ts->sh->cert, sizeof saved->cert);
    memcpy(saved->key, ts->sh->key, sizeof saved->key);
    (void)set;
    if (load_pairs(ts, fresh, err, sizeof err) < 0) {
        memcpy(ts->sh->cert_len, saved->cert_len, sizeof saved->cert_len);
        memcpy(ts->sh->key_len, saved->key_len, sizeof saved->key_len);
        memcpy(ts->sh->cert, saved->cert, sizeof saved->cert);
        memcpy(ts->sh->key, saved->key, sizeof saved->key);
        sys_unmap(saved, sizeof *saved);
        log_error3("HUP: keeping the current TLS certificates and keys: ", err, "");
        return -1;
    }
    sys_unmap(saved, sizeof *saved);
    replace_contexts(ts, fresh);
    ts->generation = ++ts->sh->generation;
    log_error("HUP: TLS certificates and keys reloaded");
    return 0;
}

/* ---- a worker's connections ------------------------------------------------------ */

struct tls_conn {
    SSL *ssl;
    char *buf;                    /* TLS_BUF_SIZE while bytes are in flight, else NULL */
    uint16_t in_off, in_len;      /* ciphertext at buf + TLS_OUT_SIZE */
    uint16_t out_len, held, owed; /* plaintext at buf: held (reported sent) + owed */
    bool pending;                 /* SSL_write of buf[0..out_len) must be repeated */
    bool handshaking;
    bool first_seen; /* the first byte was checked (TLS, plain HTTP or garbage) */
    bool ktls_send;
    bool broken; /* a fatal error: nothing more may be written */
    bool ready;  /* on the ready list */
};

struct tls_worker {
    struct tls_conn *tc; /* one per connection */
    char *bufs;
    uint32_t *free_stack, nfree, next_unused;
    uint32_t *ready, nready;
    BIO_METHOD *in_method;
    int64_t log_after_ms; /* failed handshakes: one line a second at most */
    uint64_t suppressed;
    uint64_t handshakes, failed, ktls, userspace, plain_http;
};

/* SSL_get_error() needs an empty error queue before each call. Every
 * failure clears what it leaves, so the queue is nearly always empty
 * already, and a peek suffices: ERR_clear_error() walks all of the queue's
 * slots, which before each read and write was 2.5% of a keep-alive
 * request's CPU. */
static inline void errors_clear(void)
{
    if (ERR_peek_error())
        ERR_clear_error();
}

static struct tls_conn *tconn(struct worker *w, const struct conn *c)
{
    return &w->tls->tc[c - w->conns];
}

static bool take_buf(struct tls_worker *tw, struct tls_conn *tc)
{
    if (tc->buf)
        return true;
    uint32_t i;
    if (tw->nfree)
        i = tw->free_stack[--tw->nfree];
    else
        i = tw->next_unused++; /* one per connection: never runs out */
    tc->buf = tw->bufs + (size_t)i * TLS_BUF_SIZE;
    return true;
}

static void put_buf(struct tls_worker *tw, struct tls_conn *tc)
{
    if (!tc->buf)
        return;
    tw->free_stack[tw->nfree++] = (uint32_t)((tc->buf - tw->bufs) / TLS_BUF_SIZE);
    tc->buf = NULL;
    tc->in_off = tc->in_len = tc->out_len = tc->held = tc->owed = 0;
    tc->pending = false;
}

/* An idle connection keeps no buffer. */
static void maybe_release(struct tls_worker *tw, struct tls_conn *tc)
{
    if (tc->buf && !tc->pending && tc->out_len == 0 && tc->in_off == tc->in_len)
        put_buf(tw, tc);
}

/* The read side of OpenSSL: what the loop received into the TLS buffer. */
static int in_read(BIO *b, char *out, int n)
{
    struct tls_conn *tc = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    unsigned avail = (unsigned)(tc->in_len - tc->in_off);
    if (avail == 0 || n <= 0) {
        BIO_set_retry_read(b);
        return -1;
    }
    unsigned k = avail < (unsigned)n ? avail : (unsigned)n;
    memcpy(out, tc->buf + TLS_OUT_SIZE + tc->in_off, k);
    tc->in_off = (uint16_t)(tc->in_off + k);
    if (tc->in_off == tc->in_len)
        tc->in_off = tc->in_len = 0;
    return (int)k;
}

static long in_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)num;
    (void)ptr;
    struct tls_conn *tc = BIO_get_data(b);
    switch (cmd) {
    case BIO_CTRL_FLUSH: return 1;
    case BIO_CTRL_PENDING: return tc->in_len - tc->in_off;
    default: return 0;
    }
}

size_t tls_worker_reservation(unsigned max_conns)
{
    return (size_t)max_conns * (TLS_BUF_SIZE + sizeof(struct tls_conn) + 2 * sizeof(uint32_t));
}

int tls_worker_init(struct worker *w)
{
    struct tls_worker *tw = sys_map(sizeof *tw);
    if (!tw)
        return -1;
    w->tls = tw;
    tw->tc = sys_map((size_t)w->nconns * sizeof *tw->tc);
    tw->bufs = sys_map((size_t)w->nconns * TLS_BUF_SIZE);
    tw->free_stack = sys_map((size_t)w->nconns * sizeof *tw->free_stack);
    tw->ready = sys_map((size_t)w->nconns * sizeof *tw->ready);
    tw->in_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "pith-in");
    if (!tw->tc || !tw->bufs || !tw->free_stack || !tw->ready || !tw->in_method)
        return -1;
    BIO_meth_set_read(tw->in_method, in_read);
    BIO_meth_set_ctrl(tw->in_method, in_ctrl);
    return 0;
}

static void arm_seconds(struct worker *w, struct conn *c, unsigned s)
{
    timer_arm(&w->wheel, &c->timer, w->now_ms + (int64_t)s * 1000);
}

int tls_conn_start(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    bool ready = tc->ready; /* the ready list may still name this slot */
    *tc = (struct tls_conn){.ready = ready, .handshaking = true};
    struct tls_server *ts = w->srv->tls;
    tc->ssl = SSL_new(ts->ctx[0]);
    BIO *rb = BIO_new(w->tls->in_method);
    BIO *wb = BIO_new_socket(c->fd, BIO_NOCLOSE);
    if (!tc->ssl || !rb || !wb) {
        BIO_free(rb);
        BIO_free(wb);
        ERR_clear_error();
        return -1;
    }
    BIO_set_data(rb, tc);
    BIO_set_init(rb, 1);
    SSL_set_bio(tc->ssl, rb, wb);
    SSL_set_accept_state(tc->ssl);
    /* The handshake has its own deadline; the header timeout starts after. */
    arm_seconds(w, c, w->set->timeout_handshake);
    return 0;
}

/* A close_notify before our side ends, so a client reading to the end of
 * the stream knows it was not cut. Only after a whole response (or none):
 * a connection cut in the middle of one (a send timeout, an error) must
 * look cut, and with kernel TLS an io_uring send may still be in flight.
 * Nor after a failed handshake or a broken send. A full socket simply
 * drops it (never waited for). */
static void tls_ending(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    bool mid_response = c->x && c->x->active && !outq_empty(&c->x->q);
    if (!tc->ssl || tc->handshaking || tc->pending || tc->broken || mid_response)
        return;
    ERR_clear_error();
    SSL_shutdown(tc->ssl);
    ERR_clear_error();
}

static void tls_release(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    SSL_free(tc->ssl);
    tc->ssl = NULL;
    put_buf(w->tls, tc);
}

/* One line a second at most: "TLS handshake with 1.2.3.4:5 failed: <why>". */
static void log_failure(struct worker *w, struct conn *c, const char *why)
{
    struct tls_worker *tw = w->tls;
    if (w->now_ms < tw->log_after_ms) {
        tw->suppressed++;
        return;
    }
    tw->log_after_ms = w->now_ms + 1000;
    char peer[64] = "?", line[400];
    if (c->peer.ss_family == AF_UNSPEC)
        sys_peer_addr(c->fd, &c->peer);
    if (c->peer.ss_family != AF_UNSPEC)
        sys_addr_text(&c->peer, peer, sizeof peer);
    snprintf(line, sizeof line, "TLS handshake with %s failed: %s", peer, why);
    if (tw->suppressed) {
        size_t n = strlen(line);
        snprintf(line + n, sizeof line - n, " (%llu more in the last second not logged)",
                 (unsigned long long)tw->suppressed);
        tw->suppressed = 0;
    }
    log_error(line);
}

static void handshake_failed(struct worker *w, struct conn *c, const char *why)
{
    w->tls->failed++;
    log_failure(w, c, why);
    conn_close(w, c, CLOSE_ERROR);
}

/* A client that speaks plain HTTP to the TLS port gets told so (as nginx
 * does), in plain text, and the connection ends. */
static void plain_http(struct worker *w, struct conn *c)
{
    static const char body[] = "This port speaks HTTPS; the request was sent as plain HTTP.\n";
    char msg[256];
    int n = snprintf(msg, sizeof msg,
                     "HTTP/1.1 400 Bad Request\r\nServer: " SERVER_NAME
                     "\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n%s",
                     sizeof body - 1, body);
    w->tls->plain_http++;
    sys_send(c->fd, msg, (size_t)n, false);
    /* What the client sent after its head must not turn our close into a
     * reset that could destroy the answer before it is read. */
    conn_linger(w, c, CLOSE_DONE);
}

static void read_plaintext(struct worker *w, struct conn *c);

static void established(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    struct tls_worker *tw = w->tls;
    tc->handshaking = false;
    tc->ktls_send = BIO_get_ktls_send(SSL_get_wbio(tc->ssl)) != 0;
    tw->handshakes++;
    if (tc->ktls_send)
        tw->ktls++;
    else
        tw->userspace++; /* the fallback, counted */
    /* Now the usual deadlines: a whole head within timeout_header. */
    c->head_started_ms = w->now_ms;
    arm_seconds(w, c, w->set->timeout_header);
}

/* Drives the handshake. True when it is done and c is open. */
static bool handshake(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    if (!tc->first_seen && tc->in_len > tc->in_off) {
        unsigned char b = (unsigned char)tc->buf[TLS_OUT_SIZE + tc->in_off];
        tc->first_seen = true;
        if (b >= 'A' && b <= 'Z') {
            plain_http(w, c);
            return false;
        }
        if (b != 0x16) { /* not a handshake record: garbage */
            handshake_failed(w, c, "not a TLS handshake (garbage)");
            return false;
        }
    }
    errors_clear();
    int r = SSL_do_handshake(tc->ssl);
    if (r == 1) {
        established(w, c);
        return true;
    }
    char why[200];
    switch (SSL_get_error(tc->ssl, r)) {
    case SSL_ERROR_WANT_READ: w->loop->want_read(w, c); return false;
    case SSL_ERROR_WANT_WRITE: w->loop->want_write(w, c); return false;
    case SSL_ERROR_SYSCALL:
        if (ERR_peek_error() == 0) {
            handshake_failed(w, c, "the connection broke");
            return false;
        }
        /* fall through */
    default: handshake_failed(w, c, ssl_reason(why, sizeof why)); return false;
    }
}

/* Decrypts what OpenSSL can into the connection's input, for as long as it
 * has room. */
static void read_plaintext(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    bool got = false;
    while (c->state == CONN_READ || c->state == CONN_WRITE) {
        size_t room, n = 0;
        char *p = conn_input_room(w, c, &room);
        if (room == 0)
            break; /* the rest waits in OpenSSL or the TLS buffer (tls_want_read) */
        errors_clear();
        int r = SSL_read_ex(tc->ssl, p, room, &n);
        if (r == 1) {
            got = true;
            conn_input_done(w, c, (ssize_t)n);
            continue;
        }
        int e = SSL_get_error(tc->ssl, r);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
            break;
        ERR_clear_error();
        tc->broken = e != SSL_ERROR_ZERO_RETURN;
        /* close_notify is the end of the stream; anything else an error */
        conn_input_done(w, c, e == SSL_ERROR_ZERO_RETURN ? 0 : -EPROTO);
        return;
    }
    if (!got && c->state == CONN_READ)
        conn_input_done(w, c, -EAGAIN);
}

static void pump(struct worker *w, struct conn *c)
{
    if (tconn(w, c)->handshaking && !handshake(w, c))
        return;
    read_plaintext(w, c);
}

/* ---- the transport ------------------------------------------------------------------ */

static char *tls_recv_room(struct worker *w, struct conn *c, size_t *room)
{
    struct tls_conn *tc = tconn(w, c);
    take_buf(w->tls, tc);
    char *in = tc->buf + TLS_OUT_SIZE;
    if (tc->in_off) {
        memmove(in, in + tc->in_off, (size_t)(tc->in_len - tc->in_off));
        tc->in_len = (uint16_t)(tc->in_len - tc->in_off);
        tc->in_off = 0;
    }
    *room = TLS_IN_SIZE - tc->in_len;
    return in + tc->in_len;
}

static void tls_received(struct worker *w, struct conn *c, ssize_t n)
{
    struct tls_conn *tc = tconn(w, c);
    if (c->state == CONN_LINGER || !tc->ssl) {
        conn_input_done(w, c, n); /* lingering: the bytes were dropped */
        return;
    }
    if (n > 0) {
        tc->in_len = (uint16_t)(tc->in_len + n);
        pump(w, c);
    } else if (tc->handshaking) {
        if (n == -EAGAIN || n == -EINTR)
            w->loop->want_read(w, c);
        else if (n == 0 && !tc->first_seen)
            conn_close(w, c, CLOSE_PEER); /* a probe that sent nothing: not an error */
        else
            handshake_failed(w, c, "the client closed the connection during the handshake");
    } else {
        conn_input_done(w, c, n);
    }
    if (c->state != CONN_CLOSING && c->state != CONN_FREE)
        maybe_release(w->tls, tc);
}

/* Writes the staged record; returns the bytes owed to the connection (its
 * send result), -EAGAIN (writable() finishes it), or -errno. */
static ssize_t flush(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    size_t written;
    errors_clear();
    int r = SSL_write_ex(tc->ssl, tc->buf, tc->out_len, &written);
    if (r == 1) {
        ssize_t owed = tc->owed;
        tc->out_len = tc->held = tc->owed = 0;
        tc->pending = false;
        return owed;
    }
    if (SSL_get_error(tc->ssl, r) == SSL_ERROR_WANT_WRITE) {
        tc->pending = true;
        w->loop->want_write(w, c);
        return -EAGAIN;
    }
    ERR_clear_error();
    tc->broken = true;
    return -EPIPE;
}

static ssize_t tls_send(struct worker *w, struct conn *c, const struct iovec *iov, unsigned n,
                        bool more)
{
    struct tls_conn *tc = tconn(w, c);
    if (tc->ktls_send)
        return w->loop->send(w, c, iov, n, more); /* the kernel makes the records */
    if (tc->pending)
        return -EAGAIN;
    take_buf(w->tls, tc);
    size_t copied = 0, total = 0;
    for (unsigned i = 0; i < n; i++) {
        total += iov[i].iov_len;
        size_t k = TLS_OUT_SIZE - tc->out_len;
        k = iov[i].iov_len < k ? iov[i].iov_len : k;
        memcpy(tc->buf + tc->out_len, iov[i].iov_base, k);
        tc->out_len = (uint16_t)(tc->out_len + k);
        copied += k;
    }
    if (more && copied == total && tc->out_len < TLS_OUT_SIZE) {
        /* A head before a file body: it goes in the body's first record. */
        tc->held = (uint16_t)(tc->held + copied);
        return (ssize_t)copied;
    }
    tc->owed = (uint16_t)copied;
    ssize_t r = flush(w, c);
    maybe_release(w->tls, tc);
    return r;
}

/* One record of the file at off (after a held head): the bytes of the file
 * it carried, -EAGAIN while it waits for writability, 0 when the file
 * shrank, or -errno. */
static ssize_t file_record(struct worker *w, struct conn *c, int fd, uint64_t off, size_t n)
{
    struct tls_conn *tc = tconn(w, c);
    size_t k = TLS_OUT_SIZE - tc->out_len;
    k = n < k ? n : k;
    ssize_t got = sys_pread(fd, tc->buf + tc->out_len, k, off);
    if (got <= 0)
        return got;
    tc->out_len = (uint16_t)(tc->out_len + got);
    tc->owed = (uint16_t)got;
    return flush(w, c);
}

/* Up to TLS_RECORDS_PER_PUSH records per call, written while the socket is
 * corked: the kernel then sends them in full segments with one push (and
 * wakes the client once) instead of once per record, which on a 1 MiB body
 * costs a quarter of the CPU. */
static ssize_t tls_sendfile(struct worker *w, struct conn *c, int fd, uint64_t *off, size_t n)
{
    struct tls_conn *tc = tconn(w, c);
    if (tc->ktls_send)
        return w->loop->sendfile(w, c, fd, off, n); /* sendfile through kernel TLS */
    if (tc->pending)
        return -EAGAIN;
    take_buf(w->tls, tc);
    bool corked = n > (size_t)(TLS_OUT_SIZE - tc->out_len) && sys_set_cork(c->fd, true) == 0;
    ssize_t sent = 0;
    for (unsigned i = 0; i < TLS_RECORDS_PER_PUSH && (size_t)sent < n; i++) {
        ssize_t r = file_record(w, c, fd, *off, n - (size_t)sent);
        if (r <= 0) {
            /* What went before counts; the next call meets this again. */
            sent = sent ? sent : r;
            break;
        }
        *off += (uint64_t)r;
        sent += r;
    }
    if (corked)
        sys_set_cork(c->fd, false);
    maybe_release(w->tls, tc);
    return sent;
}

static void tls_writable(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    if (tc->handshaking) {
        pump(w, c);
        return;
    }
    if (!tc->pending) {
        conn_writable(w, c);
        return;
    }
    ssize_t r = flush(w, c);
    if (r == -EAGAIN)
        return;
    if (r < 0) {
        conn_close(w, c, CLOSE_ERROR);
        return;
    }
    maybe_release(w->tls, tc);
    conn_sent(w, c, r);
}

/* Bytes OpenSSL (or the TLS buffer) already holds arrive without a socket
 * event: such a connection is served from the ready list. */
static void tls_want_read(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    struct tls_worker *tw = w->tls;
    if (tc->ssl && !tc->handshaking && !tc->ready &&
        (tc->in_len > tc->in_off || SSL_pending(tc->ssl) > 0)) {
        tc->ready = true;
        tw->ready[tw->nready++] = (uint32_t)(c - w->conns);
    }
    w->loop->want_read(w, c);
}

bool tls_has_ready(const struct worker *w)
{
    return w->tls && w->tls->nready;
}

void tls_run_ready(struct worker *w)
{
    struct tls_worker *tw = w->tls;
    while (tw && tw->nready) {
        struct conn *c = &w->conns[tw->ready[--tw->nready]];
        struct tls_conn *tc = tconn(w, c);
        tc->ready = false;
        if (c->tp == &transport_tls && tc->ssl && c->state == CONN_READ) {
            read_plaintext(w, c);
            if (c->state != CONN_CLOSING && c->state != CONN_FREE)
                maybe_release(tw, tc);
        }
    }
}

void tls_worker_reload(struct worker *w)
{
    struct tls_server *ts = w->srv->tls;
    if (!ts || ts->generation == ts->sh->generation)
        return;
    SSL_CTX *fresh[SETTINGS_TLS_PAIRS_MAX];
    char err[400];
    for (unsigned i = 0; i < ts->nctx; i++) {
        fresh[i] = ctx_build(ts, i, err, sizeof err);
        if (!fresh[i]) {
            while (i--)
                SSL_CTX_free(fresh[i]);
            log_error3("HUP: this worker keeps its TLS certificates: ", err, "");
            return;
        }
    }
    replace_contexts(ts, fresh);
    ts->generation = ts->sh->generation;
}

void tls_worker_report(const struct worker *w)
{
    const struct tls_worker *tw = w->tls;
    if (!tw)
        return;
    char line[300];
    snprintf(line, sizeof line,
             "worker %u (pid %d) TLS: handshakes=%llu failed=%llu plain_http=%llu "
             "kernel_tls=%llu userspace_tls=%llu",
             w->index, sys_getpid(), (unsigned long long)tw->handshakes,
             (unsigned long long)tw->failed, (unsigned long long)tw->plain_http,
             (unsigned long long)tw->ktls, (unsigned long long)tw->userspace);
    log_error(line);
}

/* ---- --redirect-http ---------------------------------------------------------------- */

/* Whether one of the certificates names host (a DNS name or an address). */
static bool certs_name(const struct tls_server *ts, const char *host)
{
    for (unsigned i = 0; i < ts->nctx; i++) {
        X509 *cert = SSL_CTX_get0_certificate(ts->ctx[i]);
        if (cert &&
            (X509_check_host(cert, host, 0, 0, NULL) == 1 || X509_check_ip_asc(cert, host, 0) == 1))
            return true;
    }
    ERR_clear_error();
    return false;
}

void tls_redirect(struct worker *w, struct exchange *x, struct span host, struct span path,
                  const struct span *query)
{
    char name[256], loc[HTTP_MAX_REQUEST_LINE + 320];
    bool ipv6;
    if (authority_host(host, name, sizeof name, &ipv6) < 0 || !certs_name(w->srv->tls, name)) {
        reply_error(w, x, 400); /* a Host none of our certificates names */
        return;
    }
    struct buf b = buf_make(loc, sizeof loc);
    buf_put_cstr(&b, ipv6 ? "https://[" : "https://");
    buf_put_cstr(&b, name);
    if (ipv6)
        buf_put_char(&b, ']');
    if (w->srv->tls_port != 443) {
        buf_put_char(&b, ':');
        buf_put_u64(&b, w->srv->tls_port);
    }
    buf_put_span(&b, path);
    if (query) {
        buf_put_char(&b, '?');
        buf_put_span(&b, *query);
    }
    if (b.full) {
        reply_error(w, x, 414);
        return;
    }
    reply_small(w, x, 308, "Location", span_make(loc, b.len), false);
}

void tls_worker_exit(struct worker *w)
{
    struct tls_worker *tw = w->tls;
    if (!tw)
        return;
    for (uint32_t i = 0; i < w->next_unused; i++) {
        SSL_free(tw->tc[i].ssl);
        tw->tc[i].ssl = NULL;
    }
    BIO_meth_free(tw->in_method);
    tw->in_method = NULL;
    tls_server_free(w->srv->tls);
}

void tls_server_free(struct tls_server *ts)
{
    if (!ts)
        return;
    for (unsigned i = 0; i < ts->nctx; i++) {
        SSL_CTX_free(ts->ctx[i]);
        ts->ctx[i] = NULL;
    }
    ts->nctx = 0;
}

void tls_server_forget(struct tls_server *ts)
{
    if (!ts)
        return;
    tls_server_free(ts);
    if (ts->sh) {
        sys_unmap(ts->sh, sizeof *ts->sh);
        ts->sh = NULL;
    }
}

const struct transport_ops transport_tls = {
    .name = "tls",
    .send = tls_send,
    .sendfile = tls_sendfile,
    .recv_room = tls_recv_room,
    .received = tls_received,
    .sent = conn_sent,
    .writable = tls_writable,
    .want_read = tls_want_read,
    .ending = tls_ending,
    .release = tls_release,
};

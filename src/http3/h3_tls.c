/* SPDX-License-Identifier: MIT */
/*
 * h3_tls.c - QUIC's TLS (RFC 9001) with GnuTLS, the one crypto helper
 * Debian packages for ngtcp2 1.11 (TCP's TLS stays OpenSSL, tls*.c). The
 * same certificate and key files serve both: a worker builds GnuTLS
 * credentials from the PEM texts the master published (tls.h), so the
 * sandbox needs no file access, and a SIGHUP reload rebuilds them as it
 * does OpenSSL's contexts.
 *
 * Policy: TLS 1.3 only (RFC 9001 §4.2), AEAD ciphers QUIC allows (AES-GCM,
 * ChaCha20-Poly1305: §5.3 excludes CCM_8), ALPN "h3" mandatory, no session
 * tickets and so no resumption and no 0-RTT (docs/DESIGN.md, "HTTP/3": 0-RTT
 * is off). SNI picks the certificate pair as tls_ctx.c does for TCP: the
 * site the name picks, then that site's pair naming the host
 * (tls_choose_ctx), and the pair is remembered for the 421 rule (sites).
 */
#include "http3/h3_internal.h"

#include "base/log.h"
#include "base/server.h"
#include "base/worker.h"
#include "core/vhost.h"
#include "sys/sys.h"
#include "tls/tls.h"

#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <string.h>

#define PRIORITY                                                                                   \
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:"      \
    "%DISABLE_TLS13_COMPAT_MODE"

#define CERT_CAP (64 * 1024)
#define KEY_CAP  (16 * 1024)

struct h3_tls {
    const struct tls_server *ts;
    const struct settings *set;
    gnutls_certificate_credentials_t cred[SETTINGS_TLS_PAIRS_MAX]; /* NULL: ACME, pending */
    unsigned n;
    uint32_t generation;
    gnutls_priority_t prio;
};

static void free_creds(struct h3_tls *t)
{
    for (unsigned i = 0; i < t->n; i++)
        if (t->cred[i])
            gnutls_certificate_free_credentials(t->cred[i]);
}

/* Credentials for the texts of generation gen; false when a text is bad
 * or a newer generation came meanwhile. */
static bool build(struct h3_tls *t, uint32_t gen)
{
    char *cert = sys_map(CERT_CAP + KEY_CAP), *key = cert + CERT_CAP;
    if (!cert)
        return false;
    bool ok = true;
    for (unsigned i = 0; ok && i < t->n; i++) {
        size_t cl = 0, kl = 0;
        t->cred[i] = NULL;
        ok = tls_published_pair(t->ts, gen, i, cert, CERT_CAP, &cl, key, KEY_CAP, &kl);
        if (!ok || cl == 0)
            continue; /* an ACME pair still being obtained: that name fails */
        gnutls_datum_t c = {(unsigned char *)cert, (unsigned)cl};
        gnutls_datum_t k = {(unsigned char *)key, (unsigned)kl};
        ok = gnutls_certificate_allocate_credentials(&t->cred[i]) == 0 &&
             gnutls_certificate_set_x509_key_mem2(t->cred[i], &c, &k, GNUTLS_X509_FMT_PEM, NULL,
                                                  0) >= 0;
        if (!ok && t->cred[i]) {
            gnutls_certificate_free_credentials(t->cred[i]);
            t->cred[i] = NULL;
        }
    }
    explicit_bzero(key, KEY_CAP);
    sys_unmap(cert, CERT_CAP + KEY_CAP);
    if (!ok)
        free_creds(t);
    t->generation = gen;
    return ok;
}

struct h3_tls *h3_tls_new(struct worker *w)
{
    struct h3_tls *t = sys_map(sizeof *t);
    if (!t)
        return NULL;
    t->ts = w->srv->tls;
    t->set = w->set;
    t->n = tls_pairs(t->ts);
    if (gnutls_priority_init(&t->prio, PRIORITY, NULL) < 0) {
        log_error("HTTP/3: GnuTLS refuses the TLS 1.3 priority string");
        return NULL;
    }
    for (int tries = 0; tries < 3; tries++)
        if (build(t, tls_published(t->ts)))
            return t;
    log_error("HTTP/3: cannot load the certificates into GnuTLS");
    return NULL;
}

void h3_tls_free(struct h3_tls *t)
{
    if (!t)
        return;
    free_creds(t);
    gnutls_priority_deinit(t->prio);
    sys_unmap(t, sizeof *t);
}

void h3_tls_reload(struct worker *w, struct h3_tls **tp)
{
    struct h3_tls *old = *tp;
    uint32_t gen = tls_published(old->ts);
    if (gen == old->generation)
        return;
    struct h3_tls *t = sys_map(sizeof *t);
    if (!t)
        return;
    *t = (struct h3_tls){.ts = old->ts, .set = old->set, .n = old->n};
    if (gnutls_priority_init(&t->prio, PRIORITY, NULL) < 0 || !build(t, gen)) {
        log_error("HUP: HTTP/3 keeps its certificates");
        sys_unmap(t, sizeof *t);
        return;
    }
    /* Sessions in flight reference the old credentials: they stay until
     * the worker exits (a reload is rare; GnuTLS has no reference count). */
    (void)w;
    *tp = t;
}

/* The pair for the SNI name (tls_ctx.c's pair_for_name, over the same
 * site table), or -1 for none. */
static int pair_for(const struct h3_tls *t, const char *name, size_t len)
{
    char key[VHOST_NAME_MAX + 3];
    long n = vhost_host_key(span_make(name, len), key, VHOST_NAME_MAX + 2);
    if (n <= 0)
        return -1;
    key[n] = '\0';
    int site = vhost_lookup(&t->set->hosts, span_make(key, (size_t)n));
    return tls_choose_ctx(t->ts, site < 0 ? 0 : (unsigned)site, key);
}

/* After the ClientHello's extensions are parsed, before GnuTLS picks the
 * certificate: the pair SNI names, and ALPN must have chosen h3. */
static int post_client_hello(gnutls_session_t s)
{
    ngtcp2_crypto_conn_ref *ref = gnutls_session_get_ptr(s);
    struct h3_conn *hc = ref->user_data;
    const struct h3_tls *t = hc->hw->tls;
    gnutls_datum_t alpn;
    if (gnutls_alpn_get_selected_protocol(s, &alpn) != 0 || alpn.size != 2 ||
        memcmp(alpn.data, "h3", 2) != 0)
        return GNUTLS_E_NO_APPLICATION_PROTOCOL;
    char name[256];
    size_t len = sizeof name;
    unsigned type;
    if (gnutls_server_name_get(s, name, &len, &type, 0) == 0 && type == GNUTLS_NAME_DNS) {
        int i = pair_for(t, name, len);
        if (i >= 0 && !t->cred[i])
            return GNUTLS_E_CERTIFICATE_ERROR; /* an ACME name still pending (§12) */
        if (i >= 0 && i != hc->tls_pair) {
            hc->tls_pair = i;
            return gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, t->cred[i]);
        }
    }
    return 0;
}

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref)
{
    return ((struct h3_conn *)ref->user_data)->qc;
}

int h3_tls_session(struct h3_worker *hw, struct h3_conn *hc)
{
    const struct h3_tls *t = hw->tls;
    static const gnutls_datum_t alpn = {(unsigned char *)"h3", 2};
    int first = 0;
    while (first < (int)t->n && !t->cred[first])
        first++;
    if (first == (int)t->n)
        return -1; /* no certificate yet (every pair ACME, pending) */
    hc->tls_pair = first;
    if (gnutls_init(&hc->tls, GNUTLS_SERVER | GNUTLS_NO_SIGNAL) != 0)
        return -1;
    hc->ref = (ngtcp2_crypto_conn_ref){get_conn, hc};
    if (gnutls_priority_set(hc->tls, t->prio) != 0 ||
        ngtcp2_crypto_gnutls_configure_server_session(hc->tls) != 0 ||
        gnutls_credentials_set(hc->tls, GNUTLS_CRD_CERTIFICATE, t->cred[first]) != 0 ||
        gnutls_alpn_set_protocols(hc->tls, &alpn, 1, GNUTLS_ALPN_MANDATORY) != 0)
        return -1;
    gnutls_session_set_ptr(hc->tls, &hc->ref);
    gnutls_handshake_set_post_client_hello_function(hc->tls, post_client_hello);
    return 0;
}

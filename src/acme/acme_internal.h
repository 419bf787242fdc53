/* SPDX-License-Identifier: MIT */
/*
 * acme_internal.h - what the ACME modules share with each other and with
 * nothing else (acme.h is the interface), one job per file:
 *
 *   acme_shared.c  the challenge table in shared memory: the ACME process
 *                  publishes, the workers answer (http-01, tls-alpn-01)
 *   acme_peers.c   instances sharing the state directory: the challenges
 *                  of one's order answered by all
 *   acme_http.c    HTTPS to the CA over libcurl: size-capped, time-limited
 *   acme_jws.c     the account key, its JWK and thumbprint, JWS (ES256)
 *   acme_cert.c    certificate keys, CSRs, checking a chain, the tls-alpn-01
 *                  certificate
 *   acme_order.c   the protocol: directory, nonces, account, order,
 *                  authorizations, challenges, finalize, download, ARI
 *   acme_store.c   the state directory: atomic files, reading them back,
 *                  the lock between instances
 *   acme_sched.c   when: renewal (ARI, else two thirds of the lifetime),
 *                  backoff with jitter, Retry-After
 *   acme_main.c    the process: its loop over the names, the master
 *   acme_sandbox.c its seccomp and Landlock profile
 */
#ifndef PITH_ACME_INTERNAL_H
#define PITH_ACME_INTERNAL_H

#include "acme/acme.h"

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ACME_NAME_MAX 253 /* a DNS name's text */

/* ---- acme_shared.c: the challenge table (MAP_SHARED, made by the master) ---- */

#define ACME_SLOTS         64 /* one per name at most (SETTINGS_TLS_PAIRS_MAX) */
#define ACME_TOKEN_MAX     128
#define ACME_KEYAUTH_MAX   (ACME_TOKEN_MAX + 1 + 43)
#define ACME_CHAL_CERT_MAX 2048
#define ACME_CHAL_KEY_MAX  512

/* One pending challenge, as the workers answer it. */
struct acme_challenge {
    char name[ACME_NAME_MAX + 1];
    char token[ACME_TOKEN_MAX + 1];
    char keyauth[ACME_KEYAUTH_MAX + 1];
    char cert[ACME_CHAL_CERT_MAX]; /* tls-alpn-01: self-signed, PEM */
    char key[ACME_CHAL_KEY_MAX];   /* its throwaway key, PEM */
    uint16_t cert_len, key_len;
};

struct acme_shared *acme_shared_new(void);
/* The ACME process (the only writer): publishes c in slot i (the name's
 * index), or withdraws it. */
void acme_shared_publish(struct acme_shared *sh, unsigned i, const struct acme_challenge *c);
void acme_shared_withdraw(struct acme_shared *sh, unsigned i);
/* Whether t is a token (base64url, RFC 8555 §8.3, at most ACME_TOKEN_MAX). */
bool acme_token_ok(struct span t);

/* ---- acme_peers.c: instances sharing the state directory -------------------------- */

struct acme_peers;
/* Takes this instance's place in locks/.instances; names: each slot's
 * name (NULL where none). NULL when out of memory. */
struct acme_peers *acme_peers_new(int dirfd, struct acme_shared *sh,
                                  const char *const names[ACME_SLOTS]);
/* Whether another instance's ACME process is alive (true when it cannot
 * tell). */
bool acme_peers_others(const struct acme_peers *p);
/* This instance's challenge c for slot: into its table, and, when another
 * instance is alive, into challenges/NAME, returning once they have had
 * the time to answer it too. */
void acme_peers_publish(struct acme_peers *p, unsigned slot, const struct acme_challenge *c);
/* ... and its end: the slot emptied, the file removed. */
void acme_peers_withdraw(struct acme_peers *p, unsigned slot);
/* Removes challenges/NAME of slot (a dead holder's, once the lock is ours). */
void acme_peers_clear(struct acme_peers *p, unsigned slot);
/* The other instances' challenges for this instance's names, into its
 * table (and out of it once their files are gone). */
void acme_peers_mirror(struct acme_peers *p);
/* Sleeps seconds, looking at the others' challenges meanwhile; a TERM or
 * INT ends the process (its own challenge files removed). */
void acme_peers_sleep(struct acme_peers *p, unsigned seconds);

/* ---- acme_http.c: the CA's HTTPS API --------------------------------------------- */

#define ACME_BODY_MAX (64 * 1024) /* a JSON document or a PEM chain */

struct acme_http;
struct acme_resp {
    long status; /* the HTTP status; 0: no answer (err says why) */
    char *body;  /* NUL-terminated, body_len bytes (owned by the client) */
    size_t body_len;
    char type[96];      /* Content-Type without parameters, lowercase */
    char nonce[128];    /* Replay-Nonce */
    char location[512]; /* Location */
    char link_up[512];  /* Link: <...>;rel="up" (an alternate chain's issuer) */
    long retry_after;   /* seconds; -1: none */
    char err[256];      /* why there was no answer */
};

/* ca_root: a PEM file of roots to trust instead of the system's (NULL).
 * timeout_s bounds each whole exchange. NULL when libcurl cannot start. */
struct acme_http *acme_http_new(const char *ca_root, long timeout_s);
/* GET (body NULL) or POST of a JWS (Content-Type application/jose+json).
 * The answer is in *r until the next call. Returns 0 when an HTTP answer
 * came (any status), -1 when none did (r->err). */
int acme_http_do(struct acme_http *h, const char *url, const char *body, const char *accept,
                 struct acme_resp *r);
void acme_http_free(struct acme_http *h);

/* ---- acme_jws.c: the account key and JWS (RFC 7515, ES256) ------------------------ */

/* base64url without padding (RFC 7515 §2) of n bytes into out[cap];
 * returns the length, or 0 when it does not fit. */
size_t acme_b64url(const unsigned char *p, size_t n, char *out, size_t cap);
/* The key's JWK (RFC 7517; members in the order RFC 7638 hashes them) and
 * its thumbprint (base64url of the SHA-256 of that JWK). 0 or -1. */
int acme_jwk(EVP_PKEY *key, char *jwk, size_t cap);
int acme_thumbprint(EVP_PKEY *key, char *out, size_t cap);
/* A flattened JWS of payload (NULL: "" for POST-as-GET) signed with key,
 * with the protected header {alg, nonce, url} and kid, or jwk when kid is
 * NULL. Returns a malloc'd text, or NULL. */
char *acme_jws(EVP_PKEY *key, const char *kid, const char *nonce, const char *url,
               const char *payload);

/* ---- acme_cert.c: keys, CSRs, chains ---------------------------------------------- */

/* A fresh ECDSA P-256 key, or NULL. */
EVP_PKEY *acme_key_new(void);
/* A CSR for name signed with key, DER in base64url, into out[cap]. 0 or -1. */
int acme_csr(EVP_PKEY *key, const char *name, char *out, size_t cap);
/* What a stored file (key then chain, PEM) holds, checked: the key, the
 * leaf (the first certificate), its validity. */
struct acme_pair {
    EVP_PKEY *key;
    X509 *leaf;
    int64_t not_before, not_after; /* seconds since the epoch */
};
/* Checks that pem[n] holds a private key and a chain whose leaf matches it,
 * names name and has not expired at now. 0 with *out filled, or -1 with a
 * sentence in why[cap]. */
int acme_pair_check(const char *pem, size_t n, const char *name, int64_t now, struct acme_pair *out,
                    char *why, size_t cap);
void acme_pair_free(struct acme_pair *p);
/* The tls-alpn-01 certificate for name and key authorization keyauth
 * (RFC 8737 §3): self-signed, SAN name, the critical acmeIdentifier
 * extension; with its fresh key, both as PEM into c. 0 or -1. */
int acme_alpn_cert(const char *name, const char *keyauth, struct acme_challenge *c);
/* The ARI certificate identifier of leaf (RFC 9773 §4.1): base64url of
 * the Authority Key Identifier, '.', base64url of the serial. 0 or -1. */
int acme_ari_id(X509 *leaf, char *out, size_t cap);

/* ---- acme_store.c: the state directory -------------------------------------------- */

/* Writes n bytes to dir/rel atomically: a temporary file (0600), fsync,
 * rename, fsync of the directory; never a partial file under the name.
 * 0, or -errno. */
int acme_store_write(int dirfd, const char *rel, const char *p, size_t n);
/* Reads dir/rel whole into a malloc'd text (NUL-terminated, at most max
 * bytes); -ENOENT when absent, -EFBIG when larger. */
int acme_store_read(int dirfd, const char *rel, size_t max, char **out, size_t *n);
/* The lock of name between instances sharing the state directory (an OFD
 * lock on locks/NAME, which the kernel drops when the process dies, and
 * which NFS carries to the other machines). 1 taken, 0 held elsewhere,
 * -errno. */
int acme_store_lock(int dirfd, const char *name, int *fd);
void acme_store_unlock(int fd);

/* ---- acme_sched.c: when --------------------------------------------------------------- */

struct acme_when {
    unsigned failures; /* in a row */
    int64_t next;      /* seconds since the epoch: the next attempt or check */
};
/* Renewal time of a certificate valid from nb to na without ARI: two
 * thirds of its lifetime. */
int64_t acme_renew_at(int64_t nb, int64_t na);
/* After a failure at now: the next attempt, by exponential backoff with
 * jitter, never before retry_after (seconds; -1: none); rate_limited (429,
 * rateLimited) waits at least an hour unless the CA said when. */
int64_t acme_backoff(struct acme_when *w, int64_t now, long retry_after, bool rate_limited);
/* A uniform random time in [start, end] (the ARI window's choice, RFC 9773
 * §4.2). */
int64_t acme_pick(int64_t start, int64_t end);

/* ---- acme_order.c: the protocol --------------------------------------------------- */

struct acme_client;
struct acme_client *acme_client_new(const struct settings *set, struct acme_peers *peers,
                                    EVP_PKEY *account);
/* Obtains a certificate for name (slot: its challenge slot): the PEM key
 * and chain, checked, into a malloc'd *pem. old: the certificate it
 * replaces (NULL: none), named in the order where the CA offers ARI (RFC
 * 9773 §5). 0, or -1 after logging why (with *retry_after and
 * *rate_limited from the CA's answer). */
int acme_obtain(struct acme_client *c, unsigned slot, const char *name, X509 *old, char **pem,
                size_t *n, long *retry_after, bool *rate_limited);
/* ARI (RFC 9773 §4.2): the renewal window the CA suggests for leaf. */
struct acme_window {
    int64_t start, end; /* seconds since the epoch, start < end */
    long retry_after;   /* seconds; -1: the answer named none */
    char explain[256];  /* explanationURL, or "" */
};
#define ACME_ARI_NONE 1 /* the CA's directory has no renewalInfo */
/* 0 with *w; ACME_ARI_NONE; or -1 with a sentence in why[cap] (the CA
 * unreachable, an error status, an answer that is not a window). */
int acme_ari(struct acme_client *c, X509 *leaf, struct acme_window *w, char *why, size_t cap);
void acme_client_free(struct acme_client *c);

/* ---- acme_sandbox.c ----------------------------------------------------------------- */

/* Confines the ACME process: Landlock (the state directory read and
 * written, --acme-ca-root and the system's certificates, resolver files
 * and libraries read; TCP connect to the CA's port only) and a seccomp
 * allow-list for libcurl, OpenSSL and the resolver. 0, or -1 after
 * logging why. */
int acme_sandbox(const struct server *srv);

/* ---- log lines ----------------------------------------------------------------------- */

/* "acme: " and the formatted text on the error log. */
void acme_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

/* SPDX-License-Identifier: MIT */
/*
 * tls_internal.h - what the HTTPS modules share with each other, and with
 * nothing else (tls.h is the public interface):
 *
 *   tls_ctx.c      the policy and the contexts (SNI, ALPN), the PEM texts the
 *                  master publishes in a shared mapping, the master's and the
 *                  workers' reload on HUP, --redirect-http's check of a host;
 *   tls_tickets.c  the session-ticket keys: their shared mapping, the
 *                  rotation, the ticket callback;
 *   tls.c          a worker's connections: the TLS transport.
 *
 * Only the full build compiles these (pith-tiny has no OpenSSL at all).
 */
#ifndef PITH_TLS_INTERNAL_H
/* How long a session resumes (SSL_CTX_set_timeout: the tickets' lifetime
 * hint too); the ticket keys' rotation (tls_tickets.c) bounds it as well. */
#define TLS_SESSION_LIFETIME_S (24 * 3600)

#define PITH_TLS_INTERNAL_H

#include "base/server.h"

#include <openssl/ssl.h>
#include <stddef.h>
#include <stdint.h>

struct tls_pems;    /* tls_ctx.c: the PEM texts (MAP_SHARED) */
struct tls_tickets; /* tls_tickets.c: the ticket keys (MAP_SHARED) */

/* The master's, copied into each worker by fork; a worker then updates its
 * own copy on HUP. The two mappings are shared by all of them. */
struct tls_server {
    struct tls_pems *pems;
    struct tls_tickets *tickets;
    SSL_CTX *ctx[SETTINGS_TLS_PAIRS_MAX]; /* ctx[0]: the default; NULL: an ACME pair
                                           * whose certificate is still being obtained */
    SSL_CTX *base;            /* the policy without a certificate (issue 35): handshakes start here
                               * while ctx[0] is NULL, and tls-alpn-01 answers from it */
    struct acme_shared *acme; /* the challenges to answer (--acme); NULL */
    unsigned nctx;
    uint32_t generation; /* of ctx[] */
    const struct settings *set;
    char path_note[160];
};

/* ---- tls_tickets.c ------------------------------------------------------------------ */

/* Maps the ticket keys every process shares and makes the first two (the
 * master, before forking). NULL when the memory cannot be had. */
struct tls_tickets *tls_tickets_new(void);
/* Makes ctx issue and accept tickets under the shared keys; the callback
 * finds them through ctx's app data (the struct tls_server). 1, or 0 when
 * OpenSSL refuses. */
int tls_tickets_use(SSL_CTX *ctx);
/* Unmaps them (a child that serves no TLS must not hold the keys). */
void tls_tickets_forget(struct tls_tickets *tk);

/* ---- tls_ctx.c ---------------------------------------------------------------------- */

/* The context a new connection's handshake starts with: the default
 * pair's, or the base one while that pair is being obtained (issue 35). */
static inline SSL_CTX *tls_server_first(const struct tls_server *ts)
{
    return ts->ctx[0] ? ts->ctx[0] : ts->base;
}

/* The index of ctx in ts->ctx[] (0 when it is none of them). */
int tls_ctx_index(const struct tls_server *ts, const SSL_CTX *ctx);

/* OpenSSL's reason for the first error queued (the root cause), written to
 * out[cap]; the queue is emptied. Returns out. */
const char *tls_ssl_reason(char *out, size_t cap);

#endif

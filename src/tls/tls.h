/* SPDX-License-Identifier: MIT */
/*
 * tls.h - HTTPS with OpenSSL 3: the policy (one SSL_CTX per certificate/key
 * pair, chosen by SNI), the ticket keys every worker shares, and the TLS
 * transport (transport.h) that carries a connection's stream.
 *
 * The master builds struct tls_server before forking (so the private keys
 * are read before --user drops privileges) and keeps the PEM texts; on HUP
 * it re-reads the files, and each worker builds fresh contexts from what
 * the master published (docs/DESIGN.md, "TLS").
 *
 * Data paths, per connection, after the handshake: with kernel TLS for
 * sending (BIO_get_ktls_send), the response goes out exactly as on plain
 * TCP (sendmsg, sendfile); without it, memory goes by SSL_write and file
 * ranges are read in 16 KiB records through the connection's TLS buffer.
 * Requests are always read with SSL_read from the bytes the loop received.
 */
#ifndef PITH_TLS_H
#define PITH_TLS_H

#include "core/core.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct settings;
struct tls_server;
struct worker;
struct conn;
struct exchange;
struct acme_shared;

#ifdef PITH_TINY
/* pith-tiny leaves HTTPS out (config.c refuses its flags, the tls*.c files
 * are not built): srv->tls is always NULL and no TLS listener exists, so
 * the shared code's calls below are no-ops the compiler removes. */
#include "tls/tls_none.h"
#else

/* HTTPS is in this build (false in tls_none.h): the shared start-up
 * (src/cli/start.c) tests it so that pith-tiny's compiler drops its TLS steps. */
#define TLS_BUILT true

/* ---- the master ------------------------------------------------------------------ */

/* Loads every --tls-cert/--tls-key pair and builds the contexts. On failure
 * returns NULL with one line in err ("--tls-key k.pem: <OpenSSL's reason>"). */
struct tls_server *tls_server_new(const struct settings *set, char *err, size_t cap);

/* --acme (issue 35): the challenge table tls-alpn-01 handshakes answer from. */
void tls_server_acme(struct tls_server *ts, struct acme_shared *sh);

/* For the start line: "kernel TLS available" or "userspace TLS: <why>". */
const char *tls_server_path(const struct tls_server *ts);

/* The master's tick: a new ticket key every 12 hours (the previous one still
 * decrypts). now is the wall clock in seconds. */
void tls_server_tick(struct tls_server *ts, int64_t now);

/* SIGHUP in the master: re-reads the certificates and keys, checks them
 * (a broken pair keeps the old ones and says why on the error log) and
 * publishes them to the workers, which pick them up on their own HUP.
 * Returns 0, or -1 when the old ones stay. */
int tls_server_reload(struct tls_server *ts, const struct settings *set);

/* ---- a worker --------------------------------------------------------------------- */

/* The address space tls_worker_init() reserves for max_conns connections
 * (main's start-up check adds it to the workers' other reservations). */
size_t tls_worker_reservation(unsigned max_conns);
/* Reserves the per-connection TLS state (called by worker_init). 0 or -1. */
int tls_worker_init(struct worker *w);
/* A connection accepted on the TLS listener: conn_accepted() has run; this
 * starts the handshake under its own deadline. 0, or -1 (closed). */
int tls_conn_start(struct worker *w, struct conn *c);
/* Connections whose bytes OpenSSL (or the TLS buffer) already holds get
 * them now: after each wait of the loop. True while any wait. */
void tls_run_ready(struct worker *w);
bool tls_has_ready(const struct worker *w);
/* HUP in a worker: new handshakes use the contexts the master published
 * last; connections in flight keep theirs. */
void tls_worker_reload(struct worker *w);
/* The worker's exit summary line (handshakes, failures, data paths). */
void tls_worker_report(const struct worker *w);
/* At exit (worker or master): gives OpenSSL's objects back, so the leak
 * checker sees none (our tables are mmap'd, which it does not scan). */
void tls_worker_exit(struct worker *w);
void tls_server_free(struct tls_server *ts);
/* In a child that serves no TLS (the --status process): frees the contexts
 * and unmaps the shared area, so the private keys and ticket keys are not
 * in its memory at all. */
void tls_server_forget(struct tls_server *ts);

/* Sites (issue 22): the certificate context (an index in the server's
 * pairs) SNI gives for host (lowercase, NUL-terminated; NULL: none) on
 * behalf of site, and the one connection c's handshake ended with (-1: c
 * is not TLS). Together they answer whether c may serve a request for a
 * site (sites.h). */
int tls_choose_ctx(const struct tls_server *ts, unsigned site, const char *host);
int tls_conn_ctx(const struct worker *w, const struct conn *c);
/* HTTP/3 (issue 34; QUIC's TLS is GnuTLS, src/http3/h3_tls.c): the number
 * of pairs, the generation the master published last, and a copy of pair
 * i's PEM texts of that generation into cert[cert_cap] and key[key_cap]
 * (lengths in *cert_len, *key_len; 0 for an ACME pair still pending).
 * False when a newer generation was published meanwhile (ask again) or a
 * text does not fit. */
unsigned tls_pairs(const struct tls_server *ts);
uint32_t tls_published(const struct tls_server *ts);
bool tls_published_pair(const struct tls_server *ts, uint32_t gen, unsigned i, char *cert,
                        size_t cert_cap, size_t *cert_len, char *key, size_t key_cap,
                        size_t *key_len);

/* Whether the handshake of c chose ALPN "h2" (issue 20). */
bool tls_conn_alpn_h2(const struct worker *w, const struct conn *c);

/* The TLS version of connection c ("TLSv1.3", a static string: the JSON
 * access log's "tls"), or NULL when c is not TLS or still in its handshake. */
const char *tls_conn_version(const struct worker *w, const struct conn *c);

/* --redirect-http: whether one of the certificates names host (a DNS
 * name or an address; lowercase, NUL-terminated), or an ACME name whose
 * certificate is on its way: only such a host is redirected to. */
bool tls_names_host(const struct tls_server *ts, const char *host);

extern const struct transport_ops transport_tls;

#endif /* PITH_TINY */
#endif

/* SPDX-License-Identifier: MIT */
/*
 * acme.h - automatic HTTPS (issue 35; docs/DESIGN.md §12): certificates
 * obtained and renewed with ACME (RFC 8555) for every site name without a
 * tls-cert of its own, validated over tls-alpn-01 (RFC 8737) on the TLS port
 * and http-01 on the plain port. What the rest of pith sees of it:
 *
 *   the master   acme_prepare() before forking (the state directory, the
 *                shared challenge table, a start line per name), then
 *                forks acme_run() as a process of its own and restarts it
 *                when it dies; ACME_READY_CERTS on the ready pipe makes it
 *                reload the TLS pairs exactly as SIGHUP does;
 *   a worker     answers the challenges the ACME process publishes in the
 *                shared table: acme_http01() for /.well-known/acme-challenge/
 *                and acme_tlsalpn01() in the TLS handshake (tls_ctx.c).
 *
 * Only the ACME process talks to the CA, holds the account key, or sees a
 * certificate's key before its certificate is in the state directory; the
 * challenge table holds public things only (tokens, key authorizations,
 * the self-signed challenge certificates and their throwaway keys).
 */
#ifndef PITH_ACME_H
#define PITH_ACME_H

#include "core/core.h"

#include <stdbool.h>
#include <stddef.h>

struct server;
struct settings;
struct acme_shared;

/* What the ACME process writes on the ready pipe (an int32, where a worker
 * writes its pid) when a certificate file changed: the master reloads the
 * pairs as on SIGHUP and the workers take the new contexts. */
#define ACME_READY_CERTS (-35)

#ifdef PITH_TINY
#include "acme/acme_none.h"
#else

#define ACME_BUILT       true

/* The master, before forking, with --acme: makes the state directory and
 * its folders (0700, given to --user; a failure is said, not fatal: HTTP
 * is served and the ACME process says why it cannot order) and maps the
 * challenge table into srv->acme. 0, or 1 after saying why on stderr. */
int acme_prepare(struct server *srv);

/* After the start line: one line per name saying whether a stored
 * certificate was loaded or one is being obtained. */
void acme_start_lines(const struct server *srv);

/* --check: the state directory (present and writable, or creatable) and
 * --acme-ca-root (a readable PEM certificate); the CA is not contacted.
 * Appends "; acme ..." to the plan's listen line. 0, or 2 after saying why. */
int acme_check(const struct settings *set, char *plan, size_t cap);

/* The ACME process: forked by the master (srv->acme set), confined on its
 * own (Landlock: the state directory, the CA's port; seccomp), it keeps
 * every name's certificate current until SIGTERM or the master's death.
 * Returns the exit code. */
int acme_run(struct server *srv);

/* A worker, before it confines itself: the challenge table becomes
 * read-only in it (PROT_READ; its seccomp filter has no mprotect, so it
 * stays so). 0, or -errno. */
int acme_shared_readonly(struct acme_shared *sh);

/* A worker's request for path (normalized, beginning with '/'): when it is
 * /.well-known/acme-challenge/TOKEN, the key authorization published for
 * TOKEN into keyauth (cap bytes, NUL-terminated) and its length, or 0 when
 * none is (the answer is 404); -1 for any other path. */
#define ACME_KEYAUTH_CAP 256
int acme_http01(const struct acme_shared *sh, struct span path, char *keyauth, size_t cap);

/* A worker's TLS handshake that offered ALPN acme-tls/1 for name (lowercase,
 * NUL-terminated): the challenge certificate and key published for it, as
 * PEM texts into cert[*cert_len] and key[*key_len] (capacities in, lengths
 * out). 0, or -1 when no challenge for name is pending. */
int acme_tlsalpn01(const struct acme_shared *sh, const char *name, char *cert, size_t *cert_len,
                   char *key, size_t *key_len);

#endif /* PITH_TINY */
#endif

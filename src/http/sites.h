/* SPDX-License-Identifier: MIT */
/*
 * sites.h - the server's sites at run time (issue 22, docs/DESIGN.md §11):
 * which site answers a request, from the request's authority, whatever the
 * protocol that carried it (HTTP/1's Host or absolute-form target, HTTP/2's
 * :authority). The names and the roots were validated and opened at start
 * (settings.hosts, server.sites[]); nothing here allocates or fails.
 */
#ifndef PITH_SITES_H
#define PITH_SITES_H

#include "base/server.h"
#include "core/core.h"

/* The site named by authority (uri-host [ ":" port ], as the request's
 * parser accepted it; empty when the request has none), matched
 * case-insensitively without its port and one trailing dot; the default
 * site (sites[0]) when no site has that name. *named says whether a name
 * matched. */
const struct vsite *sites_pick(const struct server *srv, struct span authority, bool *named);

enum sites_verdict {
    SITES_SERVE,      /* *site answers */
    SITES_MISDIRECTED /* 421 Misdirected Request: this connection may not answer for it */
};

/* May this connection serve this authority? The one decision for every
 * protocol: HTTP/1's Host (or absolute-form authority) and HTTP/2's
 * :authority both come here, with the certificate context the connection's
 * TLS handshake ended with (tls_conn_ctx(); -1 for plain TCP).
 *
 * *site is sites_pick()'s. Over TLS, when the authority names a site (any
 * other host goes to the default site and is served) and SNI would have
 * given that name another certificate than this connection's, the answer is
 * SITES_MISDIRECTED (RFC 9110 §15.5.20; RFC 9113 §9.1.1: a client that
 * coalesced connections retries on a fresh one). With one certificate, or
 * sites that share one that names them all, that never happens; nor
 * without site names (one site): the server answers exactly as before. */
enum sites_verdict sites_route(const struct server *srv, int tls_ctx, struct span authority,
                               const struct vsite **site);

/* The authority's host as the access log shows it (nginx's $host: lowercase,
 * no port, no trailing dot) into out[cap]; its length, 0 when there is none. */
size_t sites_host_text(struct span authority, char *out, size_t cap);

#endif

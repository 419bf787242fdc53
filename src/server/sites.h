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

#include "core/core.h"
#include "server/server.h"

/* The site named by authority (uri-host [ ":" port ], as the request's
 * parser accepted it; empty when the request has none), matched
 * case-insensitively without its port and one trailing dot; the default
 * site (sites[0]) when no site has that name. *named says whether a name
 * matched. */
const struct vsite *sites_pick(const struct server *srv, struct span authority, bool *named);

/* The authority's host as the access log shows it (nginx's $host: lowercase,
 * no port, no trailing dot) into out[cap]; its length, 0 when there is none. */
size_t sites_host_text(struct span authority, char *out, size_t cap);

#endif

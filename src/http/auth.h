/* SPDX-License-Identifier: MIT */
/*
 * auth.h - basic auth (RFC 7617; issue 22): a site's path prefixes behind a
 * password file, checked before any file is opened. The full build only:
 * the hashes are checked by libxcrypt's crypt_rn (yescrypt, bcrypt, SHA-512
 * crypt; the library PAM uses), which pith-tiny does not link (its config
 * refuses `auth`, and auth_none.h makes the calls below no-ops).
 *
 * A check costs tens of milliseconds of CPU (yescrypt: about 50 ms at
 * mkpasswd's default cost; bcrypt 2 to 200 ms by cost; SHA-512 1 ms) and
 * the worker's loop waits meanwhile, so it is rare by design:
 *   - a credential that verified is remembered per worker (256 entries, by
 *     a SipHash-128 of the rule and the Authorization value under a key
 *     drawn when the worker starts): a signed-in client costs one lookup;
 *   - a client's failed sign-ins are counted across the workers
 *     (clients.h) for a minute from the first: past AUTH_FAILURES_MAX it
 *     gets 429 with Retry-After and no check, so a flood from one address
 *     costs the worker at most that many checks a minute;
 *   - an unknown user is checked against another user's hash anyway, so
 *     the time of an answer does not tell whether the user exists.
 * The answer (401 with WWW-Authenticate) is the same whether the path
 * exists or not; what crypt returns is compared in constant time.
 */
#ifndef PITH_AUTH_H
#define PITH_AUTH_H

#include "core/core.h"
#include "core/http_parse.h"

#define AUTH_FAILURES_MAX 10 /* failed sign-ins of one client a minute, across workers */
#define AUTH_WINDOW_S     60
#define AUTH_TRACKED      1024 /* clients with failures each worker remembers */

struct server;
struct worker;
struct exchange;
struct auth_rule;

#ifdef PITH_TINY
#include "http/auth_none.h"
#else

#define AUTH_BUILT true

/* The master, at start: reads every rule's password file (each file once)
 * and checks each line; every problem is one line on stderr ("FILE:LINE:
 * user 'bob': an MD5 crypt hash ($1$) is refused: ..."). 0, or 2 after
 * them. */
int auth_load(struct server *srv);

/* For a request for x's site whose normalized path is `path` (relative,
 * NUL-terminated): true when no rule covers it or its credentials are
 * good; false when an answer was queued (401, or 429 past the failure
 * limit). */
bool auth_allow(struct worker *w, struct exchange *x, const struct http_request *req,
                const char *path);

#endif
#endif

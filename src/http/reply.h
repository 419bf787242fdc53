/* SPDX-License-Identifier: MIT */
/*
 * reply.h - small fixed responses (errors, redirects, 204s) for any
 * handler, and the status for a failed open beneath the root.
 */
#ifndef PITH_REPLY_H
#define PITH_REPLY_H

#include "core/core.h"
#include "core/response.h"

struct worker;
struct exchange;

#define REPLY_ALLOW "GET, HEAD, OPTIONS" /* the methods pith serves */
/* Retry-After of a 503 for a client over --max-conns-per-client: seconds in
 * which one of its other connections has likely finished. */
#define REPLY_LIMIT_RETRY "5"

/* A response with the small fixed HTML body and one optional extra field
 * (extra_name NULL: none); `cacheable` adds the default Cache-Control. */
void reply_small(struct worker *w, struct exchange *x, int status,
                 const struct field_name *extra_name, struct span extra_value, bool cacheable);

/* The same, never cacheable, with "Vary: Accept-Encoding": the errors about a
 * file with precompressed variants (406, 412, 416), whose answer depends on
 * the representation Accept-Encoding selected. */
void reply_small_vary(struct worker *w, struct exchange *x, int status,
                      const struct field_name *extra_name, struct span extra_value);

/* An error response with the small fixed HTML body. 400, 408, 414, 431 and
 * 505 (the request's framing is unknown) close the connection; 405 carries
 * Allow. */
void reply_error(struct worker *w, struct exchange *x, int status);

/* The same with one more field (name NULL: none), on the page of
 * --error-page too: 503 with Retry-After, 401 with WWW-Authenticate. */
void reply_error_with(struct worker *w, struct exchange *x, int status,
                      const struct field_name *name, struct span value);

/* A client over --max-conns-per-client (issue 22): 503 with Retry-After,
 * and the connection closes; counted for /metrics. */
void reply_client_limit(struct worker *w, struct exchange *x);

/* Maps a failed open beneath the root (-errno) to the contract's status. */
int reply_open_error_status(int err);

#endif

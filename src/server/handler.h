/* SPDX-License-Identifier: MIT */
/*
 * handler.h - from a parsed request head to a filled exchange: the
 * protocol contract (docs/DESIGN.md §2), one row at a time. Handlers build
 * a struct response and queue it with exchange_reply(); they never see the
 * connection, its buffers or its transport.
 */
#ifndef PITH_HANDLER_H
#define PITH_HANDLER_H

#include "core/core.h"
#include "core/http_parse.h"

struct worker;
struct exchange;

/* Answers req (its spans point into the connection's input, valid for the
 * whole exchange). */
void handler_request(struct worker *w, struct exchange *x, const struct http_request *req);

/* An error response with the small fixed HTML body. 400, 408, 414, 431 and
 * 505 (the request's framing is unknown) close the connection. */
void handler_error(struct worker *w, struct exchange *x, int status);

/* A response with the small fixed HTML body and one optional extra field
 * (extra_name NULL: none); `cacheable` adds the default Cache-Control. */
void handler_small(struct worker *w, struct exchange *x, int status, const char *extra_name,
                   struct span extra_value, bool cacheable);

/* Maps a failed open beneath the root (-errno) to the contract's status. */
int handler_open_error_status(int err);

#endif

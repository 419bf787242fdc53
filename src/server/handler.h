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

#endif

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
#include "core/http_fields.h"
#include "core/http_parse.h"

struct worker;
struct exchange;

/* Answers req, whose fields' analysis is info (http_fields_analyze, or the
 * protocol's own field-by-field run of it) with its verdict (0, or the
 * status to refuse the request with, negated). req's spans point into the
 * protocol's memory, valid for the whole exchange; req and info themselves
 * only during the call. */
void handler_request(struct worker *w, struct exchange *x, const struct http_request *req,
                     const struct http_info *info, int verdict);

#endif

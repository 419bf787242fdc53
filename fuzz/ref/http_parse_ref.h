/* SPDX-License-Identifier: MIT */
/*
 * http_parse_ref.h - a deliberately slow, plainly correct
 * http_parse_request() for differential fuzzing (fuzz/fuzz_http_parse.c),
 * written from the RFC 9112 ABNF and the contract in http_parse.h, in two
 * phases unlike the fast parser's single pass: first the bytes are cut into
 * lines at every CR and LF (framing), then every line is judged on its own
 * by one function per ABNF rule, and every rule that fails, and every limit
 * that is crossed, proposes a verdict at the position of the byte that
 * decides it. The earliest proposal wins (http_parse.h: "the first position
 * where the bytes cannot be a valid head decides"); with none, the head is
 * either complete or AGAIN. Host code: it uses libc freely and must never
 * share code with src/core/http_parse.c (it borrows only the limits and the
 * struct http_request layout from http_parse.h).
 */
#ifndef PITH_HTTP_PARSE_REF_H
#define PITH_HTTP_PARSE_REF_H

#include <stdbool.h>
#include <stddef.h>

#include "core/http_parse.h"

/* Same contract as http_parse_request() over p[0..n). With http1_minor_any,
 * HTTP/1.x for any single digit x > 1 is accepted as minor version 1 (RFC
 * 9110 §2.5: a recipient of a higher minor version than it implements
 * processes the message as the highest it conforms to); without it only 1.0
 * and 1.1 are accepted and every other well-formed version is -505. */
long ref_http_parse(const char *p, size_t n, bool http1_minor_any, struct http_request *req);

#endif

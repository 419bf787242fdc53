/* SPDX-License-Identifier: MIT */
/*
 * file.h - the response for a regular file: preconditions (RFC 9110
 * §13.2.2), then Range (§14.2), then 200, 206 (one range, or
 * multipart/byteranges as a body source), 304, 412 or 416.
 */
#ifndef PITH_FILE_H
#define PITH_FILE_H

#include "core/core.h"

struct worker;
struct exchange;
struct fc_result;

/* Answers x for the regular file found by filecache_lookup(): a cache entry
 * (its reference passes to x) or an open descriptor (owned by x from now
 * on). name is the file's path beneath the root (for its type). */
void file_respond(struct worker *w, struct exchange *x, struct fc_result *res, struct span name);

/* The same with "Cache-Control: no-cache" (--fallback: the page stands for
 * many URLs and changes with each deploy). */
void file_respond_no_cache(struct worker *w, struct exchange *x, struct fc_result *res,
                           struct span name);

#endif

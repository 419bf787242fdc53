/* SPDX-License-Identifier: MIT */
/*
 * mime.h - the media type of a file from its name's extension.
 */
#ifndef PITH_MIME_H
#define PITH_MIME_H

#include "core.h"

#define MIME_DEFAULT "application/octet-stream"
#define MIME_EXT_MAX 16 /* longer extensions cannot be in the table */

/* The type for `name` (a file name or path; only the part after the last '.'
 * of the last segment counts, compared case-insensitively). Names without an
 * extension, or with one not in mime_list.h, get MIME_DEFAULT. The returned
 * span points to a constant string. O(log n) in the table size. */
struct span mime_lookup(struct span name);

/* The table, for tests: entry i's extension and type, or false past the end. */
bool mime_entry(size_t i, struct span *ext, struct span *type);

#endif

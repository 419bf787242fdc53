/* SPDX-License-Identifier: MIT */
/*
 * etag.h - strong entity tags (RFC 9110 §8.8.3) derived from what identifies a
 * file's content without reading it: inode, size and mtime to the nanosecond.
 * A replaced file (new inode), a rewritten one (new mtime) or a truncated one
 * (new size) gets a new tag.
 */
#ifndef PITH_ETAG_H
#define PITH_ETAG_H

#include "core.h"

/* Longest tag with its quotes: 4 hex numbers of up to 16 digits, 3 dashes. */
#define ETAG_MAX (2 + 4 * 16 + 3)

/* Writes the quoted tag into out[ETAG_MAX]; returns its length. */
size_t etag_make(uint64_t ino, uint64_t size, int64_t mtime_sec, uint32_t mtime_nsec, char *out);

#endif

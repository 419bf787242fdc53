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

/* A precompressed variant's tag: the original's (base, quoted) with the
 * coding and the variant file's own (ino, size, mtime) appended, e.g.
 * "a1-2b-65f0-0-br-a2-1c-65f1-0". Distinct from the original's and from
 * every other coding's, and new when either file changes. */
#define ETAG_VARIANT_MAX (ETAG_MAX + 1 + 4 + 4 * 17)
size_t etag_make_variant(struct span base, struct span coding, uint64_t ino, uint64_t size,
                         int64_t mtime_sec, uint32_t mtime_nsec, char *out);

#endif

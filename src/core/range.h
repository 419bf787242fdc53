/* SPDX-License-Identifier: MIT */
/*
 * range.h - the Range field for bytes (RFC 9110 §14.1.2, §14.2) against a
 * representation of a known size: parsed, clamped, sorted and coalesced into
 * a small caller array, with the amplification defences of
 * docs/DESIGN.md §2 (Apache CVE-2011-3192, nginx CVE-2017-7529).
 */
#ifndef PITH_RANGE_H
#define PITH_RANGE_H

#include "core.h"

/* More ranges than this after coalescing: serve the whole representation. */
#define RANGE_MAX 16

struct range {
    uint64_t first, last; /* inclusive, last < size */
};

#define RANGE_IGNORE        0      /* not a valid bytes range-set: 200 full */
#define RANGE_UNSATISFIABLE (-416) /* 416 with Content-Range: bytes * /size */
#define RANGE_TOO_MANY      (-1)   /* amplification: 200 full */

/*
 * Parses `value` (the field value) for a representation of `size` bytes.
 * Returns the number n >= 1 of ranges written to out[0..n) (sorted by first,
 * overlapping or adjacent ranges merged, each clamped to the size), or:
 *   RANGE_IGNORE         syntax error anywhere (e.g. "bytes=5-4", "items=0-1",
 *                        "bytes=", "bytes=1-2x"), which RFC 9110 §14.2 says
 *                        to ignore;
 *   RANGE_UNSATISFIABLE  valid, but no range overlaps the representation
 *                        (first-pos >= size, "-0", any range of an empty file);
 *   RANGE_TOO_MANY       more than `max` ranges: the ranges are merged in
 *                        the order received into at most `max` slots, and
 *                        one that finds no room ends the count (so "17
 *                        disjoint ranges, then one covering them all" is too
 *                        many: bounded work matters more than that client);
 *                        or the ranges as requested add up to more than the
 *                        size (each "0-" counts in full: "bytes=0-,0-" asks
 *                        twice).
 * Numbers of any length are accepted: a first-pos above UINT64_MAX is
 * unsatisfiable, a last-pos or suffix-length above it is clamped.
 * max must be <= RANGE_MAX.
 */
int range_parse(struct span value, uint64_t size, struct range *out, unsigned max);

/* The Content-Range value (RFC 9110 §14.4) for r of a representation of size
 * bytes, "bytes FIRST-LAST/SIZE", or for r NULL the unsatisfied form of a 416,
 * "bytes * /SIZE" (without the blank), at most RANGE_CONTENT_RANGE_MAX bytes.
 * One writer for the full build's 206, 416 and multipart parts and the
 * router profile's. */
#define RANGE_CONTENT_RANGE_MAX (6 + 20 + 1 + 20 + 1 + 20)
void range_content_range(struct buf *b, const struct range *r, uint64_t size);

#endif

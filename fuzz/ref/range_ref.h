/* SPDX-License-Identifier: MIT */
/*
 * range_ref.h - a deliberately slow, obviously correct range_parse() for
 * differential fuzzing (fuzz/fuzz_range.c): it splits the range-set on
 * commas, parses every element on its own with numbers kept as digit
 * strings (compared exactly, whatever their length), turns the satisfiable
 * ones into a list of intervals, sums what was requested in 128 bits, then
 * sorts and merges the list (and, for small sizes, also marks a bitmap of
 * bytes and reads the runs back, checking the two agree), and applies the
 * limits last, in the order range.h documents. Host code: it uses libc
 * freely and must never share code with src/core/range.c.
 */
#ifndef PITH_RANGE_REF_H
#define PITH_RANGE_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ref_range {
    uint64_t first, last;
};

/*
 * Quirks: each one reproduces a known deviation of src/core/range.c from
 * range.h, so a fuzz target can tell a known, reported difference from a new
 * one. 0 is the contract as written.
 */
/* K1: more than max disjoint ranges at any point while parsing, even if a
 * later range joins them into <= max, gives RANGE_TOO_MANY. */
#define REF_RANGE_QUIRK_PREFIX_MAX 1u
/* K2: numbers above UINT64_MAX compare as UINT64_MAX, so a 21-digit
 * "first-last" with last < first is not a syntax error. */
#define REF_RANGE_QUIRK_SATURATE 2u
/* K3: the requested total saturates at UINT64_MAX before it is compared
 * with the size. */
#define REF_RANGE_QUIRK_TOTAL_SATURATE 4u

/* Same contract as range_parse() over p[0..n) (RANGE_IGNORE 0,
 * RANGE_UNSATISFIABLE -416, RANGE_TOO_MANY -1, or n >= 1 ranges written to
 * out[0..n), out having room for max). */
int ref_range_parse(const char *p, size_t n, uint64_t size, struct ref_range *out, unsigned max,
                    unsigned quirks);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * range_ref.h - a deliberately slow, obviously correct range_parse() for
 * differential fuzzing (fuzz/fuzz_range.c): it splits the range-set on
 * commas, parses every element on its own with numbers kept as digit
 * strings (compared exactly, whatever their length), turns the satisfiable
 * ones into a list of intervals, sums what was requested in 128 bits, then
 * merges the list one interval at a time in the order received (each step:
 * append, sort, merge), stopping when a step holds more than max ranges
 * (range.h's count), checks the result against a one-shot sort-and-merge of
 * all intervals and, for small sizes, a bitmap of marked bytes read back as
 * runs, and applies the limits last, in the order range.h documents. Host code: it uses libc
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

/* Same contract as range_parse() over p[0..n) (RANGE_IGNORE 0,
 * RANGE_UNSATISFIABLE -416, RANGE_TOO_MANY -1, or n >= 1 ranges written to
 * out[0..n), out having room for max). */
int ref_range_parse(const char *p, size_t n, uint64_t size, struct ref_range *out, unsigned max);

#endif

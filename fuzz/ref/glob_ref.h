/* SPDX-License-Identifier: MIT */
/*
 * glob_ref.h - a deliberately slow, plainly correct glob_valid() and
 * glob_match() for differential fuzzing (fuzz/fuzz_glob.c). Unlike glob.c
 * (typed tokens, greedy star backtracking), the reference turns every
 * pattern item into a 256-entry table of the bytes it accepts ('?', sets and
 * literals alike; '*' is the only other kind), and matches by filling the
 * whole table "items i.. match name j.." from the end, one cell at a time.
 * The syntax is glob.h's; where glob.h is silent it follows the rules glob.c
 * states in its comments and the usual fnmatch() ones: a ']' first in a set
 * is a member, "a-b" in a set is a range (a '-' first or last is itself), a
 * '\' inside a set is itself, a '\' at the end of the pattern is itself,
 * "{n}" takes leading zeros, and a '{' after '*' is an ordinary byte. Host
 * code: it uses libc freely and must never share code with src/core/glob.c.
 */
#ifndef PITH_GLOB_REF_H
#define PITH_GLOB_REF_H

#include <stdbool.h>
#include <stddef.h>

/* Same contract as glob_valid() over pattern p[0..n). */
bool ref_glob_valid(const char *p, size_t n);

/* Same contract as glob_match(). */
bool ref_glob_match(const char *p, size_t pn, const char *name, size_t nn);

/* Writes into out[0..cap) a name that the valid pattern p[0..pn) matches,
 * each choice ('*' length, which accepted byte) taken from seed[0..sn) in
 * turn; returns its length, or (size_t)-1 when the pattern is invalid or
 * the name does not fit. An item that accepts no byte (an empty range) makes
 * the pattern match nothing: (size_t)-1 as well. */
size_t ref_glob_sample(const char *p, size_t pn, const unsigned char *seed, size_t sn, char *out,
                       size_t cap);

#endif

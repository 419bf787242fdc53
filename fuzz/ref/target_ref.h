/* SPDX-License-Identifier: MIT */
/*
 * target_ref.h - a deliberately slow, obviously correct target_normalize()
 * for differential fuzzing (fuzz/fuzz_target.c): it splits first, decodes
 * every segment into its own allocation, then removes dot-segments with an
 * explicit stack and checks each rule on the finished list, one rule at a
 * time, in the order target.h documents. Host code: it uses libc freely and
 * must never share code with src/core/target.c.
 */
#ifndef PITH_TARGET_REF_H
#define PITH_TARGET_REF_H

#include <stdbool.h>
#include <stddef.h>

/* Same contract as target_normalize() over p[0..n). */
long target_ref_normalize(const char *p, size_t n, char *out, size_t cap, unsigned *flags);

/* True when o[0..n) is a safe relative path: no leading or trailing '/', no
 * "//", no NUL, no "." or ".." segment, and no segment starting with '.'
 * except a first segment equal to ".well-known". */
bool target_ref_output_ok(const char *o, size_t n);

#endif

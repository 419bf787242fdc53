/* SPDX-License-Identifier: MIT */
/*
 * glob.h - shell-style patterns for file names (--immutable): '*' any run of
 * bytes, '?' one byte, '[...]' a set ("[a-f0-9]", "[!.]"), '\' escapes the
 * next byte, and one extension for hashed asset names: a set, '?' or a
 * literal may be followed by "{n}" (1..32) to repeat it n times, so
 * "*.[0-9a-f]{8}.*" matches "app.3f9a0c1e.js".
 *
 * The finer rules: a ']' first in a set is a member; ranges work inside
 * sets and a '\' there is a plain byte; a '\' at the end of the pattern is
 * a plain byte; "{n}" may have leading zeros; a '{' after '*', or alone, is
 * a plain byte, but "a{" without its "n}" makes the pattern invalid; the
 * GLOB_MAX_TOKENS limit counts repeats expanded.
 */
#ifndef PITH_GLOB_H
#define PITH_GLOB_H

#include "core.h"

#define GLOB_MAX_TOKENS 128

/* True when pattern is well formed (closed sets, valid {n}, not too long). */
bool glob_valid(struct span pattern);

/* True when name matches the whole pattern (an invalid pattern matches
 * nothing). Linear in name length times pattern tokens, no recursion. */
bool glob_match(struct span pattern, struct span name);

#endif

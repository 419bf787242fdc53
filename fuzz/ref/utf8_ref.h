/* SPDX-License-Identifier: MIT */
/*
 * utf8_ref.h - well-formed UTF-8 by the Unicode Standard's Table 3-7, for
 * the fuzz targets that check JSON output (fuzz/fuzz_escape.c,
 * fuzz/fuzz_listing.c). Host code, independent of src/core/escape.c: each
 * lead byte carries its own range for the second byte, so overlongs,
 * surrogates and code points above U+10FFFF are refused by the table, not
 * by arithmetic.
 */
#ifndef PITH_UTF8_REF_H
#define PITH_UTF8_REF_H

#include <stddef.h>
#include <stdint.h>

/* Length (1..4) of the well-formed sequence at p[0..n), n >= 1, and its code
 * point in *cp; 0 when none starts there. */
size_t ref_utf8_seq(const unsigned char *p, size_t n, uint32_t *cp);

/* What escape_json() promises its output decodes to: s[0..n) read as UTF-8,
 * each byte that starts no well-formed sequence standing for the code point
 * of its own value (U+0000..U+00FF). Writes at most n code points to out;
 * returns how many. */
size_t ref_utf8_lenient_decode(const char *s, size_t n, uint32_t *out);

#endif

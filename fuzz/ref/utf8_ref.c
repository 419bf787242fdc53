/* SPDX-License-Identifier: MIT */
/*
 * utf8_ref.c - the UTF-8 reading of utf8_ref.h, one row of Table 3-7 per
 * lead-byte range.
 */
#include "ref/utf8_ref.h"

/* The fuzzer is steered by the coverage of the code under test; the
 * reference's own branches would only add noise, and their comparison
 * callbacks cost most of a run. */
#pragma clang attribute push(__attribute__((no_sanitize("coverage"))), apply_to = function)

static const struct {
    unsigned char lo, hi;    /* lead byte range */
    unsigned char lo2, hi2;  /* second byte range */
    unsigned char len, bits; /* sequence length, payload mask of the lead */
} table_3_7[] = {
    {0xc2, 0xdf, 0x80, 0xbf, 2, 0x1f}, {0xe0, 0xe0, 0xa0, 0xbf, 3, 0x0f},
    {0xe1, 0xec, 0x80, 0xbf, 3, 0x0f}, {0xed, 0xed, 0x80, 0x9f, 3, 0x0f},
    {0xee, 0xef, 0x80, 0xbf, 3, 0x0f}, {0xf0, 0xf0, 0x90, 0xbf, 4, 0x07},
    {0xf1, 0xf3, 0x80, 0xbf, 4, 0x07}, {0xf4, 0xf4, 0x80, 0x8f, 4, 0x07},
};

size_t ref_utf8_seq(const unsigned char *p, size_t n, uint32_t *cp)
{
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    for (size_t i = 0; i < sizeof table_3_7 / sizeof table_3_7[0]; i++) {
        if (p[0] < table_3_7[i].lo || p[0] > table_3_7[i].hi)
            continue;
        size_t len = table_3_7[i].len;
        if (n < len || p[1] < table_3_7[i].lo2 || p[1] > table_3_7[i].hi2)
            return 0;
        uint32_t v = p[0] & table_3_7[i].bits;
        for (size_t k = 1; k < len; k++) {
            if (k > 1 && (p[k] < 0x80 || p[k] > 0xbf))
                return 0;
            v = v << 6 | (p[k] & 0x3f);
        }
        *cp = v;
        return len;
    }
    return 0;
}

size_t ref_utf8_lenient_decode(const char *s, size_t n, uint32_t *out)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = ref_utf8_seq(p + i, n - i, &cp);
        if (len == 0) {
            cp = p[i];
            len = 1;
        }
        out[k++] = cp;
        i += len;
    }
    return k;
}

#pragma clang attribute pop

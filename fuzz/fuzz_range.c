/* SPDX-License-Identifier: MIT */
/*
 * fuzz_range.c - differential fuzzing of range_parse() against the reference
 * in fuzz/ref/range_ref.c. The input's first 8 bytes choose the size (small
 * sizes the reference can check byte by byte, sizes near 2^63 and 2^64,
 * anything) and a max of 1..RANGE_MAX; the rest is the field value. Each
 * value is parsed for that size and again for sizes 0, 1, 10 and
 * UINT64_MAX. It traps when the verdict or the ranges differ from the
 * reference, or when an answer breaks range.h's promises on its own: ranges
 * sorted, disjoint, not adjacent, first <= last < size, at most max of them,
 * a known verdict. The output array holds exactly max ranges (ASan sees a
 * write past it); the value is libFuzzer's own exact-size buffer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/range.h"
#include "ref/range_ref.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_range: %s\n", what);
        __builtin_trap();
    }
}

static bool same(int a, const struct range *x, int b, const struct ref_range *y)
{
    if (a != b)
        return false;
    for (int i = 0; i < a; i++)
        if (x[i].first != y[i].first || x[i].last != y[i].last)
            return false;
    return true;
}

static void invariants(int got, const struct range *r, uint64_t size, unsigned max)
{
    require(got >= 1 || got == RANGE_IGNORE || got == RANGE_UNSATISFIABLE || got == RANGE_TOO_MANY,
            "unknown verdict");
    require(got <= (int)max, "more ranges than max");
    for (int i = 0; i < got; i++) {
        require(r[i].first <= r[i].last, "first > last");
        require(r[i].last < size, "last >= size");
        if (i > 0) {
            require(r[i - 1].last < r[i].first, "not sorted or overlapping");
            require(r[i - 1].last + 1 < r[i].first, "adjacent ranges not merged");
        }
    }
    if (size == 0)
        require(got <= 0, "a range of an empty representation");
}

static void differential(const char *p, size_t n, uint64_t size, unsigned max)
{
    struct range *out = malloc(max * sizeof *out);
    struct ref_range *ref = malloc(max * sizeof *ref);
    int got = range_parse(span_make(p, n), size, out, max);
    invariants(got, out, size, max);
    int want = ref_range_parse(p, n, size, ref, max);
    if (!same(got, out, want, ref)) {
        fprintf(stderr, "fuzz_range: size %llu max %u: range_parse %d, reference %d\n",
                (unsigned long long)size, max, got, want);
        for (int i = 0; i < got && i < want; i++)
            fprintf(stderr, "  [%d] %llu-%llu vs %llu-%llu\n", i, (unsigned long long)out[i].first,
                    (unsigned long long)out[i].last, (unsigned long long)ref[i].first,
                    (unsigned long long)ref[i].last);
        require(0, "differs from the reference");
    }
    free(out);
    free(ref);
}

/* Sizes worth reaching on purpose. */
static const uint64_t edges[8] = {
    UINT64_MAX, UINT64_MAX - 1,           INT64_MAX, (uint64_t)INT64_MAX + 1,
    UINT32_MAX, (uint64_t)UINT32_MAX + 1, 1000,      65535,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t h[8] = {0};
    size_t head = size < 8 ? size : 8;
    memcpy(h, data, head);
    uint64_t raw = 0;
    for (int i = 7; i >= 0; i--)
        raw = raw << 8 | h[i];
    uint64_t rep;
    switch (h[7] & 3) {
    case 0: rep = h[0] % 65; break;                                       /* byte by byte */
    case 1: rep = (uint64_t)(h[0] | h[1] << 8 | (h[2] & 1) << 16); break; /* 0..131071 */
    case 2: rep = raw; break;
    default: rep = edges[h[0] % 8] - (h[1] & 3); break;
    }
    unsigned max = (h[6] & 0x80) ? RANGE_MAX : 1 + h[6] % RANGE_MAX;
    const char *p = (const char *)data + head;
    size_t n = size - head;

    differential(p, n, rep, max);
    differential(p, n, 0, RANGE_MAX);
    differential(p, n, 1, RANGE_MAX);
    differential(p, n, 10, max);
    differential(p, n, UINT64_MAX, RANGE_MAX);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * test_bytes.c - the 64-bit decimal helpers of bytes.h that spare 32-bit
 * targets the 64-bit division helper: u64_div10_shift() against v / 10 at
 * every power of two and its neighbours, every multiple of ten's edges up
 * to 2^64 - 1, and pseudo-random values; u64_times10_fits() at the edge of
 * UINT64_MAX; u64_parse() and u64_format() round trips there.
 */
#include "core/bytes.h"
#include "unit.h"

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_div10(void)
{
    static const uint64_t edges[] = {0,
                                     1,
                                     9,
                                     10,
                                     11,
                                     19,
                                     20,
                                     99,
                                     100,
                                     4294967295u,
                                     4294967296u,
                                     UINT64_MAX / 10 * 10 - 1,
                                     UINT64_MAX / 10 * 10,
                                     UINT64_MAX - 1,
                                     UINT64_MAX};
    for (size_t i = 0; i < ARRAY_LEN(edges); i++)
        CHECK(u64_div10_shift(edges[i]) == edges[i] / 10, "an edge");
    unit_gen_begin();
    for (int b = 0; b < 64; b++)
        for (int64_t d = -12; d <= 12; d++) {
            uint64_t v = ((uint64_t)1 << b) + (uint64_t)d;
            CHECK(u64_div10_shift(v) == v / 10, "around a power of two");
        }
    for (uint64_t m = 10; m < UINT64_MAX / 10; m *= 10)
        for (uint64_t k = 1; k < 10; k++)
            for (int d = -1; d <= 1; d++) {
                uint64_t v = m * k + (uint64_t)d;
                CHECK(u64_div10_shift(v) == v / 10, "around k * 10^n");
            }
    uint64_t s = 0x9e3779b97f4a7c15u;
    long wrong = 0;
    for (int i = 0; i < 1000000; i++) {
        uint64_t v = xorshift(&s) >> (i % 64);
        wrong += u64_div10_shift(v) != v / 10;
    }
    CHECK_LONG(wrong, 0, "a million pseudo-random values");
    unit_gen_end();
}

static void test_parse_format(void)
{
    CHECK(u64_times10_fits(UINT64_MAX / 10, 5), "1844674407370955161 * 10 + 5 fits");
    CHECK(!u64_times10_fits(UINT64_MAX / 10, 6), "... + 6 does not");
    CHECK(!u64_times10_fits(UINT64_MAX / 10 + 1, 0), "one more times ten does not");
    CHECK(u64_times10_fits(UINT64_MAX / 10 - 1, 9), "one less: any digit fits");
    static const struct {
        const char *in;
        bool ok;
        uint64_t v;
    } rows[] = {
        {"18446744073709551615", true, UINT64_MAX},
        {"18446744073709551616", false, 0},
        {"18446744073709551620", false, 0},
        {"184467440737095516150", false, 0},
        {"00000000000000000000018446744073709551615", true, UINT64_MAX},
        {"0", true, 0},
        {"4294967296", true, 4294967296u},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        uint64_t v = 0;
        size_t n = strlen(rows[i].in);
        char *p = guarded_copy(rows[i].in, n);
        CHECK_LONG(u64_parse(span_make(p, n), &v), rows[i].ok, rows[i].in);
        if (rows[i].ok) {
            CHECK(v == rows[i].v, rows[i].in);
            char out[20];
            size_t k = u64_format(v, out);
            char want[32];
            int w = snprintf(want, sizeof want, "%llu", (unsigned long long)v);
            CHECK_MEM(out, k, want, (size_t)w, "formatted back");
        }
        guarded_free(p, n);
    }
}

int main(void)
{
    test_div10();
    test_parse_format();
    return unit_done();
}

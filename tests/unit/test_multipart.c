/* SPDX-License-Identifier: MIT */
/*
 * test_multipart.c - multipart_part_head(), multipart_end() and
 * multipart_length() against multipart.h and RFC 9110 §14.6: the exact
 * bytes of a first part head, a later one and the closing delimiter, the
 * struct buf rule when a head does not fit (nothing written, `full` set),
 * and multipart_length() equal to the bytes actually written plus the range
 * lengths for 1..16 pseudo-random sorted ranges of representations up to
 * 2^63 bytes, with boundaries of 1, 24 and 70 characters, the longest
 * type in mime_list.h and types of 600 and 5000 bytes. Output buffers lie
 * against a guard page.
 */
#include "core/multipart.h"
#include "unit.h"

#define B24          "0123456789abcdef01234567"
#define B70          "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef012345"
#define LONGEST_TYPE "application/vnd.openxmlformats-officedocument.presentationml.presentation"

static struct multipart mp(const char *boundary, const char *type, uint64_t size)
{
    return (struct multipart){span_make(boundary, strlen(boundary)), span_make(type, strlen(type)),
                              size};
}

static const struct head_row {
    const char *boundary, *type;
    uint64_t size, first, last;
    bool is_first;
    const char *want;
    const char *why;
} head_rows[] = {
    {B24, "text/plain; charset=utf-8", 1000, 0, 99, true,
     "--" B24 "\r\nContent-Type: text/plain; charset=utf-8\r\n"
     "Content-Range: bytes 0-99/1000\r\n\r\n",
     "first part: no leading CRLF"},
    {B24, "text/plain; charset=utf-8", 1000, 500, 999, false,
     "\r\n--" B24 "\r\nContent-Type: text/plain; charset=utf-8\r\n"
     "Content-Range: bytes 500-999/1000\r\n\r\n",
     "later part: CRLF before the delimiter"},
    {"b", "image/png", 1, 0, 0, true,
     "--b\r\nContent-Type: image/png\r\nContent-Range: bytes 0-0/1\r\n\r\n",
     "one-character boundary, one-byte file"},
    {B70, "application/octet-stream", UINT64_MAX, UINT64_MAX - 1, UINT64_MAX - 1, false,
     "\r\n--" B70 "\r\nContent-Type: application/octet-stream\r\n"
     "Content-Range: bytes 18446744073709551614-18446744073709551614/18446744073709551615\r\n\r\n",
     "70-character boundary, 20-digit numbers"},
};

static const struct end_row {
    const char *boundary;
    const char *want;
} end_rows[] = {
    {B24, "\r\n--" B24 "--\r\n"},
    {"b", "\r\n--b--\r\n"},
    {B70, "\r\n--" B70 "--\r\n"},
};

static void test_bytes(void)
{
    for (size_t i = 0; i < ARRAY_LEN(head_rows); i++) {
        const struct head_row *r = &head_rows[i];
        struct multipart m = mp(r->boundary, r->type, r->size);
        struct range rg = {r->first, r->last};
        size_t n = strlen(r->want);

        /* exactly the room it needs: written, not full */
        char *z = calloc(1, n);
        char *out = guarded_copy(z, n);
        struct buf b = buf_make(out, n);
        multipart_part_head(&b, &m, &rg, r->is_first);
        CHECK_MEM(out, b.len, r->want, n, r->why);
        CHECK_LONG(b.full, false, r->why);
        CHECK(n <= MULTIPART_PART_HEAD_MAX, r->why);
        guarded_free(out, n);

        /* one byte less: full is set and the output is a prefix of the head,
         * never a head with a byte missing in the middle */
        out = guarded_copy(z, n - 1);
        b = buf_make(out, n - 1);
        multipart_part_head(&b, &m, &rg, r->is_first);
        CHECK_LONG(b.full, true, r->why);
        CHECK(b.len < n && memcmp(out, r->want, b.len) == 0, r->why);
        guarded_free(out, n - 1);
        free(z);
    }
    for (size_t i = 0; i < ARRAY_LEN(end_rows); i++) {
        const struct end_row *r = &end_rows[i];
        struct multipart m = mp(r->boundary, "text/plain", 10);
        size_t n = strlen(r->want);
        char *out = guarded_copy(r->want, n);
        memset(out, 0, n);
        struct buf b = buf_make(out, n);
        multipart_end(&b, &m);
        CHECK_MEM(out, b.len, r->want, n, "closing delimiter");
        CHECK_LONG(b.full, false, "closing delimiter fits exactly");
        guarded_free(out, n);
    }
}

static uint64_t rng_state = 0x243f6a8885a308d3u;

static uint64_t rng_next(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* n sorted, disjoint, non-adjacent ranges of [0, size): 2n cut points, one
 * in each of 2n equal strides (in the stride's first half), paired. size
 * must be >= 4n. Constructive, so it cannot loop however small size is. */
static void random_ranges(uint64_t size, unsigned n, struct range *r)
{
    uint64_t stride = size / (2 * n), cut[2 * RANGE_MAX];
    for (unsigned i = 0; i < 2 * n; i++)
        cut[i] = i * stride + rng_next() % (stride / 2 ? stride / 2 : 1);
    for (unsigned i = 0; i < n; i++)
        r[i] = (struct range){cut[2 * i], cut[2 * i + 1]};
}

/* The head as the RFC spells it, by snprintf: an independent oracle. */
static size_t expected_head(char *out, size_t cap, const struct multipart *m, const struct range *r,
                            bool first)
{
    return (size_t)snprintf(out, cap,
                            "%s--%.*s\r\nContent-Type: %.*s\r\nContent-Range: bytes "
                            "%llu-%llu/%llu\r\n\r\n",
                            first ? "" : "\r\n", (int)m->boundary.n, m->boundary.p, (int)m->type.n,
                            m->type.p, (unsigned long long)r->first, (unsigned long long)r->last,
                            (unsigned long long)m->size);
}

static void test_length(void)
{
    static const char *const boundaries[] = {"x", B24, B70};
    static const char *const types[] = {"image/png", "text/html; charset=utf-8", LONGEST_TYPE};
    size_t cap = RANGE_MAX * (MULTIPART_PART_HEAD_MAX + 64) + 256;
    char *body = malloc(cap), want[1024];
    unit_gen_begin();
    for (int round = 0; round < 300; round++) {
        for (unsigned n = 1; n <= RANGE_MAX; n++) {
            uint64_t size;
            switch (round % 3) {
            case 0: size = 4 * RANGE_MAX + rng_next() % 1000; break;
            case 1: size = 4 * RANGE_MAX + rng_next() % (UINT64_C(1) << 40); break;
            default: size = (UINT64_C(1) << 63) - rng_next() % 1000; break;
            }
            struct multipart m = mp(boundaries[round % 3], types[(round / 3) % 3], size);
            struct range r[RANGE_MAX];
            random_ranges(size, n, r);

            struct buf b = buf_make(body, cap);
            uint64_t data = 0;
            bool heads_ok = true;
            for (unsigned i = 0; i < n; i++) {
                size_t at = b.len;
                multipart_part_head(&b, &m, &r[i], i == 0);
                size_t w = expected_head(want, sizeof want, &m, &r[i], i == 0);
                heads_ok = heads_ok && b.len - at == w && memcmp(body + at, want, w) == 0 &&
                           w <= MULTIPART_PART_HEAD_MAX;
                data += r[i].last - r[i].first + 1;
            }
            multipart_end(&b, &m);
            CHECK(!b.full && heads_ok, "heads equal snprintf's");
            CHECK(data <= size, "ranges inside the representation");
            uint64_t got = multipart_length(&m, r, n);
            CHECK(got == b.len + data, "multipart_length == heads + ranges + end");
            if (got != b.len + data)
                fprintf(stderr, "n=%u size=%llu: multipart_length %llu, written %zu + %llu\n", n,
                        (unsigned long long)size, (unsigned long long)got, b.len,
                        (unsigned long long)data);
        }
    }
    unit_gen_end();
    free(body);

    /* n == 0 is only the closing delimiter (not a response pith sends, but
     * the sum must still hold) */
    struct multipart m = mp(B24, "text/plain", 10);
    CHECK_LONG(multipart_length(&m, NULL, 0), 8 + 24, "no ranges: the end only");
    /* one range covering 2^63 - 1 bytes: the total does not wrap */
    struct range big = {0, (UINT64_C(1) << 63) - 2};
    m.size = (UINT64_C(1) << 63) - 1;
    uint64_t len = multipart_length(&m, &big, 1);
    CHECK(len > big.last && len - (big.last + 1) < MULTIPART_PART_HEAD_MAX + 64,
          "2^63 - 1 bytes in one part");
}

/* A head longer than MULTIPART_PART_HEAD_MAX (a long type) is still
 * counted exactly: multipart_length() has no scratch size to outgrow. */
static void test_long_type(void)
{
    static const size_t lens[] = {600, 5000};
    for (size_t k = 0; k < ARRAY_LEN(lens); k++) {
        char *type = malloc(lens[k] + 1);
        memset(type, 't', lens[k]);
        type[lens[k]] = 0;
        struct multipart m = mp(B24, type, 1000);
        struct range r[2] = {{0, 9}, {20, 29}};
        size_t cap = 3 * lens[k] + 1024;
        char *body = malloc(cap);
        struct buf b = buf_make(body, cap);
        multipart_part_head(&b, &m, &r[0], true);
        multipart_part_head(&b, &m, &r[1], false);
        multipart_end(&b, &m);
        CHECK(!b.full, "long type: written");
        CHECK_LONG(multipart_length(&m, r, 2), b.len + 20, "long type: exact length");
        free(body);
        free(type);
    }
}

int main(void)
{
    test_bytes();
    test_length();
    test_long_type();
    return unit_done();
}

/* SPDX-License-Identifier: MIT */
/*
 * fuzz_multipart.c - multipart/byteranges framing (multipart.h) for random
 * representations, ranges, types and boundaries. It traps when:
 *   - multipart_length() differs from the bytes the part heads, the ranges
 *     and the closing delimiter really take (summed in 128 bits, and for
 *     bodies up to 1 MiB written whole into a buf of exactly that length,
 *     which must end neither full nor short);
 *   - a part head needs more than MULTIPART_PART_HEAD_MAX (types from
 *     mime_list.h, boundaries of 1..70 bchars), or a counting buf measures a
 *     head other than what a real buf receives;
 *   - the body, read back as a client would (RFC 2046 §5.1.1: the first
 *     delimiter "--" boundary, then each next one found by searching for
 *     CRLF "--" boundary), does not give exactly the parts: the header lines
 *     "Content-Type: T" and "Content-Range: bytes F-L/S" (RFC 9110 §14.6),
 *     the range's bytes, and the close delimiter "--" CRLF at the very end.
 *     Only the representation's own bytes could hold the delimiter (pith's
 *     boundary is random); when the fuzzer plants it there, the search is
 *     skipped and the body is read by the lengths instead.
 * Ranges come from range_parse() (the rest of the input as a Range value),
 * as the server gets them, or straight from the input's bytes (any order,
 * overlapping). Input: 16 control bytes, then the Range value / range bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "core/mime.h"
#include "core/multipart.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_multipart: %s\n", what);
        __builtin_trap();
    }
}

#define BODY_MAX (64u << 10)

/* RFC 2046 §5.1.1 bcharsnospace (a space may only sit inside a boundary). */
static const char bchars[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=?";

/* The representation (when small enough to hold): the input's bytes over
 * and over, copied in doubling runs so that it costs no per-byte loop. */
static char *make_rep(const uint8_t *seed, size_t sn, uint64_t size)
{
    static const char fallback[] = "0123456789abcdef";
    char *rep = malloc(size ? size : 1);
    if (sn == 0) {
        seed = (const uint8_t *)fallback;
        sn = sizeof fallback - 1;
    }
    size_t filled = sn < size ? sn : size;
    memcpy(rep, seed, filled);
    while (filled < size) {
        size_t k = filled < size - filled ? filled : size - filled;
        memcpy(rep + filled, rep, k);
        filled += k;
    }
    return rep;
}

static bool lit(const char *body, size_t n, size_t *at, const char *s, size_t sl)
{
    if (n - *at < sl || memcmp(body + *at, s, sl) != 0)
        return false;
    *at += sl;
    return true;
}

/* The head a part must have, written here with snprintf. */
static size_t want_head(char *out, size_t cap, const struct multipart *m, const struct range *r,
                        bool first)
{
    int n = snprintf(
        out, cap, "%s--%.*s\r\nContent-Type: %.*s\r\nContent-Range: bytes %llu-%llu/%llu\r\n\r\n",
        first ? "" : "\r\n", (int)m->boundary.n, m->boundary.p, (int)m->type.n, m->type.p,
        (unsigned long long)r->first, (unsigned long long)r->last, (unsigned long long)m->size);
    return (size_t)n;
}

/* Reads the body back: by searching for delimiters when `search`, else by
 * the lengths the heads announce. */
static void read_back(const char *body, size_t n, const struct multipart *m, const struct range *r,
                      unsigned nr, const char *rep, bool search)
{
    char delim[80];
    size_t dl =
        (size_t)snprintf(delim, sizeof delim, "\r\n--%.*s", (int)m->boundary.n, m->boundary.p);
    size_t at = 0;
    require(lit(body, n, &at, delim + 2, dl - 2), "body does not start with --boundary");
    for (unsigned i = 0; i < nr; i++) {
        /* transport-padding is empty: CRLF right after the boundary */
        require(lit(body, n, &at, "\r\n", 2), "no CRLF after a delimiter");
        char h[512];
        size_t hl = want_head(h, sizeof h, m, &r[i], true);
        size_t fields = 2 + m->boundary.n + 2; /* skip "--B\r\n" of the wanted head */
        require(lit(body, n, &at, h + fields, hl - fields), "part header fields");
        uint64_t len = r[i].last - r[i].first + 1;
        size_t end = at + len;
        if (search) {
            const char *d = memmem(body + at, n - at, delim, dl);
            require(d != NULL, "no delimiter after a part");
            require((size_t)(d - body) == end, "the delimiter is not where the part ends");
        }
        require(n - at >= len, "part shorter than its range");
        require(memcmp(body + at, rep + r[i].first, len) == 0, "part bytes differ from the range");
        at = end;
        require(lit(body, n, &at, delim, dl), "no delimiter after a part");
    }
    require(lit(body, n, &at, "--\r\n", 4) && at == n, "no close delimiter at the end");
}

static bool rep_holds(const char *rep, const struct range *r, unsigned nr, const char *delim,
                      size_t dl)
{
    /* The delimiter inside a range, or begun by its last bytes. */
    for (unsigned i = 0; i < nr; i++) {
        uint64_t len = r[i].last - r[i].first + 1;
        const char *p = rep + r[i].first;
        if (memmem(p, len, delim, dl))
            return true;
        char tail[2 * 80];
        size_t t = len < dl - 1 ? len : dl - 1;
        memcpy(tail, p + len - t, t);
        memcpy(tail + t, delim, dl);
        if (memmem(tail, t + dl - 1, delim, dl))
            return true;
    }
    return false;
}

static void check(const struct multipart *m, const struct range *r, unsigned nr,
                  const uint8_t *seed, size_t sn)
{
    uint64_t length = multipart_length(m, r, nr);
    unsigned __int128 total = 0, data = 0;
    for (unsigned i = 0; i < nr; i++) {
        struct buf count = buf_counter();
        multipart_part_head(&count, m, &r[i], i == 0);
        char *h = malloc(count.len), want[512];
        struct buf b = buf_make(h, count.len);
        multipart_part_head(&b, m, &r[i], i == 0);
        require(!b.full && b.len == count.len, "part head: counted length differs from written");
        require(b.len <= MULTIPART_PART_HEAD_MAX, "part head longer than MULTIPART_PART_HEAD_MAX");
        size_t wl = want_head(want, sizeof want, m, &r[i], i == 0);
        require(wl == b.len && memcmp(h, want, wl) == 0, "part head differs from multipart.h");
        free(h);
        total += b.len;
        data += r[i].last - r[i].first + 1;
    }
    struct buf count = buf_counter();
    multipart_end(&count, m);
    total += count.len + data;
    if (total != length) {
        fprintf(stderr, "fuzz_multipart: multipart_length %llu, bytes %llu\n",
                (unsigned long long)length, (unsigned long long)total);
        require(0, "multipart_length differs from the bytes written");
    }
    if (total > BODY_MAX || m->size > BODY_MAX)
        return;
    char *rep = make_rep(seed, sn, m->size);

    char *body = malloc(length ? length : 1);
    struct buf b = buf_make(body, length);
    for (unsigned i = 0; i < nr; i++) {
        multipart_part_head(&b, m, &r[i], i == 0);
        buf_put(&b, rep + r[i].first, r[i].last - r[i].first + 1);
    }
    multipart_end(&b, m);
    require(!b.full && b.len == length, "the body does not fill exactly its length");
    char delim[80];
    size_t dl =
        (size_t)snprintf(delim, sizeof delim, "\r\n--%.*s", (int)m->boundary.n, m->boundary.p);
    read_back(body, length, m, r, nr, rep, !rep_holds(rep, r, nr, delim, dl));
    free(body);
    free(rep);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t c[16] = {0};
    size_t head = size < sizeof c ? size : sizeof c;
    memcpy(c, data, head);
    const uint8_t *rest = data + head;
    size_t rn = size - head;

    /* The representation's size: small (bodies written whole) or anything. */
    uint64_t rep = 0;
    for (int i = 7; i >= 0; i--)
        rep = rep << 8 | c[i];
    static const uint64_t edges[4] = {UINT64_MAX, (uint64_t)INT64_MAX + 1, 10000000000000000000u,
                                      99999};
    switch (c[15] & 3) {
    case 0: rep = 1 + c[0] % 200; break;
    case 1: rep = 1 + (c[0] | (uint64_t)c[1] << 8); break;
    case 2: break;
    default: rep = edges[c[0] & 3] - (c[1] & 3); break;
    }

    /* The type: one of mime_list.h's, or the default. */
    struct span ext, type;
    if (c[8] == 0xff || !mime_entry(c[8], &ext, &type))
        type = SPAN_LIT(MIME_DEFAULT);

    /* The boundary: pith's 24 hex digits, or 1..70 other bchars. */
    char boundary[70];
    size_t bn = MULTIPART_BOUNDARY_LEN;
    if (c[15] & 4) {
        bn = 1 + c[9] % 70;
        for (size_t i = 0; i < bn; i++)
            boundary[i] = bchars[(c[10 + i % 5] + i * 7) % (sizeof bchars - 1)];
    } else {
        for (size_t i = 0; i < bn; i++)
            boundary[i] = "0123456789abcdef"[(c[10 + i / 4 % 5] >> (i % 2 * 4)) & 15];
    }
    struct multipart m = {span_make(boundary, bn), type, rep};

    /* The ranges. */
    struct range r[RANGE_MAX];
    int n;
    if (c[15] & 8) {
        n = range_parse(span_make((const char *)rest, rn), rep, r, RANGE_MAX);
    } else {
        n = 0;
        for (size_t i = 0; i + 4 <= rn && n < RANGE_MAX && rep > 0; i += 4) {
            uint64_t a = (rest[i] | (uint64_t)rest[i + 1] << 8) * (rep > 65536 ? rep / 65536 : 1);
            uint64_t len = 1 + (rest[i + 2] | (uint64_t)rest[i + 3] << 8);
            a %= rep;
            r[n] = (struct range){a, len > rep - a ? rep - 1 : a + len - 1};
            n++;
        }
    }
    /* multipart.h: the length of a body; one past 2^64 bytes has none. The
     * server's ranges never get near (range.h: their sum is at most the
     * size), raw ones may. */
    unsigned __int128 sum = 0;
    for (int i = 0; i < n; i++)
        sum += r[i].last - r[i].first + 1;
    if (n < 1 || sum > UINT64_MAX - RANGE_MAX * MULTIPART_PART_HEAD_MAX)
        return 0;
    check(&m, r, (unsigned)n, rest, rn);
    return 0;
}

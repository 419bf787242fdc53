/* SPDX-License-Identifier: MIT */
/*
 * etag.c - the strong validator: "ino-size-sec-nsec" in hex. Hex keeps it
 * short and the fields are separated so two different tuples never print the
 * same tag.
 */
#include "etag.h"

#include "bytes.h"

size_t etag_make(uint64_t ino, uint64_t size, int64_t mtime_sec, uint32_t mtime_nsec, char *out)
{
    size_t n = 0;
    out[n++] = '"';
    n += u64_format_hex(ino, out + n);
    out[n++] = '-';
    n += u64_format_hex(size, out + n);
    out[n++] = '-';
    n += u64_format_hex((uint64_t)mtime_sec, out + n);
    out[n++] = '-';
    n += u64_format_hex(mtime_nsec, out + n);
    out[n++] = '"';
    return n;
}

size_t etag_make_variant(struct span base, struct span coding, uint64_t ino, uint64_t size,
                         int64_t mtime_sec, uint32_t mtime_nsec, char *out)
{
    PITH_ASSERT(base.n >= 2 && base.n <= ETAG_MAX && coding.n <= 4);
    char own[ETAG_MAX];
    size_t own_n = etag_make(ino, size, mtime_sec, mtime_nsec, own);
    size_t n = base.n - 1; /* without the closing quote */
    mem_copy(out, base.p, n);
    out[n++] = '-';
    mem_copy(out + n, coding.p, coding.n);
    n += coding.n;
    out[n++] = '-';
    mem_copy(out + n, own + 1, own_n - 1); /* its digits and closing quote */
    return n + own_n - 1;
}

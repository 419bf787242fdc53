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

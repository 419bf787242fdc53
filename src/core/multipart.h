/* SPDX-License-Identifier: MIT */
/*
 * multipart.h - multipart/byteranges framing (RFC 9110 §14.6) with its exact
 * length computed before a byte is sent, so the response carries a correct
 * Content-Length and the parts themselves can go by sendfile.
 *
 * The body is, for each range i: part_head(i) then the range's bytes; then
 * the closing delimiter.
 */
#ifndef PITH_MULTIPART_H
#define PITH_MULTIPART_H

#include "range.h"

#define MULTIPART_BOUNDARY_LEN 24 /* hex characters of randomness */
/* Room a part head needs: delimiter, two fields, two 20-digit numbers... */
#define MULTIPART_PART_HEAD_MAX (256 + 2 * MULTIPART_BOUNDARY_LEN)

struct multipart {
    struct span boundary; /* 1..70 bchars, no CR/LF (the caller's random hex) */
    struct span type;     /* the representation's Content-Type */
    uint64_t size;        /* the representation's length */
};

/* "\r\n--B\r\nContent-Type: T\r\nContent-Range: bytes F-L/S\r\n\r\n";
 * the first part starts without the leading CRLF. */
void multipart_part_head(struct buf *b, const struct multipart *m, const struct range *r,
                         bool first);

/* "\r\n--B--\r\n" */
void multipart_end(struct buf *b, const struct multipart *m);

/* The exact body length for ranges r[0..n). */
uint64_t multipart_length(const struct multipart *m, const struct range *r, unsigned n);

#endif

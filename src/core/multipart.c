/* SPDX-License-Identifier: MIT */
/*
 * multipart.c - part heads and their lengths. The length is computed by the
 * same code that writes the heads (into a counting buf), so the two can never
 * disagree (h2o computed it with separate digit-count loops).
 */
#include "multipart.h"

#include "bytes.h"

void multipart_part_head(struct buf *b, const struct multipart *m, const struct range *r,
                         bool first)
{
    if (!first)
        buf_put(b, "\r\n", 2);
    buf_put(b, "--", 2);
    buf_put_span(b, m->boundary);
    buf_put_cstr(b, "\r\nContent-Type: ");
    buf_put_span(b, m->type);
    buf_put_cstr(b, "\r\nContent-Range: ");
    range_content_range(b, r, m->size);
    buf_put_cstr(b, "\r\n\r\n");
}

void multipart_end(struct buf *b, const struct multipart *m)
{
    buf_put_cstr(b, "\r\n--");
    buf_put_span(b, m->boundary);
    buf_put_cstr(b, "--\r\n");
}

uint64_t multipart_length(const struct multipart *m, const struct range *r, unsigned n)
{
    struct buf count = buf_counter();
    uint64_t data = 0;
    for (unsigned i = 0; i < n; i++) {
        multipart_part_head(&count, m, &r[i], i == 0);
        data += r[i].last - r[i].first + 1;
    }
    multipart_end(&count, m);
    return count.len + data;
}

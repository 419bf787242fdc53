/* SPDX-License-Identifier: MIT */
/*
 * h1.c - HTTP/1.1 response heads (see h1.h). The framing decision is made
 * here and nowhere else: a handler states whether it knows the body's
 * length, and this file picks Content-Length, chunked or close-delimited
 * (RFC 9112 §6.1-§6.3) and the Connection field (§9.3, §9.6).
 */
#include "h1.h"

#include "bytes.h"
#include "respond.h"

static struct span tail_for(bool close, int minor)
{
    if (close)
        return SPAN_LIT("Connection: close\r\n\r\n");
    if (minor == 0)
        return SPAN_LIT("Connection: keep-alive\r\n\r\n");
    return SPAN_LIT("\r\n");
}

void h1_encode_head(struct buf *b, const struct response *r, const struct h1_context *cx,
                    struct h1_head *out)
{
    bool no_content = response_status_has_no_content(r->status);
    /* A body of unknown length ends with the connection on HTTP/1.0, which
     * has no chunked coding (RFC 9112 §6.3 rule 8). */
    bool close_delimited = !no_content && !r->length_known && cx->minor == 0;
    *out = (struct h1_head){
        .close = r->close || !cx->keep_alive || close_delimited,
        .chunked = !no_content && !r->length_known && !close_delimited && !r->no_body,
        .body = !no_content && !r->no_body,
    };
    respond_status_line(b, r->status);
    respond_field_span(b, FIELD(DATE)->h1, cx->date);
    if (cx->server.n)
        respond_field_span(b, FIELD(SERVER)->h1, cx->server);
    for (unsigned i = 0; i < r->nfields; i++)
        respond_field_span(b, r->field[i].name->h1, r->field[i].value);
    for (unsigned i = 0; i < cx->nextra; i++)
        respond_field_span(b, cx->extra[i].name->h1, cx->extra[i].value);
    if (!no_content) {
        if (r->length_known) {
            buf_put(b, "Content-Length: ", 16);
            buf_put_u64(b, r->length);
            buf_put(b, "\r\n", 2);
        } else if (!close_delimited) {
            buf_put(b, "Transfer-Encoding: chunked\r\n", 28);
        }
    }
    if (r->block && r->block->h1.n)
        out->block = r->block->h1;
    else if (r->block)
        field_block_encode_h1(b, r->block);
    out->tail = tail_for(out->close, cx->minor);
}

size_t h1_chunk_head(uint64_t n, char *out)
{
    size_t k = u64_format_hex(n, out);
    out[k++] = '\r';
    out[k++] = '\n';
    return k;
}

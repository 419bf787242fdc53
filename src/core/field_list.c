/* SPDX-License-Identifier: MIT */
/*
 * field_list.c - see field_list.h.
 */
#include "field_list.h"

#include "bytes.h"

/* A copy of v in keep (an empty span, and keep->full, when it does not fit). */
static struct span kept(struct buf *keep, struct span v)
{
    if (v.n == 0)
        return v; /* nothing to keep (and perhaps no pointer to copy from) */
    size_t at = keep->len;
    buf_put_span(keep, v);
    return keep->full ? (struct span){0} : span_make(keep->p + at, v.n);
}

static struct list_field named(const struct field_name *name, struct span value)
{
    if (name->lower.n)
        return (struct list_field){name->lower, value, true};
    return (struct list_field){name->h1, value, false};
}

unsigned field_list_encode(const struct response *r, const struct field_list_context *cx,
                           struct list_field *out, struct buf *keep)
{
    unsigned n = 0;
    char digits[20];
    struct buf d = buf_make(digits, sizeof digits);
    buf_put_u64(&d, (uint64_t)r->status);
    out[n++] = (struct list_field){SPAN_LIT(":status"), kept(keep, span_make(digits, d.len)), true};
    out[n++] = named(FIELD(DATE), kept(keep, cx->date));
    if (cx->server.n)
        out[n++] = named(FIELD(SERVER), cx->server);
    for (unsigned i = 0; i < r->nfields; i++)
        out[n++] = named(r->field[i].name, kept(keep, r->field[i].value));
    for (unsigned i = 0; i < cx->nextra; i++)
        out[n++] = named(cx->extra[i].name, cx->extra[i].value);
    if (!response_status_has_no_content(r->status) && r->length_known) {
        d = buf_make(digits, sizeof digits);
        buf_put_u64(&d, r->length);
        out[n++] = named(FIELD(CONTENT_LENGTH), kept(keep, span_make(digits, d.len)));
    }
    const struct field_block *b = r->block;
    for (unsigned i = 0; b && i < b->n; i++)
        out[n++] = named(b->f[i].name, b->lasting ? b->f[i].value : kept(keep, b->f[i].value));
    return n;
}

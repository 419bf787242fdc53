/* SPDX-License-Identifier: MIT */
/*
 * response.c - building a struct response (see response.h), and the HTTP/1
 * form of a field block, which h1.c writes the same way.
 */
#include "response.h"

#include "bytes.h"
#include "respond.h"

void response_add(struct response *r, const char *name, struct span value)
{
    PITH_ASSERT(r->nfields < RESPONSE_FIELDS_MAX);
    r->field[r->nfields++] = (struct response_field){span_make(name, cstr_len(name)), value};
}

bool response_status_has_no_content(int status)
{
    return status < 200 || status == 204 || status == 304;
}

void field_block_encode_h1(struct buf *b, const struct field_block *fb)
{
    for (unsigned i = 0; i < fb->n; i++)
        respond_field_span(b, fb->f[i].name, fb->f[i].value);
}

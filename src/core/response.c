/* SPDX-License-Identifier: MIT */
/*
 * response.c - building a struct response (see response.h), and the HTTP/1
 * form of a field block, which h1.c writes the same way.
 */
#include "response.h"

#include "bytes.h"
#include "respond.h"

#define FIELD_NAME_DEF(id, h1, lower)                                                              \
    const struct field_name field_name_##id = FIELD_NAME_INIT(h1, lower);
FIELD_NAME_LIST(FIELD_NAME_DEF)
#undef FIELD_NAME_DEF

void response_add(struct response *r, const struct field_name *name, struct span value)
{
    PITH_ASSERT(r->nfields < RESPONSE_FIELDS_MAX);
    r->field[r->nfields++] = (struct response_field){name, value};
}

bool response_status_has_no_content(int status)
{
    return status < 200 || status == 204 || status == 304;
}

void field_block_encode_h1(struct buf *b, const struct field_block *fb)
{
    for (unsigned i = 0; i < fb->n; i++)
        respond_field_span(b, fb->f[i].name->h1, fb->f[i].value);
}

/* SPDX-License-Identifier: MIT */
/*
 * field_list.h - a response head as the field list HTTP/2 (RFC 9113 §8.3.2)
 * and HTTP/3 (RFC 9114 §4.3.2) send, the encoder beside h1.h: ":status"
 * first, then the fields in the order HTTP/1's head has them (Date, Server,
 * the response's, the extra ones, content-length, the field block's), every
 * name lowercase (RFC 9113 §8.2.1). These protocols frame the body
 * themselves (DATA frames, the end of the stream), so the list never has a
 * connection-specific field (§8.2.2): no Connection, Keep-Alive,
 * Proxy-Connection or Transfer-Encoding is ever produced, none is filtered.
 *
 * The entries point at their bytes; the framing library serialises them
 * later (nghttp2 and nghttp3 keep pointers when told to, instead of copying).
 * So every value that might not outlive the exchange (a handler's stack
 * buffer, the per-second Date, the digits of the status and the length, a
 * block that is not lasting) is copied into `keep`, memory the caller's
 * exchange owns; what lasts (a lasting block, the extra fields, which are
 * the settings' or constants) is pointed at.
 */
#ifndef PITH_FIELD_LIST_H
#define PITH_FIELD_LIST_H

#include "response.h"

struct list_field {
    struct span name;  /* lowercase when `lower`; else as written, for the library to lowercase */
    struct span value; /* lives as long as the exchange (see above) */
    bool lower;
};

/* What the connection and the site add (as h1_context, less the framing). */
struct field_list_context {
    struct span date;                   /* the Date value */
    struct span server;                 /* empty: no Server field */
    const struct response_field *extra; /* lasting (settings, constants) */
    unsigned nextra;
};

/* Room enough for any response: :status, Date, Server, the response's,
 * content-length and a block's, and the extra fields given. */
#define FIELD_LIST_MAX(nextra) (4 + RESPONSE_FIELDS_MAX + FIELD_BLOCK_MAX + (nextra))

/* Writes r's fields into out (room for FIELD_LIST_MAX(cx->nextra)) and the
 * values that must be kept into keep; returns their count. keep->full when
 * it ran out (the caller sizes it for any head, as for h1). 1xx, 204 and
 * 304 have no content-length (RFC 9110 §8.6); a HEAD's is the GET's. */
unsigned field_list_encode(const struct response *r, const struct field_list_context *cx,
                           struct list_field *out, struct buf *keep);

#endif

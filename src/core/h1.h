/* SPDX-License-Identifier: MIT */
/*
 * h1.h - the HTTP/1.1 encoding of a response (RFC 9112 §4-§7): the one place
 * that decides a response's framing on an HTTP/1 connection. From a struct
 * response and what the request allowed it writes the status line, Date,
 * Server, Content-Length or Transfer-Encoding: chunked (or neither, for a
 * close-delimited HTTP/1.0 body and for 1xx/204/304), the fields, and
 * Connection, and says whether the connection ends after the response.
 * Every response is sent as HTTP/1.1 (RFC 9110 §6.2), also to 1.0 clients.
 *
 * The head goes out as up to three pieces so that a cache hit copies nothing
 * but the status line, Date, Server and length: the bytes written to the
 * caller's buffer, the field block's kept HTTP/1 form (by reference), and a
 * constant tail.
 */
#ifndef PITH_H1_H
#define PITH_H1_H

#include "response.h"

/* What the connection and the request contribute to a head. */
struct h1_context {
    struct span date;                   /* the Date value (IMF-fixdate) */
    struct span server;                 /* the Server value; empty: no Server field */
    const struct response_field *extra; /* more fields, after r's (the site's, HSTS) */
    unsigned nextra;
    int minor;       /* the request's HTTP/1.<minor>, 0 or 1 */
    bool keep_alive; /* the request allows the connection to persist */
};

struct h1_head {
    struct span block; /* the field block's HTTP/1 bytes, sent after the
                        * buffer's (empty when none, or written into it) */
    struct span tail;  /* constant bytes that end the head, sent last */
    bool close;        /* the connection ends after this response */
    bool chunked;      /* the body is sent in chunks (h1_chunk_head) */
    bool body;         /* a body follows the head (not HEAD, 204, 304) */
};

/*
 * Writes the head of r to b and fills *out. The head on the wire is b's new
 * bytes, then out->block, then out->tail. Framing rules:
 *   - 1xx, 204, 304: no Content-Length, no Transfer-Encoding, no body;
 *   - length_known: Content-Length (also for HEAD: the GET's length);
 *   - otherwise HTTP/1.1: Transfer-Encoding: chunked; HTTP/1.0: neither,
 *     the body ends with the connection (so out->close);
 *   - Connection: close when r->close, when the request did not allow
 *     persistence, or for a close-delimited body; "Connection: keep-alive"
 *     for a persistent HTTP/1.0 connection; nothing otherwise.
 * On overflow b->full is set (the caller's buffer is sized for any head).
 */
void h1_encode_head(struct buf *b, const struct response *r, const struct h1_context *cx,
                    struct h1_head *out);

/* A chunk's size line, "<hex>\r\n", into out (H1_CHUNK_HEAD_MAX bytes);
 * returns its length. n > 0: a zero size would end the body. */
#define H1_CHUNK_HEAD_MAX 18
size_t h1_chunk_head(uint64_t n, char *out);

#define H1_CHUNK_TAIL "\r\n"      /* after each chunk's data */
#define H1_LAST_CHUNK "0\r\n\r\n" /* the end of a chunked body, no trailers */

#endif

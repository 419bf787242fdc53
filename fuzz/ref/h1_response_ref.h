/* SPDX-License-Identifier: MIT */
/*
 * h1_response_ref.h - a slow, plain reader of an HTTP/1.1 response head, as
 * a client would read it (RFC 9112 §4, §5, §6.3), for the round-trip fuzzing
 * of the h1 encoder: it shares no code with src/core.
 */
#ifndef PITH_H1_RESPONSE_REF_H
#define PITH_H1_RESPONSE_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REF_FIELDS_MAX 64

struct ref_field {
    const char *name, *value; /* pointers into the parsed copy */
    size_t name_len, value_len;
};

enum ref_framing {
    REF_NO_BODY,         /* 1xx, 204, 304 (or HEAD, which the caller knows) */
    REF_CONTENT_LENGTH,  /* length in content_length */
    REF_CHUNKED,         /* Transfer-Encoding: chunked, last */
    REF_CLOSE_DELIMITED, /* neither: the body ends with the connection */
};

struct ref_response {
    int version_minor;
    int status;
    struct ref_field f[REF_FIELDS_MAX];
    size_t nfields;
    enum ref_framing framing;
    uint64_t content_length;
    bool conn_close;      /* a Connection field with the token "close" */
    bool conn_keep_alive; /* a Connection field with the token "keep-alive" */
    size_t head_len;      /* bytes up to and including the empty line */
};

/* Reads the response head at p[0..n) (the whole head, nothing after it is
 * looked at). Returns false for anything a strict client would refuse:
 * a bad status line, a field line that is not token ":" OWS value OWS, a
 * bare CR or LF, two Content-Length, Content-Length with Transfer-Encoding,
 * framing fields on a 204 or 304, a missing empty line. */
bool ref_parse_response(const char *p, size_t n, struct ref_response *out);

#endif

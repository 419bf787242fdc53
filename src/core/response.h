/* SPDX-License-Identifier: MIT */
/*
 * response.h - a response head as facts, not bytes: the status, a list of
 * fields, and the framing facts (whether the body's length is known, whether
 * a body follows at all, whether the server wants the connection closed).
 * Handlers describe a response here once; each protocol's encoder (HTTP/1 in
 * h1.h, HTTP/2 later) turns the same facts into its own wire form and alone
 * decides the framing fields (Content-Length, Transfer-Encoding, Connection),
 * which a handler therefore never writes.
 *
 * Fields that outlive one response (a cached file's validators and type) sit
 * in a struct field_block that may also carry their HTTP/1 encoding, made
 * once, so a cache hit queues those bytes as they are instead of encoding
 * them again; a block that outlives the exchange (a cache entry's, which
 * the exchange holds) says so, and the encoders of HTTP/2 and HTTP/3 then
 * point at its values instead of copying them.
 */
#ifndef PITH_RESPONSE_H
#define PITH_RESPONSE_H

#include "core.h"

#define RESPONSE_FIELDS_MAX 8 /* per-response fields, besides a field block */
#define FIELD_BLOCK_MAX     8

/* A field name in both spellings: HTTP/1 writes it as it is customarily
 * capitalised ("Content-Type", "ETag"), HTTP/2 and HTTP/3 lowercase (RFC
 * 9113 §8.2.1, RFC 9114 §4.2). The names pith writes itself are constants
 * with both forms (FIELD()), so neither encoder changes a byte of them; a
 * name an operator gave (--header) has no lowercase form kept (lower
 * empty), and the framing library lowercases its copy. */
struct field_name {
    struct span h1;
#ifndef PITH_TINY      /* pith-tiny and the router speak HTTP/1 alone: no bytes for the other */
    struct span lower; /* empty: not kept */
#endif
};

/* A constant field_name: FIELD_NAME_INIT("X-Name", "x-name"). */
#ifdef PITH_TINY
#define FIELD_NAME_INIT(h1, lower)                                                                 \
    {                                                                                              \
        SPAN_LIT(h1)                                                                               \
    }
#else
#define FIELD_NAME_INIT(h1, lower)                                                                 \
    {                                                                                              \
        SPAN_LIT(h1), SPAN_LIT(lower)                                                              \
    }
#endif

#define FIELD_NAME_LIST(X)                                                                         \
    X(ACCEPT_RANGES, "Accept-Ranges", "accept-ranges")                                             \
    X(ACAO, "Access-Control-Allow-Origin", "access-control-allow-origin")                          \
    X(ACAH, "Access-Control-Allow-Headers", "access-control-allow-headers")                        \
    X(ACAM, "Access-Control-Allow-Methods", "access-control-allow-methods")                        \
    X(ACEH, "Access-Control-Expose-Headers", "access-control-expose-headers")                      \
    X(ACMA, "Access-Control-Max-Age", "access-control-max-age")                                    \
    X(ALLOW, "Allow", "allow")                                                                     \
    X(ALT_SVC, "Alt-Svc", "alt-svc")                                                               \
    X(CACHE_CONTROL, "Cache-Control", "cache-control")                                             \
    X(CONTENT_ENCODING, "Content-Encoding", "content-encoding")                                    \
    X(CONTENT_LENGTH, "Content-Length", "content-length")                                          \
    X(CONTENT_RANGE, "Content-Range", "content-range")                                             \
    X(CONTENT_TYPE, "Content-Type", "content-type")                                                \
    X(DATE, "Date", "date")                                                                        \
    X(ETAG, "ETag", "etag")                                                                        \
    X(LAST_MODIFIED, "Last-Modified", "last-modified")                                             \
    X(LOCATION, "Location", "location")                                                            \
    X(RETRY_AFTER, "Retry-After", "retry-after")                                                   \
    X(SERVER, "Server", "server")                                                                  \
    X(HSTS, "Strict-Transport-Security", "strict-transport-security")                              \
    X(VARY, "Vary", "vary")                                                                        \
    X(WWW_AUTHENTICATE, "WWW-Authenticate", "www-authenticate")

/* One object per name, not a table: a build links only the names it uses
 * (pith-tiny and the router drop HTTP/2's and the CORS names). */
#define FIELD_NAME_DECL(id, h1, lower) extern const struct field_name field_name_##id;
FIELD_NAME_LIST(FIELD_NAME_DECL)
#undef FIELD_NAME_DECL

/* The constant name FIELD(CONTENT_TYPE), as a const struct field_name *. */
#define FIELD(id) (&field_name_##id)

struct response_field {
    const struct field_name *name; /* a token */
    struct span value;             /* no CR, LF or NUL (the caller guarantees it) */
};

/* Fields shared by many responses (a cache entry's), and optionally their
 * HTTP/1 form ("Name: value\r\n" each, in order). */
struct field_block {
    struct response_field f[FIELD_BLOCK_MAX];
    unsigned n;
    struct span h1; /* empty: the encoder writes f itself */
    bool lasting;   /* its bytes live as long as any exchange that uses it */
};

struct response {
    int status;
    struct response_field field[RESPONSE_FIELDS_MAX];
    unsigned nfields;
    const struct field_block *block; /* more fields after `field`, or NULL */
    uint64_t length;                 /* the body's length, when length_known */
    bool length_known;               /* else the body ends by the protocol's own means */
    bool no_body;                    /* HEAD: the framing of the GET, but no body follows */
    bool close;                      /* the server ends the connection after this response */
};

/* Starts r as a response with status and nothing else (no fields, an
 * empty body). Only the scalars are set: the field array is not touched. */
static inline void response_init(struct response *r, int status)
{
    r->status = status;
    r->nfields = 0;
    r->block = NULL;
    r->length = 0;
    r->length_known = true;
    r->no_body = false;
    r->close = false;
}

/* Appends a field; the caller stays within RESPONSE_FIELDS_MAX (asserted). */
void response_add(struct response *r, const struct field_name *name, struct span value);

/* Sets the body's length (length_known). */
static inline void response_set_length(struct response *r, uint64_t n)
{
    r->length = n;
    r->length_known = true;
}

/* True when the status forbids a body and framing fields (1xx, 204, 304:
 * RFC 9110 §6.4.1, §15.3.5, §15.4.5). */
bool response_status_has_no_content(int status);

/* The block's HTTP/1 form into b (what h1 would write for it), for a field
 * block that keeps its encoding; b->full when it does not fit. */
void field_block_encode_h1(struct buf *b, const struct field_block *fb);

#endif

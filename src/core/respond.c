/* SPDX-License-Identifier: MIT */
/*
 * respond.c - status lines, header fields and error bodies. The error page is
 * fixed text around the status and reason, so its length is known before a
 * byte of it is written and it can never reflect attacker-controlled input.
 */
#include "respond.h"

#include "bytes.h"

/* The statuses pith sends and their reasons (RFC 9110 §15), as data only:
 * the codes, the reasons one after another without separators, and where
 * each ends, computed by the compiler from a struct of char arrays (issue
 * 36: about 600 bytes less than a table of whole status lines with a
 * pointer each). The router profile leaves out the statuses it never sends
 * (PITH_ROUTER). */
#ifdef PITH_ROUTER
#define FULL_ONLY(X, code, text)
#else
#define FULL_ONLY(X, code, text) X(code, text)
#endif
#define STATUSES(X)                                                                                \
    X(200, "OK")                                                                                   \
    X(204, "No Content")                                                                           \
    X(206, "Partial Content")                                                                      \
    X(301, "Moved Permanently")                                                                    \
    X(304, "Not Modified")                                                                         \
    FULL_ONLY(X, 308, "Permanent Redirect") /* --redirect-http */                                  \
    X(400, "Bad Request")                                                                          \
    FULL_ONLY(X, 401, "Unauthorized") /* basic auth (issue 22) */                                  \
    X(403, "Forbidden")                                                                            \
    X(404, "Not Found")                                                                            \
    X(405, "Method Not Allowed")                                                                   \
    FULL_ONLY(X, 406, "Not Acceptable")                                                            \
    X(408, "Request Timeout")                                                                      \
    X(412, "Precondition Failed")                                                                  \
    X(414, "URI Too Long")                                                                         \
    X(416, "Range Not Satisfiable")                                                                \
    FULL_ONLY(X, 421, "Misdirected Request") /* sites: another certificate's host */               \
    FULL_ONLY(X, 429, "Too Many Requests")   /* basic auth: failures past the limit */             \
    X(431, "Request Header Fields Too Large")                                                      \
    X(500, "Internal Server Error")                                                                \
    X(501, "Not Implemented")                                                                      \
    X(503, "Service Unavailable")                                                                  \
    X(505, "HTTP Version Not Supported")

#define AS_CODE(code, text)  code,
#define AS_FIELD(code, text) char r##code[sizeof(text) - 1];
#define AS_TEXT(code, text)  text
#define AS_END(code, text)   offsetof(struct reasons, r##code) + sizeof(text) - 1,

struct reasons {
    STATUSES(AS_FIELD)
};

static const uint16_t codes[] = {STATUSES(AS_CODE)};
static const char texts[] = STATUSES(AS_TEXT);
static const uint16_t ends[] = {STATUSES(AS_END)};

struct span respond_reason(int status)
{
    for (size_t i = 0; i < ARRAY_LEN(codes); i++)
        if (codes[i] == status) {
            size_t at = i ? ends[i - 1] : 0;
            return span_make(texts + at, ends[i] - at);
        }
    return SPAN_LIT("Unknown");
}

bool respond_status_closes(int status)
{
    return status == 400 || status == 408 || status == 414 || status == 431 || status == 505;
}

void respond_status_line(struct buf *b, int status)
{
    buf_put(b, "HTTP/1.1 ", 9);
    buf_put_u64(b, (uint64_t)status);
    buf_put_char(b, ' ');
    buf_put_span(b, respond_reason(status));
    buf_put(b, "\r\n", 2);
}

void respond_field(struct buf *b, const char *name, struct span value)
{
    buf_put_cstr(b, name);
    buf_put(b, ": ", 2);
    buf_put_span(b, value);
    buf_put(b, "\r\n", 2);
}

void respond_field_span(struct buf *b, struct span name, struct span value)
{
    buf_put_span(b, name);
    buf_put(b, ": ", 2);
    buf_put_span(b, value);
    buf_put(b, "\r\n", 2);
}

void respond_field_cstr(struct buf *b, const char *name, const char *value)
{
    respond_field(b, name, span_make(value, cstr_len(value)));
}

void respond_field_u64(struct buf *b, const char *name, uint64_t value)
{
    buf_put_cstr(b, name);
    buf_put(b, ": ", 2);
    buf_put_u64(b, value);
    buf_put(b, "\r\n", 2);
}

void respond_end_head(struct buf *b)
{
    buf_put(b, "\r\n", 2);
}

/* <!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>
 * <body><h1>404 Not Found</h1></body></html>\n */
static const char body_a[] = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>";
static const char body_b[] = "</title></head>\n<body><h1>";
static const char body_c[] = "</h1></body></html>\n";

size_t respond_error_body_len(int status)
{
    /* The title's length assumes a three-digit status (RFC 9110 §15). */
    PITH_ASSERT(status >= 100 && status <= 999);
    size_t title = 4 + respond_reason(status).n; /* "404 " + reason */
    return sizeof body_a - 1 + sizeof body_b - 1 + sizeof body_c - 1 + 2 * title;
}

static void put_title(struct buf *b, int status)
{
    buf_put_u64(b, (uint64_t)status);
    buf_put_char(b, ' ');
    buf_put_span(b, respond_reason(status));
}

void respond_error_body(struct buf *b, int status)
{
    buf_put(b, body_a, sizeof body_a - 1);
    put_title(b, status);
    buf_put(b, body_b, sizeof body_b - 1);
    put_title(b, status);
    buf_put(b, body_c, sizeof body_c - 1);
}

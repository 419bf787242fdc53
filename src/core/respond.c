/* SPDX-License-Identifier: MIT */
/*
 * respond.c - status lines, header fields and error bodies. The error page is
 * fixed text around the status and reason, so its length is known before a
 * byte of it is written and it can never reflect attacker-controlled input.
 */
#include "respond.h"

#include "bytes.h"

/* Each known status with its whole status line, made by the preprocessor,
 * so a status line costs one copy; the reason phrase is read inside it. */
#define STATUS(code, text)                                                                         \
    {                                                                                              \
        "HTTP/1.1 " #code " " text "\r\n", code, sizeof(text) - 1                                  \
    }
#define REASON_AT 13 /* "HTTP/1.1 " and "200 " */

struct status_reason {
    const char *line;
    unsigned short status;
    unsigned char reason_len;
};

static const struct status_reason reasons[] = {
    STATUS(200, "OK"),
    STATUS(204, "No Content"),
    STATUS(206, "Partial Content"),
    STATUS(301, "Moved Permanently"),
    STATUS(304, "Not Modified"),
#ifndef PITH_ROUTER                    /* the router profile never sends it */
    STATUS(308, "Permanent Redirect"), /* --redirect-http */
#endif
    STATUS(400, "Bad Request"),
#ifndef PITH_ROUTER              /* the router profile never sends it */
    STATUS(401, "Unauthorized"), /* basic auth (issue 22) */
#endif
    STATUS(403, "Forbidden"),
    STATUS(404, "Not Found"),
    STATUS(405, "Method Not Allowed"),
#ifndef PITH_ROUTER /* the router profile never sends it */
    STATUS(406, "Not Acceptable"),
#endif
    STATUS(408, "Request Timeout"),
    STATUS(412, "Precondition Failed"),
    STATUS(414, "URI Too Long"),
    STATUS(416, "Range Not Satisfiable"),
#ifndef PITH_ROUTER                     /* the router profile never sends it */
    STATUS(421, "Misdirected Request"), /* sites: another certificate's host (issue 22) */
#endif
#ifndef PITH_ROUTER                   /* the router profile never sends it */
    STATUS(429, "Too Many Requests"), /* basic auth: failures past the limit */
#endif
    STATUS(431, "Request Header Fields Too Large"),
    STATUS(500, "Internal Server Error"),
    STATUS(501, "Not Implemented"),
    STATUS(503, "Service Unavailable"),
    STATUS(505, "HTTP Version Not Supported"),
};

static const struct status_reason *find(int status)
{
    for (size_t i = 0; i < ARRAY_LEN(reasons); i++)
        if (reasons[i].status == status)
            return &reasons[i];
    return NULL;
}

struct span respond_reason(int status)
{
    const struct status_reason *r = find(status);
    return r ? span_make(r->line + REASON_AT, r->reason_len) : SPAN_LIT("Unknown");
}

bool respond_status_closes(int status)
{
    return status == 400 || status == 408 || status == 414 || status == 431 || status == 505;
}

void respond_status_line(struct buf *b, int status)
{
    const struct status_reason *r = find(status);
    if (r) {
        buf_put(b, r->line, REASON_AT + r->reason_len + 2); /* reason CRLF */
        return;
    }
    buf_put_cstr(b, "HTTP/1.1 ");
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

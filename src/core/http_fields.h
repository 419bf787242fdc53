/* SPDX-License-Identifier: MIT */
/*
 * http_fields.h - what the fields of a parsed request mean to an origin
 * server that accepts no request content: message framing (RFC 9112 §6),
 * Host (RFC 9112 §3.2, RFC 9110 §7.2), Connection (RFC 9110 §7.6.1), and the
 * fields later stages read (preconditions, Range, Accept-Encoding, logging).
 */
#ifndef PITH_HTTP_FIELDS_H
#define PITH_HTTP_FIELDS_H

#include "http_parse.h"

/* Field lines of one list-valued field (RFC 9110 §5.3 allows splitting a
 * list across lines); more lines than this is a 400. */
#define HTTP_LIST_MAX 4

struct span_list {
    struct span v[HTTP_LIST_MAX];
    unsigned n;
};

/* What the framing and Connection fields said, gathered field by field
 * before the verdicts of http_fields_end (private to http_fields.c). */
struct http_framing {
    bool cl_seen, te_seen, te_unknown, te_chunked;
    bool close, keep_alive; /* Connection's tokens */
    unsigned te_count;
    uint64_t cl;
};

struct http_info {
    struct http_framing framing;
    bool has_host;
    struct span host; /* the Host value (may be empty) */
    bool keep_alive;  /* the connection may persist after this exchange */
    bool has_body;    /* a body follows the head (never read: see below) */
    struct span_list if_match, if_none_match, accept_encoding;
    /* Singletons; absent when .p == NULL. A repeated singleton that matters
     * to a precondition or Range makes the request ambiguous: see below. */
    struct span if_modified_since, if_unmodified_since, if_range, range;
    struct span accept, referer, user_agent;
};

/*
 * Interprets req's fields: http_fields_begin, http_fields_add for each, then
 * http_fields_end; the first refusal wins.
 *
 * Returns 0, or a negative status when the request must be refused and the
 * connection closed:
 *   -400  a Content-Length that is not 1*DIGIT or is repeated; both
 *         Content-Length and Transfer-Encoding; Transfer-Encoding on
 *         HTTP/1.0; codings other than "chunked" alone; a body (non-zero
 *         Content-Length or chunked) on GET, HEAD or OPTIONS; HTTP/1.1
 *         without Host, more than one Host, or a Host that is not
 *         uri-host [ ":" port ] (RFC 3986); a singleton field above
 *         repeated; a list field on more than HTTP_LIST_MAX lines.
 *   -501  a transfer coding outside the registered ones (RFC 9112 §6.1).
 * has_body: a non-zero Content-Length or "Transfer-Encoding: chunked" on
 * another method (POST, PUT, ...). The server answers those without reading
 * the body and closes, so has_body forces keep_alive off.
 * keep_alive: HTTP/1.1 unless a Connection token "close"; HTTP/1.0 only with
 * a "keep-alive" token and no "close"; never with a body.
 */
int http_fields_analyze(const struct http_request *req, struct http_info *out);

/* The same analysis one field at a time, for a protocol whose fields arrive
 * decoded (HTTP/2, HTTP/3): begin, then add each field as it comes (0, or
 * -400 for a field that refuses the request: a bad Host, a repeated
 * singleton or Content-Length, a list on too many lines), then end once
 * the method and version are known (0, -400 or -501: the framing and Host
 * rules above). The verdicts are http_fields_analyze's, field for field;
 * the spans kept in out point to the values given, which must outlive it. */
void http_fields_begin(struct http_info *out);
int http_fields_add(struct http_info *out, struct span name, struct span value);
int http_fields_end(struct http_info *out, enum http_method method, int minor);

/* True when `value` (a comma-separated list, possibly on several lines)
 * contains `token`, compared case-insensitively. */
bool http_list_has_token(const struct span_list *l, const char *token);

#endif

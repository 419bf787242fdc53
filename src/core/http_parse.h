/* SPDX-License-Identifier: MIT */
/*
 * http_parse.h - RFC 9112 request-line and field-section syntax.
 *
 * The parser is stateless: give it the bytes received so far and it either
 * needs more, rejects them with the status the protocol contract names, or
 * returns the length of a complete head with spans pointing into the caller's
 * buffer. It never allocates, never copies, never reads past n, and decides
 * only syntax; what the fields mean is http_fields' job.
 */
#ifndef PITH_HTTP_PARSE_H
#define PITH_HTTP_PARSE_H

#include "core.h"

/* Limits (DESIGN.md §2). A request line (without its CRLF) longer than
 * 8 KiB is 414; a field section (the bytes after the request line's CRLF up
 * to and including the empty line's CRLF) longer than 16 KiB or with more
 * than 100 field lines is 431. HTTP_MAX_HEAD, the sum with the empty lines
 * and the request line's CRLF, is the longest head accepted, so it bounds the
 * read buffer a connection needs for one head. */
#define HTTP_MAX_REQUEST_LINE  8192
#define HTTP_MAX_FIELD_SECTION 16384
#define HTTP_MAX_FIELDS        100
/* Empty lines (CRLF) tolerated before a request line (RFC 9112 §2.2). */
#define HTTP_MAX_LEADING_CRLF 8
#define HTTP_MAX_HEAD                                                                              \
    (2 * HTTP_MAX_LEADING_CRLF + HTTP_MAX_REQUEST_LINE + 2 + HTTP_MAX_FIELD_SECTION)

/* Returned when the head is not complete yet and no limit is exceeded. */
#define HTTP_PARSE_AGAIN 0

enum http_method {
    HTTP_METHOD_OTHER = 0, /* a valid token we do not implement: 501 */
    HTTP_METHOD_GET,
    HTTP_METHOD_HEAD,
    HTTP_METHOD_OPTIONS,
    HTTP_METHOD_POST,
    HTTP_METHOD_PUT,
    HTTP_METHOD_DELETE,
    HTTP_METHOD_PATCH,
    HTTP_METHOD_CONNECT,
    HTTP_METHOD_TRACE,
};

struct http_field {
    struct span name;  /* a token, as received (compare case-insensitively) */
    struct span value; /* without leading/trailing OWS; may be empty */
};

struct http_request {
    struct span method; /* token, case-sensitive (RFC 9110 §9.1) */
    enum http_method method_id;
    struct span target; /* 1*VCHAR (0x21..0x7E), not interpreted here */
    int minor;          /* HTTP/1.<minor>: 0, or 1 (also for 1.2 .. 1.9) */
    size_t nfields;
    struct http_field fields[HTTP_MAX_FIELDS];
};

/*
 * Parses one request head from p[0..n).
 *
 * Returns:
 *   > 0               bytes consumed up to and including the empty line that
 *                     ends the head (leading empty lines included); *req is
 *                     filled and its spans point into p.
 *   HTTP_PARSE_AGAIN  the head is incomplete and within every limit.
 *   -400              bad syntax: method not a token, target with a byte
 *                     outside VCHAR, not exactly one SP between the three
 *                     parts, bare CR or bare LF anywhere, NUL or another CTL
 *                     (except HTAB) in a value, obs-fold (a line starting
 *                     with SP/HTAB), whitespace before ':', an empty or
 *                     non-token field name, a malformed HTTP-version, or more
 *                     than HTTP_MAX_LEADING_CRLF empty lines first.
 *   -414              the request line exceeds HTTP_MAX_REQUEST_LINE (also
 *                     reported as soon as more than that many bytes arrived
 *                     without its end).
 *   -431              the field section exceeds HTTP_MAX_FIELD_SECTION bytes
 *                     (reported once that many bytes arrived without its
 *                     end) or HTTP_MAX_FIELDS lines (reported at the first
 *                     byte of the extra line).
 *   -505              a well-formed HTTP-version whose major version is not
 *                     1, reported at the end of the request line. HTTP/1.x
 *                     with x > 1 is accepted as minor version 1 (RFC 9110
 *                     §2.5: processed as the highest minor version
 *                     implemented).
 * Verdicts are reached left to right: the first position where the bytes
 * cannot be a valid head decides (with three exceptions, where a limit or
 * a whole token is judged first: the HTTP-version is judged once its line
 * ends, so "GET / HTTQ" waits for more bytes and a bad version followed by
 * more than 8 KiB is a 414; at the 8193rd byte of a request line 414 wins
 * over what that byte is; the 101st field line is a 431 whatever its first
 * byte), so the same input always gives the same
 * answer whatever n it is cut at, except that a shorter n may give
 * HTTP_PARSE_AGAIN. Bytes after the head are never read. On any return but
 * > 0, *req holds unspecified partial results.
 */
long http_parse_request(const char *p, size_t n, struct http_request *req);

/* The method's identity (exact, case-sensitive names; RFC 9110 §9.1). */
enum http_method http_method_of(struct span method);

/* True when c may appear in a token (RFC 9110 §5.6.2 tchar). */
bool http_is_tchar(unsigned char c);

/* For the protocols whose requests arrive as decoded fields (HTTP/2,
 * HTTP/3): the verdicts http_parse_request would reach on the same request
 * written as HTTP/1.1, so that every protocol refuses the same requests.
 *
 * http_request_line_check: the request line "method SP target SP HTTP/1.1"
 * (0, -400 or -414, decided as the parser decides it, left to right: a
 * method that is not a token or a target that is not 1*VCHAR is 400 where
 * the bad byte lies within HTTP_MAX_REQUEST_LINE, and a line longer than
 * that is 414).
 * http_field_value_ok: a field value holds only what a field line may
 * (field-vchar, obs-text, SP, HTAB); anything else is the parser's 400. */
int http_request_line_check(struct span method, struct span target);
bool http_field_value_ok(struct span value);

#endif

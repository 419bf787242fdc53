/* SPDX-License-Identifier: MIT */
/*
 * http_parse.c - RFC 9112 request head syntax: the request line (§3), field
 * lines (§5) and the empty line that ends the head (§2.1), with the limits of
 * DESIGN.md §2. One left-to-right pass over the bytes with a class table; every
 * verdict depends only on the bytes before the position where it is reached,
 * which is what makes a shorter cut of the same input answer HTTP_PARSE_AGAIN
 * or the same status. It must never read past n, accept a bare CR or LF, or
 * guess at a malformed line (RFC 9112 §2.2 lets a server reject them, and
 * rejecting is what keeps a proxy in front of pith from reading the head
 * differently).
 */
#include "http_parse.h"

#include "bytes.h"

/* Byte classes. TCHAR: RFC 9110 §5.6.2 token. VCHAR: 0x21..0x7E, what a
 * request-target may contain (RFC 9112 §3.2). VALUE: field-vchar, obs-text,
 * SP and HTAB, the octets of a field value with its OWS (RFC 9110 §5.5). */
enum { TCHAR = 1, VCHAR = 2, VALUE = 4 };

static const unsigned char cls[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, /* 0x00 */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x10 */
    4, 7, 6, 7, 7, 7, 7, 7, 6, 6, 7, 7, 6, 7, 7, 6, /* 0x20 */
    7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6, 6, /* 0x30 */
    6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, /* 0x40 */
    7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 6, 6, 6, 7, 7, /* 0x50 */
    7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, /* 0x60 */
    7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 6, 7, 6, 7, 0, /* 0x70 */
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, /* 0x80 */
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, /* 0x90 */
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, /* 0xa0 */
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, /* 0xb0 */
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, /* 0xc0 */
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, /* 0xd0 */
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, /* 0xe0 */
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, /* 0xf0 */
};

/* Returned by the edge checks below when the byte at the position is present
 * and within the limit, so the caller goes on; every verdict is <= 0. */
enum { AVAILABLE = 1 };

bool http_is_tchar(unsigned char c)
{
    return cls[c] & TCHAR;
}

static size_t scan(const char *p, size_t i, size_t end, unsigned mask)
{
    while (i < end && (cls[(unsigned char)p[i]] & mask))
        i++;
    return i;
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* A scan of the request line stopped at j. lim is the offset of the first
 * byte past HTTP_MAX_REQUEST_LINE; the only byte allowed there is the CR that
 * ends the line, and no scan class contains CR, so a scan that went past lim
 * saw a longer line: 414 as soon as that byte arrived. */
static long line_edge(size_t j, size_t n, size_t lim)
{
    if (j > lim)
        return -414;
    if (j >= n)
        return HTTP_PARSE_AGAIN;
    return AVAILABLE;
}

/* The same for the field section, whose bytes must all lie before flim:
 * reaching flim without the final CRLF means the section cannot end within
 * HTTP_MAX_FIELD_SECTION bytes, so 431 is certain even before that byte. */
static long field_edge(size_t j, size_t n, size_t flim)
{
    if (j >= flim)
        return -431;
    if (j >= n)
        return HTTP_PARSE_AGAIN;
    return AVAILABLE;
}

/* RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the
 * request line; pith ignores up to HTTP_MAX_LEADING_CRLF and no bare ones. */
static long skip_empty_lines(const char *p, size_t n, size_t *q)
{
    size_t i = 0;
    for (unsigned count = 0; i < n && p[i] == '\r'; count++) {
        if (count == HTTP_MAX_LEADING_CRLF)
            return -400;
        if (i + 1 >= n)
            return HTTP_PARSE_AGAIN;
        if (p[i + 1] != '\n')
            return -400;
        i += 2;
    }
    *q = i;
    return AVAILABLE;
}

/* Exact, case-sensitive method names (RFC 9110 §9.1). */
enum http_method http_method_of(struct span method)
{
    const char *p = method.p;
    size_t n = method.n;
    switch (n) {
    case 3:
        if (mem_eq(p, "GET", 3))
            return HTTP_METHOD_GET;
        if (mem_eq(p, "PUT", 3))
            return HTTP_METHOD_PUT;
        break;
    case 4:
        if (mem_eq(p, "HEAD", 4))
            return HTTP_METHOD_HEAD;
        if (mem_eq(p, "POST", 4))
            return HTTP_METHOD_POST;
        break;
    case 5:
        if (mem_eq(p, "PATCH", 5))
            return HTTP_METHOD_PATCH;
        if (mem_eq(p, "TRACE", 5))
            return HTTP_METHOD_TRACE;
        break;
    case 6:
        if (mem_eq(p, "DELETE", 6))
            return HTTP_METHOD_DELETE;
        break;
    case 7:
        if (mem_eq(p, "OPTIONS", 7))
            return HTTP_METHOD_OPTIONS;
        if (mem_eq(p, "CONNECT", 7))
            return HTTP_METHOD_CONNECT;
        break;
    }
    return HTTP_METHOD_OTHER;
}

/* HTTP-version = "HTTP/" DIGIT "." DIGIT, case-sensitive (RFC 9112 §2.3).
 * Returns the minor version, -400 when malformed, -505 when well-formed but
 * of another major version (RFC 9110 §15.6.6). A minor version above 1 is
 * processed as 1, the highest this server implements (RFC 9110 §2.5). */
static int version_parse(const char *v, size_t n)
{
    if (n != 8 || !mem_eq(v, "HTTP/", 5) || !ascii_is_digit(v[5]) || v[6] != '.' ||
        !ascii_is_digit(v[7]))
        return -400;
    if (v[5] != '1')
        return -505;
    return v[7] == '0' ? 0 : 1;
}

/* request-line = method SP request-target SP HTTP-version CRLF (RFC 9112
 * §3), exactly one SP each (§3 allows lenient whitespace; pith does not, as
 * that is where request smuggling between parsers starts). */
static long parse_request_line(const char *p, size_t n, size_t *q, struct http_request *req)
{
    size_t ls = *q;
    size_t lim = ls + HTTP_MAX_REQUEST_LINE;
    size_t end = min_size(n, lim + 1);
    size_t j = scan(p, ls, end, TCHAR);
    long r = line_edge(j, n, lim);
    if (r <= 0)
        return r;
    if (j == ls || p[j] != ' ')
        return -400;
    req->method = span_make(p + ls, j - ls);

    size_t t = j + 1;
    j = scan(p, t, end, VCHAR);
    if ((r = line_edge(j, n, lim)) <= 0)
        return r;
    if (j == t || p[j] != ' ')
        return -400;
    req->target = span_make(p + t, j - t);

    size_t v = j + 1;
    j = scan(p, v, end, VCHAR);
    if ((r = line_edge(j, n, lim)) <= 0)
        return r;
    if (p[j] != '\r')
        return -400;
    /* The LF is not part of the line's length. */
    if (j + 1 >= n)
        return HTTP_PARSE_AGAIN;
    if (p[j + 1] != '\n')
        return -400;
    int minor = version_parse(p + v, j - v);
    if (minor < 0)
        return minor;
    req->minor = minor;
    req->method_id = http_method_of(req->method);
    *q = j + 2;
    return AVAILABLE;
}

/* One field line at q: field-name ":" OWS field-value OWS CRLF (RFC 9112
 * §5). Stores it and advances *q past its CRLF. */
static long parse_field_line(const char *p, size_t n, size_t *q, size_t flim, struct http_field *f)
{
    size_t end = min_size(n, flim);
    size_t s = *q;
    size_t j = scan(p, s, end, TCHAR);
    long r = field_edge(j, n, flim);
    if (r <= 0)
        return r;
    /* An empty name covers obs-fold and any leading whitespace (RFC 9112
     * §5.2, rejected); a non-colon after the name covers whitespace before
     * the colon (§5.1: MUST respond 400). */
    if (j == s || p[j] != ':')
        return -400;
    size_t v = j + 1;
    j = scan(p, v, end, VALUE);
    if ((r = field_edge(j, n, flim)) <= 0)
        return r;
    if (p[j] != '\r')
        return -400;
    if ((r = field_edge(j + 1, n, flim)) <= 0)
        return r;
    if (p[j + 1] != '\n')
        return -400;
    f->name = span_make(p + s, v - 1 - s);
    f->value = span_trim_ows(span_make(p + v, j - v));
    *q = j + 2;
    return AVAILABLE;
}

/* field lines up to and including the empty line (RFC 9112 §2.1). */
static long parse_fields(const char *p, size_t n, size_t q, struct http_request *req)
{
    size_t flim = q + HTTP_MAX_FIELD_SECTION;
    req->nfields = 0;
    for (;;) {
        long r = field_edge(q, n, flim);
        if (r <= 0)
            return r;
        if (p[q] == '\r') {
            if ((r = field_edge(q + 1, n, flim)) <= 0)
                return r;
            if (p[q + 1] != '\n')
                return -400;
            return (long)(q + 2);
        }
        if (req->nfields == HTTP_MAX_FIELDS)
            return -431;
        r = parse_field_line(p, n, &q, flim, &req->fields[req->nfields]);
        if (r <= 0)
            return r;
        req->nfields++;
    }
}

long http_parse_request(const char *p, size_t n, struct http_request *req)
{
    size_t q = 0;
    long r = skip_empty_lines(p, n, &q);
    if (r <= 0)
        return r;
    r = parse_request_line(p, n, &q, req);
    if (r <= 0)
        return r;
    return parse_fields(p, n, q, req);
}

int http_request_line_check(struct span method, struct span target)
{
    const size_t lim = HTTP_MAX_REQUEST_LINE; /* the first offset past the limit */
    size_t j = 0;
    while (j < method.n && j <= lim && (cls[(unsigned char)method.p[j]] & TCHAR))
        j++;
    if (j > lim)
        return -414;
    if (j == 0 || j < method.n)
        return -400;
    size_t t = method.n + 1, k = 0; /* the target's offset in the line */
    while (k < target.n && t + k <= lim && (cls[(unsigned char)target.p[k]] & VCHAR))
        k++;
    if (t + k > lim)
        return -414;
    if (k == 0 || k < target.n)
        return -400;
    /* " HTTP/1.1" must end within the limit too */
    return t + target.n + 9 > lim ? -414 : 0;
}

bool http_field_value_ok(struct span value)
{
    return scan(value.p, 0, value.n, VALUE) == value.n;
}

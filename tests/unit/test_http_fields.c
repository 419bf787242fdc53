/* SPDX-License-Identifier: MIT */
/*
 * test_http_fields.c - http_fields_analyze() and http_list_has_token()
 * against one row per rule of http_fields.h: framing (Transfer-Encoding,
 * Content-Length), Host presence and syntax per version, Connection and
 * keep-alive, singletons, list limits at N and N+1, and case-insensitive
 * names. Each row's fields are parsed from raw bytes placed against a guard
 * page, so the spans are the ones the server would see.
 */
#include "core/http_fields.h"
#include "unit.h"

enum {
    ANY = -1,           /* keep_alive: not checked */
    PARSE_REJECTS = -1, /* want: the parser already refuses the bytes */
};

static const struct row {
    int minor;
    const char *fields; /* field lines, each ending in CRLF */
    int want;
    int keep_alive;
    const char *why;
} rows[] = {
    /* Host */
    {1, "Host: x\r\n", 0, 1, "1.1 with Host"},
    {1, "", -400, ANY, "1.1 without Host"},
    {1, "Host: x\r\nHost: x\r\n", -400, ANY, "1.1 with two Host"},
    {1, "Host: x\r\nhost: y\r\n", -400, ANY, "1.1 with two Host, other case"},
    {1, "Host:\r\n", 0, 1, "empty Host is valid"},
    {1, "HOST: x\r\n", 0, 1, "upper-case name"},
    {1, "hOsT: x\r\n", 0, 1, "mixed-case name"},
    {0, "", 0, 0, "1.0 without Host"},
    {0, "Host: x\r\n", 0, 0, "1.0 with Host"},
    {0, "Host: x\r\nHost: y\r\n", -400, ANY, "1.0 with two Host"},
    {1, "Host: example.com:8080\r\n", 0, 1, "Host with port"},
    {1, "Host: [::1]:80\r\n", 0, 1, "Host IPv6 literal"},
    {1, "Host: a b\r\n", -400, ANY, "Host with SP"},
    {1, "Host: u@h\r\n", -400, ANY, "Host with userinfo"},
    {1, "Host: h/x\r\n", -400, ANY, "Host with a path"},
    {1, "Host: h:x\r\n", -400, ANY, "Host with a bad port"},
    {1, "Host: [::1\r\n", -400, ANY, "Host with an unclosed literal"},
    {0, "Host: a,b\r\n", 0, 0, "comma is a sub-delim in reg-name"},
    {0, "Host: \x80\r\n", -400, ANY, "Host with obs-text"},

    /* framing */
    {1, "Host: x\r\nTransfer-Encoding: chunked\r\n", -400, ANY, "Transfer-Encoding"},
    {1, "Host: x\r\ntransfer-encoding: identity\r\n", -400, ANY, "identity: reserved, not chunked"},
    {1, "Host: x\r\nTransfer-Encoding: gzip, chunked\r\n", -400, ANY, "gzip, chunked on GET"},
    {1, "Host: x\r\nTransfer-Encoding: foo\r\n", -501, ANY, "unknown coding"},
    {1, "Host: x\r\nTransfer-Encoding:\r\n", -400, ANY, "empty Transfer-Encoding"},
    {0, "Transfer-Encoding: chunked\r\n", -400, ANY, "Transfer-Encoding in 1.0"},
    {1, "Host: x\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n", -400, ANY, "CL + TE"},
    {1, "Host: x\r\nContent-Length: 0\r\n", 0, 1, "Content-Length: 0"},
    {1, "Host: x\r\nContent-Length: 000\r\n", 0, 1, "Content-Length: 000"},
    {1, "Host: x\r\nCONTENT-LENGTH: 0\r\n", 0, 1, "Content-Length, upper case"},
    {1, "Host: x\r\nContent-Length: 1\r\n", -400, ANY, "a body on GET"},
    {1, "Host: x\r\ncontent-length: 1\r\n", -400, ANY, "a body on GET, lower case"},
    {1, "Host: x\r\nContent-Length: 0\r\nContent-Length: 0\r\n", -400, ANY, "repeated CL"},
    {1, "Host: x\r\nContent-Length: 0, 0\r\n", -400, ANY, "CL list"},
    {1, "Host: x\r\nContent-Length:\r\n", -400, ANY, "empty CL"},
    {1, "Host: x\r\nContent-Length: -0\r\n", -400, ANY, "signed CL"},
    {1, "Host: x\r\nContent-Length: +0\r\n", -400, ANY, "plus-signed CL"},
    {1, "Host: x\r\nContent-Length: 0x0\r\n", -400, ANY, "hex CL"},
    {1, "Host: x\r\nContent-Length: 0 0\r\n", -400, ANY, "CL with inner SP"},
    {1, "Host: x\r\nContent-Length: 99999999999999999999999\r\n", -400, ANY, "CL overflow"},
    {1, "Host: x\r\nContent-Length: 18446744073709551616\r\n", -400, ANY, "CL of 2^64"},

    /* Connection */
    {1, "Host: x\r\nConnection: close\r\n", 0, 0, "1.1 close"},
    {1, "Host: x\r\nConnection: CLOSE\r\n", 0, 0, "1.1 close, upper case"},
    {1, "Host: x\r\nConnection: keep-alive\r\n", 0, 1, "1.1 keep-alive"},
    {1, "Host: x\r\nConnection: foo, close\r\n", 0, 0, "close in a list"},
    {1, "Host: x\r\nConnection: foo\r\nConnection: close\r\n", 0, 0, "close on a second line"},
    {1, "Host: x\r\nConnection: ,, close ,,\r\n", 0, 0, "empty list elements"},
    {1, "Host: x\r\nConnection: closed\r\n", 0, 1, "'closed' is not 'close'"},
    {1, "Host: x\r\nConnection: clos\r\n", 0, 1, "'clos' is not 'close'"},
    {1, "Host: x\r\nConnection: \"close\"\r\n", 0, 1, "a quoted string is not a token"},
    {1, "Host: x\r\nConnection: close;x\r\n", 0, 1, "'close;x' is not 'close'"},
    {0, "Connection: keep-alive\r\n", 0, 1, "1.0 keep-alive"},
    {0, "Connection: Keep-Alive\r\n", 0, 1, "1.0 Keep-Alive"},
    {0, "Connection: keep-alive, close\r\n", 0, 0, "1.0 keep-alive and close"},
    {0, "Connection: close\r\nConnection: keep-alive\r\n", 0, 0, "close wins over lines"},
    {0, "Connection: foo\r\n", 0, 0, "1.0 other token"},
    {0, "Connection:\r\n", 0, 0, "1.0 empty Connection"},
    {0, "Connection: keepalive\r\n", 0, 0, "'keepalive' is not 'keep-alive'"},

    /* singletons */
    {1, "Host: x\r\nIf-Modified-Since: a\r\nIf-Modified-Since: a\r\n", -400, ANY, "two IMS"},
    {1, "Host: x\r\nIf-Unmodified-Since: a\r\nif-unmodified-since: b\r\n", -400, ANY, "two IUS"},
    {1, "Host: x\r\nIf-Range: a\r\nIf-Range: b\r\n", -400, ANY, "two If-Range"},
    {1, "Host: x\r\nRange: bytes=0-1\r\nRange: bytes=0-1\r\n", -400, ANY, "two Range"},
    {1, "Host: x\r\nRange:\r\nRange:\r\n", -400, ANY, "two empty Range"},
    {1, "Host: x\r\nAccept: a\r\nAccept: b\r\n", 0, 1, "two Accept: first kept"},
    {1, "Host: x\r\nUser-Agent: a\r\nUser-Agent: b\r\n", 0, 1, "two User-Agent"},
    {1, "Host: x\r\nReferer: a\r\nReferer: b\r\n", 0, 1, "two Referer"},

    /* lists */
    {1,
     "Host: x\r\nIf-None-Match: a\r\nIf-None-Match: b\r\nIf-None-Match: c\r\n"
     "If-None-Match: d\r\n",
     0, 1, "If-None-Match on HTTP_LIST_MAX lines"},
    {1,
     "Host: x\r\nIf-None-Match: a\r\nIf-None-Match: b\r\nIf-None-Match: c\r\n"
     "If-None-Match: d\r\nIf-None-Match: e\r\n",
     -400, ANY, "If-None-Match on HTTP_LIST_MAX + 1 lines"},
    {1, "Host: x\r\nIf-Match: a\r\nIf-Match: b\r\nIf-Match: c\r\nIf-Match: d\r\n", 0, 1,
     "If-Match on HTTP_LIST_MAX lines"},
    {1, "Host: x\r\nIf-Match: a\r\nIf-Match: b\r\nIf-Match: c\r\nIf-Match: d\r\nIf-Match: e\r\n",
     -400, ANY, "If-Match on HTTP_LIST_MAX + 1 lines"},
    {1,
     "Host: x\r\nAccept-Encoding: a\r\nAccept-Encoding: b\r\nAccept-Encoding: c\r\n"
     "Accept-Encoding: d\r\n",
     0, 1, "Accept-Encoding on HTTP_LIST_MAX lines"},
    {1,
     "Host: x\r\nAccept-Encoding: a\r\nAccept-Encoding: b\r\nAccept-Encoding: c\r\n"
     "Accept-Encoding: d\r\naccept-encoding: e\r\n",
     -400, ANY, "Accept-Encoding on HTTP_LIST_MAX + 1 lines"},

    /* others */
    {1, "Host: x\r\nX-Unknown: \x01\r\n", PARSE_REJECTS, ANY, "a CTL never reaches here"},
    {1, "Host: x\r\nHostx: a b\r\nXHost: @\r\n", 0, 1, "names that only start like Host"},
    {1, "Host: x\r\nContent-Lengthx: 5\r\n", 0, 1, "a longer name is another field"},
};

static struct http_request req;

/* Parses "GET / HTTP/1.<minor>\r\n" + fields + "\r\n" from a guarded copy;
 * returns the copy (for guarded_free) or NULL when the parser rejected it. */
static char *parse_fields(int minor, const char *fields, size_t *n)
{
    char in[2048];
    int len = snprintf(in, sizeof(in), "GET / HTTP/1.%d\r\n%s\r\n", minor, fields);
    *n = (size_t)len;
    char *p = guarded_copy(in, *n);
    if (http_parse_request(p, *n, &req) != len) {
        guarded_free(p, *n);
        return NULL;
    }
    return p;
}

static void test_rows(void)
{
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        const struct row *r = &rows[i];
        size_t n;
        char *p = parse_fields(r->minor, r->fields, &n);
        CHECK((p != NULL) == (r->want != PARSE_REJECTS), r->why);
        if (!p)
            continue;
        struct http_info info;
        CHECK_LONG(http_fields_analyze(&req, &info), r->want, r->why);
        if (r->want == 0 && r->keep_alive != ANY)
            CHECK_LONG(info.keep_alive, r->keep_alive, r->why);
        guarded_free(p, n);
    }
}

/* Framing of a request that may carry a body (not GET, HEAD, OPTIONS). */
static const struct body_row {
    const char *head; /* the whole head */
    int want;
    bool has_body;
    const char *why;
} body_rows[] = {
    {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n", 0, true, "POST with a body"},
    {"PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 0, false, "PUT, CL 0"},
    {"POST / HTTP/1.1\r\nHost: x\r\n\r\n", 0, false, "POST without framing"},
    {"DELETE / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", 0, true,
     "chunked alone"},
    {"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: CHUNKED\r\n\r\n", 0, true,
     "chunked, upper case"},
    {"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
     "Transfer-Encoding: chunked\r\n\r\n",
     -400, false, "chunked twice"},
    {"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", -400, false,
     "a coding before chunked"},
    {"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", -400, false,
     "chunked not last"},
    {"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", -400, false, "gzip alone"},
    {"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: foo, chunked\r\n\r\n", -501, false,
     "an unknown coding"},
    {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", -400,
     false, "CL + TE on POST"},
    {"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", -400, false, "TE in 1.0"},
    {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", -400, false,
     "repeated CL on POST"},
    {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5x\r\n\r\n", -400, false, "bad CL on POST"},
    {"HEAD / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n", -400, false, "a body on HEAD"},
    {"OPTIONS * HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", -400, false,
     "a body on OPTIONS"},
    {"BREW / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n", 0, true,
     "an unknown method with a body"},
};

static void test_body_rows(void)
{
    for (size_t i = 0; i < ARRAY_LEN(body_rows); i++) {
        const struct body_row *r = &body_rows[i];
        size_t n = strlen(r->head);
        char *p = guarded_copy(r->head, n);
        CHECK_LONG(http_parse_request(p, n, &req), (long)n, r->why);
        struct http_info info;
        CHECK_LONG(http_fields_analyze(&req, &info), r->want, r->why);
        if (r->want == 0) {
            CHECK_LONG(info.has_body, r->has_body, r->why);
            /* A body is never read, so the connection cannot persist. */
            CHECK_LONG(info.keep_alive, !r->has_body, r->why);
        }
        guarded_free(p, n);
    }
}

static void test_spans(void)
{
    size_t n;
    char *p = parse_fields(1,
                           "Host: a.b:80\r\nIf-Match: \"x\"\r\nif-none-match: \"y\", \"z\"\r\n"
                           "If-None-Match: W/\"w\"\r\nAccept-Encoding: gzip, br\r\n"
                           "If-Modified-Since: d1\r\nIf-Unmodified-Since: d2\r\n"
                           "If-Range: \"r\"\r\nRange: bytes=1-2\r\nAccept: a1\r\nAccept: a2\r\n"
                           "Referer: r1\r\nReferer: r2\r\nUser-Agent: u1\r\nUser-Agent: u2\r\n"
                           "X-Other: o\r\n",
                           &n);
    CHECK(p != NULL, "spans: parsed");
    if (!p)
        return;
    struct http_info info;
    CHECK_LONG(http_fields_analyze(&req, &info), 0, "spans: accepted");
    CHECK(info.has_host, "spans: has_host");
    CHECK_SPAN(info.host, "a.b:80", "spans: host");
    CHECK(info.keep_alive, "spans: keep_alive");
    CHECK_LONG(info.if_match.n, 1, "spans: one If-Match line");
    CHECK_SPAN(info.if_match.v[0], "\"x\"", "spans: If-Match");
    CHECK_LONG(info.if_none_match.n, 2, "spans: two If-None-Match lines");
    CHECK_SPAN(info.if_none_match.v[0], "\"y\", \"z\"", "spans: If-None-Match line 1");
    CHECK_SPAN(info.if_none_match.v[1], "W/\"w\"", "spans: If-None-Match line 2");
    CHECK_SPAN(info.accept_encoding.v[0], "gzip, br", "spans: Accept-Encoding");
    CHECK_SPAN(info.if_modified_since, "d1", "spans: If-Modified-Since");
    CHECK_SPAN(info.if_unmodified_since, "d2", "spans: If-Unmodified-Since");
    CHECK_SPAN(info.if_range, "\"r\"", "spans: If-Range");
    CHECK_SPAN(info.range, "bytes=1-2", "spans: Range");
    CHECK_SPAN(info.accept, "a1", "spans: first Accept");
    CHECK_SPAN(info.referer, "r1", "spans: first Referer");
    CHECK_SPAN(info.user_agent, "u1", "spans: first User-Agent");
    guarded_free(p, n);

    p = parse_fields(0, "", &n);
    CHECK_LONG(http_fields_analyze(&req, &info), 0, "absent: accepted");
    CHECK(!info.has_host && info.host.p == NULL, "absent: no host");
    CHECK(info.range.p == NULL && info.if_range.p == NULL, "absent: singletons NULL");
    CHECK(info.accept.p == NULL && info.user_agent.p == NULL, "absent: first-kept NULL");
    CHECK(info.if_match.n == 0 && info.if_none_match.n == 0, "absent: lists empty");
    CHECK(info.accept_encoding.n == 0, "absent: Accept-Encoding empty");
    guarded_free(p, n);
}

static void test_list_has_token(void)
{
    static const struct {
        const char *lines[HTTP_LIST_MAX];
        const char *token;
        bool want;
        const char *why;
    } t[] = {
        {{"gzip"}, "gzip", true, "single element"},
        {{"GZip"}, "gzip", true, "case-insensitive"},
        {{"br, gzip"}, "gzip", true, "second element"},
        {{" br ,\tgzip\t"}, "gzip", true, "OWS around elements"},
        {{"br", "gzip"}, "gzip", true, "second line"},
        {{",,gzip,,"}, "gzip", true, "empty elements"},
        {{"gzipx"}, "gzip", false, "longer element"},
        {{"gzi"}, "gzip", false, "shorter element"},
        {{"gzip;q=0"}, "gzip", false, "parameters are not stripped"},
        {{""}, "gzip", false, "empty line"},
        {{"x", "y", "z", "gzip"}, "gzip", true, "fourth line"},
    };
    for (size_t i = 0; i < ARRAY_LEN(t); i++) {
        struct span_list l = {.n = 0};
        char *copies[HTTP_LIST_MAX];
        for (unsigned k = 0; k < HTTP_LIST_MAX && t[i].lines[k]; k++) {
            size_t n = strlen(t[i].lines[k]);
            copies[k] = guarded_copy(t[i].lines[k], n);
            l.v[l.n++] = span_make(copies[k], n);
        }
        CHECK_LONG(http_list_has_token(&l, t[i].token), t[i].want, t[i].why);
        for (unsigned k = 0; k < l.n; k++)
            guarded_free(copies[k], l.v[k].n);
    }
    struct span_list empty = {.n = 0};
    CHECK(!http_list_has_token(&empty, "gzip"), "empty list");
}

int main(void)
{
    test_rows();
    test_body_rows();
    test_spans();
    test_list_has_token();
    return unit_done();
}

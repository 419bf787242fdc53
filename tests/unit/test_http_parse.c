/* SPDX-License-Identifier: MIT */
/*
 * test_http_parse.c - http_parse_request() against one row per rule of RFC
 * 9112 and DESIGN.md §2: every rejection of http_parse.h, every limit at N
 * and N+1, and for each row every shorter cut of the same bytes, which must
 * answer HTTP_PARSE_AGAIN (or, for a rejected input, the same status). Every
 * input is placed against a guard page, cut points included.
 */
#include "core/http_parse.h"
#include "unit.h"

#define S(lit) lit, sizeof(lit) - 1
#define WHOLE  LONG_MIN /* the expected length is the whole input */

struct row {
    const char *in;
    size_t n;
    long want;
    const char *why;
};

static const struct row rows[] = {
    /* accepted */
    {S("GET / HTTP/1.1\r\n\r\n"), WHOLE, "minimal 1.1 request"},
    {S("GET / HTTP/1.0\r\n\r\n"), WHOLE, "minimal 1.0 request"},
    {S("GET /a?b=c HTTP/1.1\r\nHost: x\r\n\r\n"), WHOLE, "target with query, one field"},
    {S("GET / HTTP/1.1\r\nHost:x\r\n\r\n"), WHOLE, "no OWS after the colon"},
    {S("GET / HTTP/1.1\r\nA: \t b \t\r\n\r\n"), WHOLE, "OWS around the value"},
    {S("GET / HTTP/1.1\r\nA:\r\n\r\n"), WHOLE, "empty value"},
    {S("GET / HTTP/1.1\r\nA: \t \r\n\r\n"), WHOLE, "value of only OWS"},
    {S("GET / HTTP/1.1\r\nA: b\tc d\r\n\r\n"), WHOLE, "HTAB and SP inside a value"},
    {S("GET / HTTP/1.1\r\nA: \x80\xff\r\n\r\n"), WHOLE, "obs-text in a value"},
    {S("GET / HTTP/1.1\r\n!#$%&'*+-.^_`|~09azAZ: v\r\n\r\n"), WHOLE, "every tchar in a name"},
    {S("GET /!\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~ HTTP/1.1\r\n\r\n"), WHOLE,
     "every VCHAR in a target"},
    {S("FOO / HTTP/1.1\r\n\r\n"), WHOLE, "unknown method token"},
    {S("OPTIONS * HTTP/1.1\r\n\r\n"), WHOLE, "asterisk-form"},
    {S("GET http://h/x HTTP/1.1\r\n\r\n"), WHOLE, "absolute-form"},
    {S("\r\nGET / HTTP/1.1\r\n\r\n"), WHOLE, "one empty line before the request line"},
    {S("\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\n\r\n"), WHOLE,
     "HTTP_MAX_LEADING_CRLF empty lines"},
    {S("GET / HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n"), 18, "pipelined: first head only"},
    {S("GET / HTTP/1.1\r\n\r\n\x00\n\r garbage"), 18, "bytes after the head are not read"},
    {S("GET / HTTP/1.1\r\nA: b\r\n\r\nGET"), 24, "pipelined after a field"},

    /* leading empty lines */
    {S("\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\n\r\n"), -400,
     "more than HTTP_MAX_LEADING_CRLF empty lines"},
    {S("\nGET / HTTP/1.1\r\n\r\n"), -400, "bare LF as an empty line"},
    {S("\rGET / HTTP/1.1\r\n\r\n"), -400, "bare CR as an empty line"},

    /* request line */
    {S("GET  / HTTP/1.1\r\n\r\n"), -400, "two SP after the method"},
    {S("GET /  HTTP/1.1\r\n\r\n"), -400, "two SP after the target"},
    {S("GET / HTTP/1.1 \r\n\r\n"), -400, "SP after the version"},
    {S(" GET / HTTP/1.1\r\n\r\n"), -400, "SP before the method"},
    {S("GET\t/ HTTP/1.1\r\n\r\n"), -400, "HTAB as separator"},
    {S("GET /\tHTTP/1.1\r\n\r\n"), -400, "HTAB before the version"},
    {S("GET / HTTP/1.1\n\r\n"), -400, "request line ends in bare LF"},
    {S("GET / HTTP/1.1\rX\r\n\r\n"), -400, "request line ends in bare CR"},
    {S("GET / HTTP/1.1\r\r\n\r\n"), -400, "CR CR LF"},
    {S("GE(T / HTTP/1.1\r\n\r\n"), -400, "method not a token"},
    {S("GE\x80T / HTTP/1.1\r\n\r\n"), -400, "obs-text in the method"},
    {S("GET\x00 / HTTP/1.1\r\n\r\n"), -400, "NUL in the method"},
    {S("GET /\x80 HTTP/1.1\r\n\r\n"), -400, "obs-text in the target"},
    {S("GET /\x7f HTTP/1.1\r\n\r\n"), -400, "DEL in the target"},
    {S("GET /\x00 HTTP/1.1\r\n\r\n"), -400, "NUL in the target"},
    {S("GET /\x01 HTTP/1.1\r\n\r\n"), -400, "CTL in the target"},
    {S("GET /a\nb HTTP/1.1\r\n\r\n"), -400, "LF in the target"},
    {S("GET /a\rb HTTP/1.1\r\n\r\n"), -400, "CR in the target"},
    {S("GET HTTP/1.1\r\n\r\n"), -400, "no target"},
    {S("GET /\r\n\r\n"), -400, "no version (HTTP/0.9 style)"},
    {S("GET / \r\n\r\n"), -400, "empty version"},
    {S("GET /a b HTTP/1.1\r\n\r\n"), -400, "SP inside the target"},
    {S("\r\n"), HTTP_PARSE_AGAIN, "only an empty line"},
    {S(""), HTTP_PARSE_AGAIN, "nothing yet"},

    /* HTTP-version */
    {S("GET / http/1.1\r\n\r\n"), -400, "lower-case HTTP"},
    {S("GET / HTTP/1\r\n\r\n"), -400, "version without minor"},
    {S("GET / HTTP/1.1.1\r\n\r\n"), -400, "three-part version"},
    {S("GET / HTTP/11.1\r\n\r\n"), -400, "two-digit major"},
    {S("GET / HTTP/1.10\r\n\r\n"), -400, "two-digit minor"},
    {S("GET / HTTP/1.x\r\n\r\n"), -400, "non-digit minor"},
    {S("GET / HTTP/1,1\r\n\r\n"), -400, "comma for dot"},
    {S("GET / HTTPS/1.1\r\n\r\n"), -400, "HTTPS/"},
    {S("GET / HTTP/2.0\r\n\r\n"), -505, "HTTP/2.0"},
    {S("GET / HTTP/0.9\r\n\r\n"), -505, "HTTP/0.9"},
    {S("GET / HTTP/1.2\r\n\r\n"), WHOLE, "HTTP/1.2: processed as 1.1 (RFC 9110 §2.5)"},
    {S("GET / HTTP/1.9\r\n\r\n"), WHOLE, "HTTP/1.9: processed as 1.1 (RFC 9110 §2.5)"},
    {S("GET / HTTP/3.1\r\n\r\n"), -505, "HTTP/3.1"},
    {S("GET / HTTP/9.9\r\n\r\n"), -505, "HTTP/9.9"},
    {S("GET / HTTP/2.0\r\n"), -505, "505 known at the end of the request line"},
    {S("GET / HTTP/2.0\r\nA\r\n\r\n"), -505, "505 comes before field syntax"},

    /* field lines */
    {S("GET / HTTP/1.1\r\nHost : x\r\n\r\n"), -400, "SP before the colon"},
    {S("GET / HTTP/1.1\r\nHost\t: x\r\n\r\n"), -400, "HTAB before the colon"},
    {S("GET / HTTP/1.1\r\n: x\r\n\r\n"), -400, "empty field name"},
    {S("GET / HTTP/1.1\r\n Host: x\r\n\r\n"), -400, "first field line starts with SP"},
    {S("GET / HTTP/1.1\r\n\tHost: x\r\n\r\n"), -400, "first field line starts with HTAB"},
    {S("GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n"), -400, "obs-fold with SP"},
    {S("GET / HTTP/1.1\r\nA: b\r\n\tc\r\n\r\n"), -400, "obs-fold with HTAB"},
    {S("GET / HTTP/1.1\r\nHo(st: x\r\n\r\n"), -400, "name not a token"},
    {S("GET / HTTP/1.1\r\nHo\x80st: x\r\n\r\n"), -400, "obs-text in a name"},
    {S("GET / HTTP/1.1\r\nHo\x00st: x\r\n\r\n"), -400, "NUL in a name"},
    {S("GET / HTTP/1.1\r\nHost x\r\n\r\n"), -400, "no colon"},
    {S("GET / HTTP/1.1\r\nHost\r\n\r\n"), -400, "name alone"},
    {S("GET / HTTP/1.1\r\nA: b\x00"
       "c\r\n\r\n"),
     -400, "NUL in a value"},
    {S("GET / HTTP/1.1\r\nA: b\x7f\r\n\r\n"), -400, "DEL in a value"},
    {S("GET / HTTP/1.1\r\nA: \x01\r\n\r\n"), -400, "CTL 0x01 in a value"},
    {S("GET / HTTP/1.1\r\nA: \x1f\r\n\r\n"), -400, "CTL 0x1f in a value"},
    {S("GET / HTTP/1.1\r\nA: \x0b\r\n\r\n"), -400, "VT in a value"},
    {S("GET / HTTP/1.1\r\nA: b\nc\r\n\r\n"), -400, "bare LF in a value"},
    {S("GET / HTTP/1.1\r\nA: b\rc\r\n\r\n"), -400, "bare CR in a value"},
    {S("GET / HTTP/1.1\r\nA: b\n\r\n"), -400, "field line ends in bare LF"},
    {S("GET / HTTP/1.1\r\nA: b\r\r\n"), -400, "field line ends in CR CR"},
    {S("GET / HTTP/1.1\r\n\n"), -400, "head ends in bare LF"},
    {S("GET / HTTP/1.1\r\nA: b\r\n\n"), -400, "head ends in bare LF after a field"},
    {S("GET / HTTP/1.1\r\n\rX"), -400, "head ends in bare CR"},
    {S("GET / HTTP/1.1\r\nA: b\r\n\r\r\n"), -400, "CR CR LF as the empty line"},
};

static long parse_guarded(const char *in, size_t n)
{
    static struct http_request req;
    char *p = guarded_copy(in, n);
    long r = http_parse_request(p, n, &req);
    guarded_free(p, n);
    return r;
}

/* Every cut k < n of the input: AGAIN before the head's end, the head's
 * length from there on, or (rejected input) AGAIN or the same status. Long
 * inputs are cut at both ends and at a stride in between. */
static void check_cuts(const char *in, size_t n, long want, const char *why)
{
    unit_gen_begin();
    for (size_t k = 0; k < n; k++) {
        if (n > 1024 && k > 300 && k + 300 < n && k % 61 != 0)
            continue;
        long r = parse_guarded(in, k);
        if (want > 0)
            CHECK_LONG(r, (long)k < want ? HTTP_PARSE_AGAIN : want, why);
        else if (r != HTTP_PARSE_AGAIN)
            CHECK_LONG(r, want, why);
    }
    unit_gen_end();
}

static void check_row(const char *in, size_t n, long want, const char *why)
{
    if (want == WHOLE)
        want = (long)n;
    CHECK_LONG(parse_guarded(in, n), want, why);
    check_cuts(in, n, want, why);
}

/* A request whose line is exactly line_len bytes (without CRLF), then the
 * given number of leading and trailing bytes; returns a malloc'd buffer. */
static char *request_with_line(size_t line_len, const char *rest, size_t *n)
{
    size_t rn = strlen(rest);
    char *p = malloc(line_len + rn);
    memcpy(p, "GET /", 5);
    memset(p + 5, 'a', line_len - 14);
    memcpy(p + line_len - 9, " HTTP/1.1", 9);
    memcpy(p + line_len, rest, rn);
    *n = line_len + rn;
    return p;
}

static void test_request_line_limit(void)
{
    size_t n;
    char *p = request_with_line(HTTP_MAX_REQUEST_LINE, "\r\n\r\n", &n);
    check_row(p, n, (long)n, "request line of exactly HTTP_MAX_REQUEST_LINE");
    free(p);
    p = request_with_line(HTTP_MAX_REQUEST_LINE + 1, "\r\n\r\n", &n);
    check_row(p, n, -414, "request line of HTTP_MAX_REQUEST_LINE + 1");
    /* Early report: 8193 bytes of line without CR are 414 already, 8192
     * are not (the next byte may be the CR). */
    CHECK_LONG(parse_guarded(p, HTTP_MAX_REQUEST_LINE + 1), -414, "414 before the CRLF arrives");
    CHECK_LONG(parse_guarded(p, HTTP_MAX_REQUEST_LINE), HTTP_PARSE_AGAIN,
               "a line of exactly the limit may still end");
    free(p);

    char *m = malloc(HTTP_MAX_REQUEST_LINE + 1);
    memset(m, 'M', HTTP_MAX_REQUEST_LINE + 1);
    CHECK_LONG(parse_guarded(m, HTTP_MAX_REQUEST_LINE + 1), -414, "a method longer than the limit");
    CHECK_LONG(parse_guarded(m, HTTP_MAX_REQUEST_LINE), HTTP_PARSE_AGAIN,
               "a method of exactly the limit is incomplete");
    free(m);

    /* The limit counts from the request line, not from leading CRLFs. */
    p = request_with_line(HTTP_MAX_REQUEST_LINE, "\r\n\r\n", &n);
    char *q = malloc(n + 16);
    memcpy(q, "\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n", 16);
    memcpy(q + 16, p, n);
    check_row(q, n + 16, (long)n + 16, "leading CRLFs do not count toward the line");
    free(q);
    free(p);
}

/* A head whose field section (after the request line's CRLF, up to and
 * including the final CRLF) is exactly section bytes, in one field. */
static char *request_with_section(size_t section, size_t *n)
{
    static const char line[] = "GET / HTTP/1.1\r\n";
    size_t ln = sizeof(line) - 1;
    char *p = malloc(ln + section);
    memcpy(p, line, ln);
    memcpy(p + ln, "X: ", 3);
    memset(p + ln + 3, 'v', section - 7);
    memcpy(p + ln + section - 4, "\r\n\r\n", 4);
    *n = ln + section;
    return p;
}

static void test_field_section_limit(void)
{
    size_t n;
    char *p = request_with_section(HTTP_MAX_FIELD_SECTION, &n);
    check_row(p, n, (long)n, "field section of exactly HTTP_MAX_FIELD_SECTION");
    free(p);
    p = request_with_section(HTTP_MAX_FIELD_SECTION + 1, &n);
    check_row(p, n, -431, "field section of HTTP_MAX_FIELD_SECTION + 1");
    size_t ln = 16;
    CHECK_LONG(parse_guarded(p, ln + HTTP_MAX_FIELD_SECTION), -431,
               "431 as soon as the section cannot end within the limit");
    CHECK_LONG(parse_guarded(p, ln + HTTP_MAX_FIELD_SECTION - 1), HTTP_PARSE_AGAIN,
               "one byte less may still end in time");
    free(p);

    /* The largest head there is: 8 empty lines, longest line, largest section. */
    size_t n1, n2;
    char *a = request_with_line(HTTP_MAX_REQUEST_LINE, "\r\n", &n1);
    char *b = request_with_section(HTTP_MAX_FIELD_SECTION, &n2);
    char *c = malloc(HTTP_MAX_HEAD);
    memcpy(c, "\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n", 16);
    memcpy(c + 16, a, n1);
    memcpy(c + 16 + n1, b + 16, n2 - 16);
    CHECK_LONG(16 + n1 + n2 - 16, HTTP_MAX_HEAD, "the test head is HTTP_MAX_HEAD long");
    CHECK_LONG(parse_guarded(c, HTTP_MAX_HEAD), HTTP_MAX_HEAD, "a head of HTTP_MAX_HEAD");
    /* The longest input still waiting is one byte short of HTTP_MAX_HEAD, so
     * a read buffer of HTTP_MAX_HEAD bytes never fills up waiting. */
    c[HTTP_MAX_HEAD - 2] = c[HTTP_MAX_HEAD - 1] = 'v';
    CHECK_LONG(parse_guarded(c, HTTP_MAX_HEAD - 1), HTTP_PARSE_AGAIN, "longest incomplete head");
    CHECK_LONG(parse_guarded(c, HTTP_MAX_HEAD), -431, "HTTP_MAX_HEAD bytes never wait");
    free(a);
    free(b);
    free(c);
}

static char *request_with_fields(size_t count, size_t *n)
{
    static const char line[] = "GET / HTTP/1.1\r\n";
    char *p = malloc(16 + count * 6 + 2);
    memcpy(p, line, 16);
    for (size_t i = 0; i < count; i++)
        memcpy(p + 16 + i * 6, "a: b\r\n", 6);
    memcpy(p + 16 + count * 6, "\r\n", 2);
    *n = 16 + count * 6 + 2;
    return p;
}

static void test_field_count_limit(void)
{
    size_t n;
    char *p = request_with_fields(HTTP_MAX_FIELDS, &n);
    check_row(p, n, (long)n, "HTTP_MAX_FIELDS field lines");
    free(p);
    p = request_with_fields(HTTP_MAX_FIELDS + 1, &n);
    check_row(p, n, -431, "HTTP_MAX_FIELDS + 1 field lines");
    /* Reported at the first byte of the extra line, before it ends. */
    CHECK_LONG(parse_guarded(p, 16 + HTTP_MAX_FIELDS * 6 + 1), -431, "431 at the extra line");
    free(p);
}

static void test_spans(void)
{
    static const char in[] = "GET /p?q HTTP/1.0\r\nHost: a.b\r\nX-Empty:\r\n"
                             "x-ows: \t v  v \t\r\nX-Obs: \x80\xff\r\n\r\nNEXT";
    size_t n = sizeof(in) - 1;
    static struct http_request req;
    char *p = guarded_copy(in, n);
    CHECK_LONG(http_parse_request(p, n, &req), n - 4, "spans: consumed");
    CHECK_SPAN(req.method, "GET", "spans: method");
    CHECK_LONG(req.method_id, HTTP_METHOD_GET, "spans: method id");
    CHECK_SPAN(req.target, "/p?q", "spans: target");
    CHECK_LONG(req.minor, 0, "spans: minor");
    CHECK_LONG(req.nfields, 4, "spans: nfields");
    CHECK_SPAN(req.fields[0].name, "Host", "spans: name kept as received");
    CHECK_SPAN(req.fields[0].value, "a.b", "spans: value");
    CHECK_SPAN(req.fields[1].name, "X-Empty", "spans: empty value name");
    CHECK_LONG(req.fields[1].value.n, 0, "spans: empty value");
    CHECK(req.fields[1].value.p >= p && req.fields[1].value.p <= p + n, "spans: empty in buffer");
    CHECK_SPAN(req.fields[2].name, "x-ows", "spans: lower-case name");
    CHECK_SPAN(req.fields[2].value, "v  v", "spans: OWS trimmed, inner SP kept");
    CHECK_SPAN(req.fields[3].value, "\x80\xff", "spans: obs-text value");
    CHECK(req.method.p == p, "spans: method points into the buffer");
    guarded_free(p, n);
}

/* HTTP/1.x with x > 1 is processed as the highest minor version pith
 * implements (RFC 9110 §2.5; issue 8, defect 11): minor 1, so that every
 * later stage treats it as HTTP/1.1. */
static void test_higher_minor(void)
{
    static const char *const versions[] = {"HTTP/1.1", "HTTP/1.2", "HTTP/1.9"};
    static struct http_request req;
    for (size_t i = 0; i < ARRAY_LEN(versions); i++) {
        char in[64];
        int n = snprintf(in, sizeof(in), "GET / %s\r\nHost: x\r\n\r\n", versions[i]);
        char *p = guarded_copy(in, (size_t)n);
        CHECK_LONG(http_parse_request(p, (size_t)n, &req), n, versions[i]);
        CHECK_LONG(req.minor, 1, versions[i]);
        guarded_free(p, (size_t)n);
    }
}

static void test_methods(void)
{
    static const struct {
        const char *name;
        enum http_method id;
    } m[] = {
        {"GET", HTTP_METHOD_GET},         {"HEAD", HTTP_METHOD_HEAD},
        {"OPTIONS", HTTP_METHOD_OPTIONS}, {"POST", HTTP_METHOD_POST},
        {"PUT", HTTP_METHOD_PUT},         {"DELETE", HTTP_METHOD_DELETE},
        {"PATCH", HTTP_METHOD_PATCH},     {"CONNECT", HTTP_METHOD_CONNECT},
        {"TRACE", HTTP_METHOD_TRACE},     {"get", HTTP_METHOD_OTHER},
        {"Get", HTTP_METHOD_OTHER},       {"GETS", HTTP_METHOD_OTHER},
        {"GE", HTTP_METHOD_OTHER},        {"M-SEARCH", HTTP_METHOD_OTHER},
        {"PROPFIND", HTTP_METHOD_OTHER},  {"!#$%&'*+-.^_`|~", HTTP_METHOD_OTHER},
    };
    static struct http_request req;
    for (size_t i = 0; i < ARRAY_LEN(m); i++) {
        char in[64];
        int n = snprintf(in, sizeof(in), "%s / HTTP/1.1\r\n\r\n", m[i].name);
        char *p = guarded_copy(in, (size_t)n);
        CHECK_LONG(http_parse_request(p, (size_t)n, &req), n, m[i].name);
        CHECK_LONG(req.method_id, m[i].id, m[i].name);
        CHECK_SPAN(req.method, m[i].name, m[i].name);
        guarded_free(p, (size_t)n);
    }
}

static void test_tchar(void)
{
    static const char tchars[] = "!#$%&'*+-.^_`|~0123456789"
                                 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    unsigned wrong = 0;
    for (unsigned c = 0; c < 256; c++) {
        bool want = c != 0 && strchr(tchars, (int)c) != NULL;
        wrong += http_is_tchar((unsigned char)c) != want;
    }
    unit_gen_begin();
    CHECK_LONG(wrong, 0, "http_is_tchar matches RFC 9110 §5.6.2 for all 256 bytes");
    unit_gen_end();
}

/* The verdict http_parse_request reaches on "method SP target SP HTTP/1.1"
 * and an empty field section: 0 when it accepts the head. */
static long parsed_line_verdict(const char *m, size_t mn, const char *t, size_t tn)
{
    static char line[2 * HTTP_MAX_REQUEST_LINE + 64];
    size_t n = 0;
    memcpy(line, m, mn), n += mn;
    line[n++] = ' ';
    memcpy(line + n, t, tn), n += tn;
    memcpy(line + n, " HTTP/1.1\r\n\r\n", 13), n += 13;
    struct http_request req;
    long r = http_parse_request(line, n, &req);
    return r > 0 ? 0 : r;
}

/* http_request_line_check gives the parser's verdict on the same line, for
 * HTTP/2's and HTTP/3's requests: lengths around the limit, and a bad byte
 * in the method or target at each place around it. */
static void test_request_line_check(void)
{
    static char method[HTTP_MAX_REQUEST_LINE + 8], target[2 * HTTP_MAX_REQUEST_LINE];
    memset(method, 'G', sizeof method);
    memset(target, 'a', sizeof target);
    target[0] = '/';
    static const size_t mlens[] = {1,
                                   3,
                                   7,
                                   100,
                                   HTTP_MAX_REQUEST_LINE - 12,
                                   HTTP_MAX_REQUEST_LINE - 1,
                                   HTTP_MAX_REQUEST_LINE,
                                   HTTP_MAX_REQUEST_LINE + 1};
    /* Not SP: in HTTP/1 text a space ends the token, so what follows it is
     * judged as the next part (often 414 past the limit); a decoded :path
     * holding one is simply not 1*VCHAR (400, the hand-written case below). */
    static const unsigned char bad[] = {0x00, 0x7f, 0x80, '"', '\r', '\t'};
    unsigned wrong = 0, cases = 0;
    unit_gen_begin();
    for (size_t i = 0; i < ARRAY_LEN(mlens); i++) {
        size_t mn = mlens[i];
        size_t fit = HTTP_MAX_REQUEST_LINE - 10 - (mn < HTTP_MAX_REQUEST_LINE - 10 ? mn : 0);
        size_t tlens[] = {1, 2, fit > 2 ? fit - 1 : 1, fit, fit + 1, fit + 2, fit + 9, fit + 10};
        for (size_t j = 0; j < ARRAY_LEN(tlens); j++) {
            size_t tn = tlens[j];
            if (tn > sizeof target)
                continue;
            long want = parsed_line_verdict(method, mn, target, tn);
            long got = http_request_line_check(span_make(method, mn), span_make(target, tn));
            wrong += got != want, cases++;
            if (got != want)
                fprintf(stderr, "line check: method %zu, target %zu: got %ld, want %ld\n", mn, tn,
                        got, want);
            /* a bad byte at a few places of the target and the method */
            size_t at[] = {0, tn / 2, tn - 1};
            for (size_t k = 0; k < ARRAY_LEN(at); k++) {
                for (size_t b = 0; b < ARRAY_LEN(bad); b++) {
                    char keep = target[at[k]];
                    target[at[k]] = (char)bad[b];
                    want = parsed_line_verdict(method, mn, target, tn);
                    got = http_request_line_check(span_make(method, mn), span_make(target, tn));
                    target[at[k]] = keep;
                    wrong += got != want, cases++;
                    if (got != want)
                        fprintf(stderr, "T m%zu t%zu at %zu byte %02x: got %ld want %ld\n", mn, tn,
                                at[k], bad[b], got, want);
                    size_t am = at[k] < mn ? at[k] : mn - 1;
                    keep = method[am];
                    method[am] = (char)bad[b];
                    want = parsed_line_verdict(method, mn, target, tn);
                    got = http_request_line_check(span_make(method, mn), span_make(target, tn));
                    method[am] = keep;
                    wrong += got != want, cases++;
                    if (got != want)
                        fprintf(stderr, "M m%zu t%zu at %zu byte %02x: got %ld want %ld\n", mn, tn,
                                am, bad[b], got, want);
                }
            }
        }
    }
    CHECK_LONG(wrong, 0, "http_request_line_check agrees with the parser");
    CHECK(cases > 1000, "the cross-check ran");
    unit_gen_end();
    CHECK_LONG(http_request_line_check(SPAN_LIT(""), SPAN_LIT("/")), -400, "an empty method");
    CHECK_LONG(http_request_line_check(SPAN_LIT("GET"), SPAN_LIT("")), -400, "an empty target");
    CHECK_LONG(http_request_line_check(SPAN_LIT("GET"), SPAN_LIT("/a b")), -400, "a space");
    CHECK_LONG(http_request_line_check(SPAN_LIT("GET"), SPAN_LIT("/")), 0, "GET /");
}

/* http_field_value_ok admits exactly the bytes a field line's value may hold. */
static void test_field_value_ok(void)
{
    unsigned wrong = 0;
    for (unsigned c = 0; c < 256; c++) {
        char head[64];
        int n = snprintf(head, sizeof head, "GET / HTTP/1.1\r\nHost: a\r\nX: a%cb\r\n\r\n", 'Z');
        head[n - 7] = (char)c; /* the byte between "a" and "b" */
        struct http_request req;
        bool want = http_parse_request(head, (size_t)n, &req) > 0;
        char v[3] = {'a', (char)c, 'b'};
        wrong += http_field_value_ok(span_make(v, 3)) != want;
    }
    unit_gen_begin();
    CHECK_LONG(wrong, 0, "http_field_value_ok agrees with the parser for all 256 bytes");
    unit_gen_end();
    CHECK(http_field_value_ok(SPAN_LIT("")), "an empty value");
}

int main(void)
{
    for (size_t i = 0; i < ARRAY_LEN(rows); i++)
        check_row(rows[i].in, rows[i].n, rows[i].want, rows[i].why);
    test_request_line_limit();
    test_field_section_limit();
    test_field_count_limit();
    test_spans();
    test_higher_minor();
    test_methods();
    test_tchar();
    test_request_line_check();
    test_field_value_ok();
    return unit_done();
}

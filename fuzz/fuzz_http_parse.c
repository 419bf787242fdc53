/* SPDX-License-Identifier: MIT */
/*
 * fuzz_http_parse.c - http_parse_request() on arbitrary bytes, then on the
 * accepted heads http_fields_analyze(), target_split() and target_normalize()
 * (checked against fuzz/ref/target_ref.c). It traps when a verdict is not one
 * the header lists, a span leaves the input, an accepted head breaks a rule
 * it was accepted under, or a shorter cut of the same bytes answers anything
 * but HTTP_PARSE_AGAIN or the same verdict (a dozen cuts per input, the last
 * byte and the middle among them, to keep the run linear). Cuts are copied
 * into buffers of exactly their length, so a read past n is an ASan report.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/http_fields.h"
#include "core/http_parse.h"
#include "core/target.h"
#include "ref/target_ref.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct http_request req, cut_req;

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_http_parse: %s\n", what);
        __builtin_trap();
    }
}

static int inside(struct span s, const char *p, size_t n)
{
    return s.p == NULL ? s.n == 0 : (s.p >= p && s.p + s.n <= p + n);
}

static int all_tchar(struct span s)
{
    for (size_t i = 0; i < s.n; i++)
        if (!http_is_tchar((unsigned char)s.p[i]))
            return 0;
    return s.n > 0;
}

static void check_value(struct span v)
{
    for (size_t i = 0; i < v.n; i++) {
        unsigned char c = (unsigned char)v.p[i];
        require(c >= 0x80 || (c >= 0x20 && c != 0x7f) || c == '\t', "CTL in a value");
    }
    require(v.n == 0 || (v.p[0] != ' ' && v.p[0] != '\t'), "leading OWS kept");
    require(v.n == 0 || (v.p[v.n - 1] != ' ' && v.p[v.n - 1] != '\t'), "trailing OWS kept");
}

static void check_head(const char *p, size_t r)
{
    require(r <= HTTP_MAX_HEAD, "head longer than HTTP_MAX_HEAD");
    require(r >= 4 && memcmp(p + r - 4, "\r\n\r\n", 4) == 0, "head does not end in CRLF CRLF");
    require(inside(req.method, p, r) && all_tchar(req.method), "bad method span");
    /* method SP target SP "HTTP/1.x" */
    require(req.method.n + req.target.n + 10 <= HTTP_MAX_REQUEST_LINE, "line too long");
    require(inside(req.target, p, r) && req.target.n > 0, "bad target span");
    for (size_t i = 0; i < req.target.n; i++)
        require(req.target.p[i] > 0x20 && req.target.p[i] < 0x7f, "non-VCHAR target");
    require(req.minor == 0 || req.minor == 1, "bad minor");
    require(req.nfields <= HTTP_MAX_FIELDS, "too many fields");
    for (size_t i = 0; i < req.nfields; i++) {
        require(inside(req.fields[i].name, p, r) && all_tchar(req.fields[i].name), "bad name");
        require(inside(req.fields[i].value, p, r), "value outside the head");
        check_value(req.fields[i].value);
    }
    static const char *names[] = {"",    "GET",    "HEAD",  "OPTIONS", "POST",
                                  "PUT", "DELETE", "PATCH", "CONNECT", "TRACE"};
    enum http_method id = HTTP_METHOD_OTHER;
    for (size_t i = 1; i < sizeof(names) / sizeof(names[0]); i++)
        if (req.method.n == strlen(names[i]) && memcmp(req.method.p, names[i], req.method.n) == 0)
            id = (enum http_method)i;
    require(req.method_id == id, "method id");
}

/* The cut at k, in a buffer of exactly k bytes. */
static long parse_cut(const char *p, size_t k)
{
    char *c = malloc(k ? k : 1);
    memcpy(c, p, k);
    long r = http_parse_request(c, k, &cut_req);
    free(c);
    return r;
}

static void check_cuts(const char *p, size_t size, long r)
{
    size_t end = r > 0 ? (size_t)r : size;
    uint32_t x = (uint32_t)size * 2654435761u;
    for (int i = 0; i < 12 && end > 0; i++) {
        size_t k = i == 0 ? end - 1 : i == 1 ? end / 2 : (x = x * 1103515245u + 12345u) % end;
        long c = parse_cut(p, k);
        require(c == HTTP_PARSE_AGAIN || (r < 0 && c == r), "a shorter cut disagrees");
    }
    if (r > 0 && (size_t)r < size)
        require(parse_cut(p, (size_t)r) == r, "the head alone parses differently");
}

static void check_target(struct span raw)
{
    struct target t;
    int s = target_split(raw, &t);
    require(s == 0 || s == -400, "split verdict");
    if (s)
        return;
    char out[4096], ref[4096];
    unsigned f1, f2;
    long a = target_normalize(t.path, out, sizeof(out), &f1);
    long b = target_ref_normalize(t.path.p, t.path.n, ref, sizeof(ref), &f2);
    require(a == b, "normalize differs from the reference");
    if (a >= 0)
        require(memcmp(out, ref, (size_t)a) == 0 && f1 == f2 &&
                    target_ref_output_ok(out, (size_t)a),
                "normalized output");
}

static void check_fields(const char *p, size_t r)
{
    struct http_info info;
    int a = http_fields_analyze(&req, &info);
    require(a == 0 || a == -400 || a == -501, "fields verdict");
    if (a)
        return;
    require(req.minor == 0 || info.has_host, "1.1 without Host accepted");
    require(!info.has_host || (inside(info.host, p, r) && target_host_valid(info.host)), "host");
    require(info.if_match.n <= HTTP_LIST_MAX && info.if_none_match.n <= HTTP_LIST_MAX &&
                info.accept_encoding.n <= HTTP_LIST_MAX,
            "list count");
    struct span singles[] = {
        info.if_modified_since, info.if_unmodified_since, info.if_range, info.range, info.accept,
        info.referer,           info.user_agent};
    for (size_t i = 0; i < sizeof(singles) / sizeof(singles[0]); i++)
        require(inside(singles[i], p, r), "singleton outside the head");
    for (unsigned i = 0; i < info.if_none_match.n; i++)
        require(inside(info.if_none_match.v[i], p, r), "list span outside the head");
    /* A request accepted with Transfer-Encoding has a body: it is never on
     * GET/HEAD/OPTIONS and its connection never persists (the body is not
     * read, so nothing after the head may be taken for a request). */
    for (size_t i = 0; i < req.nfields; i++) {
        struct span n = req.fields[i].name;
        if (n.n == 17 && strncasecmp(n.p, "transfer-encoding", 17) == 0)
            require(info.has_body && !info.keep_alive && req.method_id != HTTP_METHOD_GET &&
                        req.method_id != HTTP_METHOD_HEAD && req.method_id != HTTP_METHOD_OPTIONS,
                    "TE accepted without a body that closes");
    }
    require(!info.has_body || !info.keep_alive, "a body on a persistent connection");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    long r = http_parse_request(p, size, &req);
    require(r == HTTP_PARSE_AGAIN || r == -400 || r == -414 || r == -431 || r == -505 ||
                (r > 0 && (size_t)r <= size),
            "unknown verdict");
    /* The server sizes its read buffer by this: a full one never waits. */
    require(r != HTTP_PARSE_AGAIN || size < HTTP_MAX_HEAD, "AGAIN with HTTP_MAX_HEAD bytes");
    if (r > 0) {
        check_head(p, (size_t)r);
        check_fields(p, (size_t)r);
        check_target(req.target);
    }
    check_cuts(p, size, r);
    return 0;
}

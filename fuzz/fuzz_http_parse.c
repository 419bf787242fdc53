/* SPDX-License-Identifier: MIT */
/*
 * fuzz_http_parse.c - http_parse_request() on arbitrary bytes, differentially
 * against the reference parser in fuzz/ref/http_parse_ref.c (verdict,
 * consumed length, method, target, version, and every field's name and value
 * span, pointer and length), then on the accepted heads
 * http_fields_analyze(), target_split() and target_normalize() (checked
 * against fuzz/ref/target_ref.c). It traps when the two parsers disagree, a
 * verdict is not one the header lists, a span leaves the input, an accepted
 * head breaks a rule it was accepted under, or a shorter cut of the same
 * bytes answers anything but HTTP_PARSE_AGAIN or the same verdict (a dozen
 * cuts per input, the last byte and the middle among them, to keep the run
 * linear; every cut is compared with the reference too). Cuts are copied into
 * buffers of exactly their length, so a read past n is an ASan report.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/http_fields.h"
#include "core/http_parse.h"
#include "core/target.h"
#include "ref/http_parse_ref.h"
#include "ref/target_ref.h"

/* RFC 9110 §2.5: HTTP/1.x with a single digit x > 1 is served as 1.1; the
 * reference and the parser both give minor 1, and only other major versions
 * are -505 (ref_http_parse's `minor_any` argument selects that rule). */

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct http_request req, cut_req, ref_req;

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

static int same_span(struct span a, struct span b)
{
    /* An empty span's pointer is unspecified. */
    return a.n == b.n && (a.n == 0 || a.p == b.p);
}

static int agree(long r, const struct http_request *a, long want, const struct http_request *b)
{
    if (r != want)
        return 0;
    if (r <= 0)
        return 1; /* on any other verdict *req is unspecified */
    if (!same_span(a->method, b->method) || !same_span(a->target, b->target) ||
        a->minor != b->minor || a->method_id != b->method_id || a->nfields != b->nfields)
        return 0;
    for (size_t i = 0; i < a->nfields; i++)
        if (!same_span(a->fields[i].name, b->fields[i].name) ||
            !same_span(a->fields[i].value, b->fields[i].value))
            return 0;
    return 1;
}

/* The parser's answer r (and *got) for p[0..n) against the reference's. */
static void differential(const char *p, size_t n, long r, const struct http_request *got)
{
    long want = ref_http_parse(p, n, true, &ref_req);
    if (agree(r, got, want, &ref_req))
        return;
    fprintf(stderr, "fuzz_http_parse: n %zu: parser %ld, reference %ld\n", n, r, want);
    if (r > 0 && want > 0)
        fprintf(stderr, "  minor %d/%d method_id %d/%d nfields %zu/%zu\n", got->minor,
                ref_req.minor, (int)got->method_id, (int)ref_req.method_id, got->nfields,
                ref_req.nfields);
    require(0, "differs from the reference parser");
}

/* The cut at k, in a buffer of exactly k bytes. */
static long parse_cut(const char *p, size_t k)
{
    char *c = malloc(k ? k : 1);
    memcpy(c, p, k);
    long r = http_parse_request(c, k, &cut_req);
    differential(c, k, r, &cut_req);
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

static void check_input(const char *p, size_t size)
{
    long r = http_parse_request(p, size, &req);
    differential(p, size, r, &req);
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
}

/* A recipe for a long head: after the 0xFE, chunks of [count: 2 bytes, little
 * endian][len: 1 byte][len bytes], each repeated count times, up to three
 * times HTTP_MAX_HEAD in all. Raw inputs stay under libFuzzer's max_len
 * (4 KiB by default), so only recipes reach the limits at 8 and 16 KiB; the
 * seeds in fuzz/corpus/http_parse/limit_* put them exactly at N and N+1. */
static size_t expand(const uint8_t *d, size_t n, char *out, size_t cap)
{
    size_t len = 0;
    for (size_t i = 1; i + 3 <= n;) {
        size_t count = (size_t)d[i] | (size_t)d[i + 1] << 8, k = d[i + 2];
        i += 3;
        if (k > n - i)
            k = n - i;
        for (size_t c = 0; c < count && len + k <= cap; c++, len += k)
            memcpy(out + len, d + i, k);
        i += k;
    }
    return len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || data[0] != 0xfe) { /* no head starts with 0xFE: a recipe */
        check_input((const char *)data, size);
        return 0;
    }
    static char big[3 * HTTP_MAX_HEAD];
    size_t n = expand(data, size, big, sizeof big);
    char *p = malloc(n ? n : 1); /* exactly n bytes, for ASan */
    memcpy(p, big, n);
    check_input(p, n);
    free(p);
    return 0;
}

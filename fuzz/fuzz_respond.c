/* SPDX-License-Identifier: MIT */
/*
 * fuzz_respond.c - etag_make() and the response writers of respond.h on
 * random inputs. It traps when:
 *   - an ETag is not a strong entity-tag (RFC 9110 §8.8.3: DQUOTE *etagc
 *     DQUOTE, no "W/"), is longer than ETAG_MAX, differs between two calls,
 *     differs from "ino-size-sec-nsec" in lower-case hex as etag.c
 *     documents (read back field by field, so two different tuples can
 *     never share a tag), or is not matched by cond.c as our own tag;
 *   - a status line is not HTTP-version SP 3DIGIT SP reason-phrase CRLF
 *     (RFC 9112 §4) with the status asked for, or a reason phrase is not the
 *     one RFC 9110 §15 gives for a code pith sends ("Unknown" otherwise);
 *   - respond_error_body_len() differs from the bytes respond_error_body()
 *     writes, or the body does not name the status in its title and heading;
 *   - a field line is not name ": " value CRLF byte for byte, or a head made
 *     of such lines does not parse back (http_parse_request()) into the same
 *     names and values;
 *   - a counting buf measures anything above other than what a real buf of
 *     exactly that room receives (every write goes into such a heap buffer,
 *     so a write past it is an ASan report).
 * Statuses are three-digit codes (100..999): respond.h writes a status, and
 * RFC 9110 §15 defines a status code as three digits.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cond.h"
#include "core/etag.h"
#include "core/http_parse.h"
#include "core/respond.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_respond: %s\n", what);
        __builtin_trap();
    }
}

/* ---- ETag ------------------------------------------------------------------------------ */

struct tuple {
    uint64_t ino, size;
    int64_t sec;
    uint32_t nsec;
};

static bool etagc(unsigned char c)
{
    return c == 0x21 || (c >= 0x23 && c <= 0x7e) || c >= 0x80;
}

/* One field of 1..16 lower-case hex digits, no leading zero but "0". */
static bool hex_field(const char *p, size_t n, uint64_t *v)
{
    if (n < 1 || n > 16 || (n > 1 && p[0] == '0'))
        return false;
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return false;
        *v = *v << 4 | (uint64_t)d;
    }
    return true;
}

static size_t make_tag(const struct tuple *t, char **out)
{
    *out = malloc(ETAG_MAX); /* exactly the documented room */
    return etag_make(t->ino, t->size, t->sec, t->nsec, *out);
}

static void check_etag(const struct tuple *t, const struct tuple *other)
{
    char *tag, *again, *tag2;
    size_t n = make_tag(t, &tag);
    require(n >= 2 && n <= ETAG_MAX, "etag: length");
    require(tag[0] == '"' && tag[n - 1] == '"', "etag: not quoted (or weak)");
    for (size_t i = 1; i + 1 < n; i++)
        require(etagc((unsigned char)tag[i]), "etag: a byte outside etagc");

    /* Read back: four '-'-separated hex fields equal to the tuple. */
    uint64_t v[4];
    size_t start = 1, k = 0;
    for (size_t i = 1; i < n; i++) {
        if (tag[i] != '-' && i != n - 1)
            continue;
        require(k < 4 && hex_field(tag + start, i - start, &v[k]), "etag: field form");
        k++;
        start = i + 1;
    }
    require(k == 4 && v[0] == t->ino && v[1] == t->size && v[2] == (uint64_t)t->sec &&
                v[3] == t->nsec,
            "etag: does not read back as ino-size-sec-nsec");
    char want[ETAG_MAX + 1];
    int wl = snprintf(want, sizeof want, "\"%llx-%llx-%llx-%x\"", (unsigned long long)t->ino,
                      (unsigned long long)t->size, (unsigned long long)t->sec, t->nsec);
    require((size_t)wl == n && memcmp(want, tag, n) == 0, "etag: differs from snprintf");

    require(make_tag(t, &again) == n && memcmp(again, tag, n) == 0, "etag: not deterministic");
    size_t n2 = make_tag(other, &tag2);
    bool same_tuple = t->ino == other->ino && t->size == other->size && t->sec == other->sec &&
                      t->nsec == other->nsec;
    require((n == n2 && memcmp(tag, tag2, n) == 0) == same_tuple,
            "etag: distinct tuples share a tag (or one tuple two tags)");

    /* cond.c takes it as our own strong tag. */
    struct span s = span_make(tag, n);
    struct span_list l = {{s}, 1};
    require(cond_if_range(s, s, 0, false, 0), "etag: If-Range with our own tag refused");
    require(cond_etag_list_match(&l, s, false), "etag: If-Match with our own tag refused");
    free(tag);
    free(again);
    free(tag2);
}

/* ---- status lines and error bodies --------------------------------------------------- */

/* RFC 9110 §15's reason phrases for the codes pith sends. */
static const char *rfc_reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 301: return "Moved Permanently";
    case 304: return "Not Modified";
    case 308: return "Permanent Redirect"; /* --redirect-http */
    case 400: return "Bad Request";
    case 401: return "Unauthorized"; /* basic auth */
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable"; /* precompressed variants, identity refused */
    case 408: return "Request Timeout";
    case 412: return "Precondition Failed";
    case 414: return "URI Too Long";
    case 416: return "Range Not Satisfiable";
    case 421: return "Misdirected Request";             /* sites: another certificate's host */
    case 429: return "Too Many Requests";               /* basic auth: failures past the limit */
    case 431: return "Request Header Fields Too Large"; /* RFC 6585 §5 */
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
    }
}

/* Counts, then writes into exactly the room counted; returns the bytes. */
static char *measure(void (*w)(struct buf *, const void *), const void *arg, size_t *n)
{
    struct buf count = buf_counter();
    w(&count, arg);
    require(!count.full, "the counting buf became full");
    char *p = malloc(count.len ? count.len : 1);
    struct buf b = buf_make(p, count.len);
    w(&b, arg);
    require(!b.full && b.len == count.len, "counted length differs from written");
    *n = b.len;
    return p;
}

static void w_status(struct buf *b, const void *arg)
{
    respond_status_line(b, *(const int *)arg);
}

static void w_body(struct buf *b, const void *arg)
{
    respond_error_body(b, *(const int *)arg);
}

static void check_status(int status)
{
    struct span r = respond_reason(status);
    const char *want = rfc_reason(status);
    require(r.n == strlen(want) && memcmp(r.p, want, r.n) == 0, "reason phrase");
    size_t n;
    char *line = measure(w_status, &status, &n);
    char expect[128];
    int el = snprintf(expect, sizeof expect, "HTTP/1.1 %03d %s\r\n", status, want);
    require((size_t)el == n && memcmp(line, expect, n) == 0, "status line");
    /* reason-phrase = 1*( HTAB / SP / VCHAR / obs-text ) */
    for (size_t i = 13; i + 2 < n; i++)
        require(line[i] == '\t' || line[i] == ' ' || (unsigned char)line[i] > 0x20,
                "status line: reason phrase byte");
    free(line);

    char *body = measure(w_body, &status, &n);
    require(n == respond_error_body_len(status), "respond_error_body_len differs from the body");
    char title[160], h1[160];
    snprintf(title, sizeof title, "<title>%d %s</title>", status, want);
    snprintf(h1, sizeof h1, "<h1>%d %s</h1>", status, want);
    require(memmem(body, n, title, strlen(title)) && memmem(body, n, h1, strlen(h1)),
            "error body does not name the status");
    require(n > 15 && memcmp(body, "<!DOCTYPE html>", 15) == 0, "error body is not HTML");
    free(body);
}

/* ---- field lines ------------------------------------------------------------------------ */

struct field_arg {
    const char *name;
    struct span value;
    uint64_t u;
    int kind; /* 0 span, 1 cstr, 2 u64, 3 end of head */
};

static void w_field(struct buf *b, const void *arg)
{
    const struct field_arg *f = arg;
    switch (f->kind) {
    case 0: respond_field(b, f->name, f->value); break;
    case 1: respond_field_cstr(b, f->name, f->value.p); break;
    case 2: respond_field_u64(b, f->name, f->u); break;
    default: respond_end_head(b); break;
    }
}

static bool is_field_vchar_or_ws(unsigned char c)
{
    return c == '\t' || c == ' ' || (c >= 0x21 && c != 0x7f);
}

static void check_fields(const uint8_t *d, size_t n, uint64_t u, int status)
{
    /* name: the input's tchars up to the first ':'; value: the rest, CR, LF
     * and NUL dropped (respond.h leaves those to the caller). */
    static const char tchars[] =
        "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    char name[64] = "X";
    size_t nn = 0, i = 0;
    for (; i < n && d[i] != ':' && nn < sizeof name - 1; i++)
        name[nn++] = tchars[d[i] % (sizeof tchars - 1)];
    name[nn ? nn : 1] = 0;
    char *value = malloc(n + 1);
    size_t vn = 0;
    bool clean = true; /* a field-value RFC 9110 §5.5 accepts */
    for (i++; i < n; i++) {
        if (d[i] == '\r' || d[i] == '\n' || d[i] == 0)
            continue;
        clean = clean && is_field_vchar_or_ws(d[i]);
        value[vn++] = (char)d[i];
    }
    value[vn] = 0;

    struct field_arg args[4] = {
        {name, span_make(value, vn), 0, 0},
        {name, span_make(value, vn), 0, 1},
        {"Content-Length", {0}, u, 2},
        {NULL, {0}, 0, 3},
    };
    char want[64];
    for (int k = 0; k < 4; k++) {
        size_t ln;
        char *line = measure(w_field, &args[k], &ln);
        if (k < 2)
            require(ln == strlen(name) + 2 + vn + 2 && memcmp(line, name, strlen(name)) == 0 &&
                        memcmp(line + strlen(name), ": ", 2) == 0 &&
                        memcmp(line + strlen(name) + 2, value, vn) == 0 &&
                        memcmp(line + ln - 2, "\r\n", 2) == 0,
                    "field line differs from name \": \" value CRLF");
        if (k == 2) {
            int wl = snprintf(want, sizeof want, "Content-Length: %llu\r\n", (unsigned long long)u);
            require(ln == (size_t)wl && memcmp(line, want, ln) == 0, "u64 field line");
        }
        if (k == 3)
            require(ln == 2 && memcmp(line, "\r\n", 2) == 0, "end of head");
        free(line);
    }

    /* A whole head: the status line, the three fields, the empty line; read
     * back by the request parser behind a request line. */
    struct buf count = buf_counter();
    respond_status_line(&count, status);
    for (int k = 0; k < 4; k++)
        w_field(&count, &args[k]);
    char *head = malloc(count.len);
    struct buf b = buf_make(head, count.len);
    respond_status_line(&b, status);
    size_t status_len = b.len;
    for (int k = 0; k < 4; k++)
        w_field(&b, &args[k]);
    require(!b.full && b.len == count.len, "head: counted length differs from written");
    if (clean) {
        size_t rn = b.len - status_len + 16;
        char *req = malloc(rn);
        memcpy(req, "GET / HTTP/1.1\r\n", 16);
        memcpy(req + 16, head + status_len, b.len - status_len);
        static struct http_request parsed;
        long r = http_parse_request(req, rn, &parsed);
        require(r == (long)rn && parsed.nfields == 3, "head does not parse back");
        /* the parser strips OWS around the value (RFC 9110 §5.5) */
        size_t a = 0, e = vn;
        while (a < e && (value[a] == ' ' || value[a] == '\t'))
            a++;
        while (e > a && (value[e - 1] == ' ' || value[e - 1] == '\t'))
            e--;
        for (int k = 0; k < 2; k++)
            require(parsed.fields[k].name.n == strlen(name) &&
                        memcmp(parsed.fields[k].name.p, name, strlen(name)) == 0 &&
                        parsed.fields[k].value.n == e - a &&
                        memcmp(parsed.fields[k].value.p, value + a, e - a) == 0,
                    "field does not parse back to its name and value");
        free(req);
    }
    free(head);
    free(value);
}

/* ---- input -------------------------------------------------------------------------------- */

static uint64_t u64_at(const uint8_t *c, size_t i)
{
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--)
        v = v << 8 | c[i + (size_t)k];
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t c[40] = {0};
    size_t head = size < sizeof c ? size : sizeof c;
    memcpy(c, data, head);

    struct tuple t = {u64_at(c, 0), u64_at(c, 8), (int64_t)u64_at(c, 16), (uint32_t)u64_at(c, 24)};
    /* The other tuple: the same, but for one field nudged (or nothing). */
    struct tuple o = t;
    uint64_t nudge = c[33] & 0x80 ? (uint64_t)1 << (c[33] & 63) : c[33] & 3;
    switch (c[32] & 3) {
    case 0: o.ino += nudge; break;
    case 1: o.size -= nudge; break;
    case 2: o.sec = (int64_t)((uint64_t)o.sec ^ nudge); break;
    default: o.nsec = (uint32_t)(o.nsec + nudge); break;
    }
    check_etag(&t, &o);

    int status = 100 + (int)((c[34] | c[35] << 8) % 900);
    static const int sent[] = {200, 204, 206, 301, 304, 400, 403, 404, 405,
                               408, 412, 414, 416, 431, 500, 501, 503, 505};
    if (c[36] & 1)
        status = sent[c[36] / 2 % (sizeof sent / sizeof sent[0])];
    check_status(status);
    check_fields(data + head, size - head, u64_at(c, 0), status);
    return 0;
}

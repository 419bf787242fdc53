/* SPDX-License-Identifier: MIT */
/*
 * fuzz_h1.c - round trip of the HTTP/1 response encoder (src/core/h1.c):
 * the input builds a struct response (a status, fields of any valid token
 * and value, a field block with or without its kept HTTP/1 form, length
 * known or not, HEAD, close) and what the request allowed (1.0 or 1.1,
 * keep-alive); the encoded head is read back by the independent reader in
 * fuzz/ref/h1_response_ref.c as a client would. It traps unless the reader
 * accepts the head and finds the same status, the same fields in order, and
 * the framing and Connection that h1.h promises; unless a block's kept form
 * gives the same bytes as the block encoded on the spot; and unless a chunk
 * size line reads back as its size. The same response goes through the
 * HTTP/2 and HTTP/3 encoder (src/core/field_list.c) too, which must give
 * ":status" and then the fields the reader found, in order, names
 * lowercased, without Connection or Transfer-Encoding, with every value
 * either kept in its buffer or one that lasts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/bytes.h"
#include "core/field_list.h"
#include "core/h1.h"
#include "core/response.h"
#include "ref/h1_response_ref.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_h1: %s\n", what);
        __builtin_trap();
    }
}

struct input {
    const uint8_t *p;
    size_t n;
};

static uint8_t take(struct input *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}

static const char TCHARS[] =
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/* A token of 1..16 tchars into out; never a framing field's name. */
static size_t make_name(struct input *in, char *out)
{
    size_t n = 1 + take(in) % 16;
    for (size_t i = 0; i < n; i++)
        out[i] = TCHARS[take(in) % (sizeof TCHARS - 1)];
    static const char *const reserved[] = {"content-length", "transfer-encoding", "connection"};
    for (size_t i = 0; i < 3; i++)
        if (n == strlen(reserved[i]) && strncasecmp(out, reserved[i], n) == 0)
            out[0] = 'X';
    return n;
}

/* A value of 0..40 bytes: VCHAR, obs-text, and SP/HTAB inside only (the
 * encoder's callers never pass CR, LF or NUL, nor edge whitespace). */
static size_t make_value(struct input *in, char *out)
{
    size_t n = take(in) % 41;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = take(in);
        bool edge = i == 0 || i == n - 1;
        if (c < 0x21 || c == 0x7f)
            c = (!edge && (c & 1)) ? (c & 2 ? ' ' : '\t') : (uint8_t)('a' + c % 26);
        out[i] = (char)c;
    }
    return n;
}

static const int statuses[] = {100, 200, 204, 206, 301, 304, 400, 403, 404, 405,
                               408, 412, 414, 416, 431, 500, 501, 503, 505, 299};

struct built {
    struct response r;
    struct field_block block;
    struct field_name fname[RESPONSE_FIELDS_MAX + FIELD_BLOCK_MAX];
    char lower[RESPONSE_FIELDS_MAX + FIELD_BLOCK_MAX][16];
    char names[RESPONSE_FIELDS_MAX + FIELD_BLOCK_MAX][16];
    char values[RESPONSE_FIELDS_MAX + FIELD_BLOCK_MAX][41];
    char block_h1[FIELD_BLOCK_MAX * 64];
    struct h1_context cx;
};

/* Field k's name: an operator's (no lowercase form kept) or one of pith's
 * own (both spellings), as the input says. */
static const struct field_name *name_of(struct input *in, struct built *b, unsigned k, size_t nn)
{
    b->fname[k].h1 = span_make(b->names[k], nn);
    b->fname[k].lower = (struct span){0};
    if (take(in) & 1) {
        for (size_t i = 0; i < nn; i++)
            b->lower[k][i] = ascii_lower(b->names[k][i]);
        b->fname[k].lower = span_make(b->lower[k], nn);
    }
    return &b->fname[k];
}

static void build(struct input *in, struct built *b)
{
    uint8_t flags = take(in);
    response_init(&b->r, statuses[take(in) % (sizeof statuses / sizeof statuses[0])]);
    uint64_t len = 0;
    for (int i = 0; i < 8; i++)
        len = len << 8 | take(in);
    if (flags & 1)
        response_set_length(&b->r, len >> (take(in) % 64));
    else
        b->r.length_known = false;
    b->r.no_body = flags & 2;
    b->r.close = flags & 4;
    b->cx = (struct h1_context){
        .date = SPAN_LIT("Tue, 01 Dec 2026 02:03:19 GMT"),
        .server = (flags & 8) ? SPAN_LIT("pith/0.1.0") : (struct span){0},
        .minor = (flags & 16) ? 1 : 0,
        .keep_alive = flags & 32,
    };
    unsigned k = 0, nf = take(in) % (RESPONSE_FIELDS_MAX + 1);
    for (unsigned i = 0; i < nf; i++, k++) {
        size_t nn = make_name(in, b->names[k]), vn = make_value(in, b->values[k]);
        b->r.field[b->r.nfields++] =
            (struct response_field){name_of(in, b, k, nn), span_make(b->values[k], vn)};
    }
    b->block.n = 0;
    b->block.h1 = (struct span){0};
    b->block.lasting = flags & 128;
    if (flags & 64) {
        unsigned nb = take(in) % (FIELD_BLOCK_MAX + 1);
        for (unsigned i = 0; i < nb; i++, k++) {
            size_t nn = make_name(in, b->names[k]), vn = make_value(in, b->values[k]);
            b->block.f[b->block.n++] =
                (struct response_field){name_of(in, b, k, nn), span_make(b->values[k], vn)};
        }
        if (flags & 128) {
            struct buf h = buf_make(b->block_h1, sizeof b->block_h1);
            field_block_encode_h1(&h, &b->block);
            require(!h.full, "block's HTTP/1 form fits");
            b->block.h1 = span_make(b->block_h1, h.len);
        }
        b->r.block = &b->block;
    }
}

/* The whole head: the buffer's bytes, the block's kept form, the tail. */
static size_t wire(const struct built *b, char *out, size_t cap, struct h1_head *h)
{
    char head[8192];
    struct buf buf = buf_make(head, sizeof head);
    h1_encode_head(&buf, &b->r, &b->cx, h);
    require(!buf.full, "head fits");
    size_t n = buf.len + h->block.n + h->tail.n;
    require(n <= cap, "wire fits");
    memcpy(out, head, buf.len);
    if (h->block.n)
        memcpy(out + buf.len, h->block.p, h->block.n);
    memcpy(out + buf.len + h->block.n, h->tail.p, h->tail.n);
    return n;
}

static bool field_eq(const struct ref_field *f, struct span name, struct span value)
{
    return f->name_len == name.n && memcmp(f->name, name.p, name.n) == 0 &&
           f->value_len == value.n && memcmp(f->value, value.p, value.n) == 0;
}

static bool is_named(const struct ref_field *f, const char *name)
{
    return f->name_len == strlen(name) && strncasecmp(f->name, name, f->name_len) == 0;
}

/* The fields read back, less those the encoder adds, are r's then the
 * block's, in order; Date and Server come first. */
static void check_fields(const struct built *b, const struct ref_response *got)
{
    size_t i = 0;
    require(got->nfields > 0 && field_eq(&got->f[i++], SPAN_LIT("Date"), b->cx.date), "Date");
    if (b->cx.server.n)
        require(i < got->nfields && field_eq(&got->f[i++], SPAN_LIT("Server"), b->cx.server),
                "Server");
    unsigned want = 0, total = b->r.nfields + (b->r.block ? b->r.block->n : 0);
    for (; i < got->nfields; i++) {
        const struct ref_field *f = &got->f[i];
        if (is_named(f, "content-length") || is_named(f, "transfer-encoding") ||
            is_named(f, "connection"))
            continue;
        require(want < total, "a field the response did not have");
        const struct response_field *rf =
            want < b->r.nfields ? &b->r.field[want] : &b->r.block->f[want - b->r.nfields];
        require(field_eq(f, rf->name->h1, rf->value), "a field differs or is out of order");
        want++;
    }
    require(want == total, "a field is missing");
}

static void check_framing(const struct built *b, const struct h1_head *h,
                          const struct ref_response *got)
{
    const struct response *r = &b->r;
    bool no_content = r->status < 200 || r->status == 204 || r->status == 304;
    bool close_delimited = !no_content && !r->length_known && b->cx.minor == 0;
    if (no_content)
        require(got->framing == REF_NO_BODY, "1xx/204/304 with framing fields");
    else if (r->length_known)
        require(got->framing == REF_CONTENT_LENGTH && got->content_length == r->length,
                "Content-Length");
    else if (b->cx.minor == 1)
        require(got->framing == REF_CHUNKED, "chunked for HTTP/1.1");
    else
        require(got->framing == REF_CLOSE_DELIMITED, "close-delimited for HTTP/1.0");
    require(h->close == (r->close || !b->cx.keep_alive || close_delimited), "close decision");
    require(got->conn_close == h->close, "Connection: close iff the connection ends");
    require(got->conn_keep_alive == (!h->close && b->cx.minor == 0), "keep-alive for 1.0");
    require(h->body == (!no_content && !r->no_body), "body promised");
    require(h->chunked == (got->framing == REF_CHUNKED && h->body), "chunked flag");
    require(got->version_minor == 1 && got->status == r->status, "status line");
}

static void check_chunk_head(struct input *in)
{
    uint64_t n = 0;
    for (int i = 0; i < 8; i++)
        n = n << 8 | take(in);
    n >>= take(in) % 64;
    if (n == 0)
        n = 1;
    char line[H1_CHUNK_HEAD_MAX];
    size_t k = h1_chunk_head(n, line);
    require(k >= 3 && k <= H1_CHUNK_HEAD_MAX && line[k - 2] == '\r' && line[k - 1] == '\n',
            "chunk line shape");
    uint64_t back = 0;
    for (size_t i = 0; i < k - 2; i++) {
        char c = line[i];
        require((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'), "chunk size is hex");
        back = back << 4 | (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    require(back == n && (k == 3 || line[0] != '0'), "chunk size reads back");
}

/* The HTTP/2 and HTTP/3 list of the same response: ":status", then what
 * the HTTP/1 reader found less the framing fields but content-length,
 * names lowercase, values kept or lasting. */
static void check_field_list(const struct built *b, const struct ref_response *got)
{
    static char keep_mem[16384];
    struct buf keep = buf_make(keep_mem, sizeof keep_mem);
    struct field_list_context cx = {b->cx.date, b->cx.server, NULL, 0};
    struct list_field lf[FIELD_LIST_MAX(0)];
    unsigned n = field_list_encode(&b->r, &cx, lf, &keep);
    require(!keep.full, "the list's copies fit");
    char status[4];
    snprintf(status, sizeof status, "%d", b->r.status);
    require(n > 0 && lf[0].name.n == 7 && memcmp(lf[0].name.p, ":status", 7) == 0 &&
                lf[0].value.n == 3 && memcmp(lf[0].value.p, status, 3) == 0,
            ":status first");
    unsigned k = 1;
    for (size_t i = 0; i < got->nfields; i++) {
        const struct ref_field *f = &got->f[i];
        if (is_named(f, "transfer-encoding") || is_named(f, "connection"))
            continue;
        require(k < n, "the list lacks a field");
        const struct list_field *l = &lf[k++];
        require(l->name.n == f->name_len && strncasecmp(l->name.p, f->name, f->name_len) == 0,
                "a name differs or is out of order");
        for (size_t c = 0; l->lower && c < l->name.n; c++)
            require(l->name.p[c] == ascii_lower(l->name.p[c]), "a name marked lower is not");
        require(l->value.n == f->value_len && memcmp(l->value.p, f->value, f->value_len) == 0,
                "a value differs");
        bool in_keep = l->value.p >= keep_mem && l->value.p + l->value.n <= keep_mem + keep.len;
        const char *values = (const char *)b->values;
        bool in_block =
            b->block.lasting && l->value.p >= values && l->value.p < values + sizeof b->values;
        require(!l->value.n || in_keep || in_block || l->value.p == b->cx.server.p,
                "a value that may not last was not kept");
    }
    require(k == n, "the list has a field HTTP/1's head has not");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct input in = {data, size};
    static struct built b;
    build(&in, &b);
    static char out[16384];
    struct h1_head h;
    size_t n = wire(&b, out, sizeof out, &h);
    struct ref_response got;
    require(ref_parse_response(out, n, &got), "the reader refuses the head");
    require(got.head_len == n, "the head ends where the encoding ends");
    check_fields(&b, &got);
    check_framing(&b, &h, &got);
    check_field_list(&b, &got);
    if (b.r.block && b.block.h1.n) {
        /* The kept form and the form written on the spot are the same. */
        static char again[16384];
        struct span kept = b.block.h1;
        b.block.h1 = (struct span){0};
        struct h1_head h2;
        size_t n2 = wire(&b, again, sizeof again, &h2);
        require(n2 == n && memcmp(again, out, n) == 0, "kept block form differs");
        b.block.h1 = kept;
    }
    check_chunk_head(&in);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * test_field_list.c - core/field_list.c: the HTTP/2 and HTTP/3 form of a
 * response head. Its fields are HTTP/1's (h1.c) in the same order, names
 * lowercase, with no framing field but content-length, and every value
 * that may not outlive the call copied into `keep`.
 */
#include "core/bytes.h"
#include "core/field_list.h"
#include "core/h1.h"
#include "unit.h"

#include <ctype.h>
#include <strings.h>

#define S(s) span_make(s, sizeof(s) - 1)

/* HTTP/1's head of r, its fields as "name: value\n" lines lowercased, less
 * the status line and the framing fields HTTP/2 never has. */
static size_t h1_lines(const struct response *r, const struct h1_context *cx, char *out)
{
    char head[2048];
    struct buf b = buf_make(head, sizeof head);
    struct h1_head h;
    h1_encode_head(&b, r, cx, &h);
    if (h.block.n)
        buf_put_span(&b, h.block);
    buf_put_span(&b, h.tail);
    size_t n = 0;
    const char *p = (const char *)memchr(head, '\n', b.len) + 1, *end = head + b.len;
    while (p < end) {
        const char *lf = memchr(p, '\n', (size_t)(end - p));
        size_t len = (size_t)(lf - p) - 1; /* less the CR */
        if (len && !(len >= 11 && strncasecmp(p, "Connection:", 11) == 0) &&
            !(len >= 18 && strncasecmp(p, "Transfer-Encoding:", 18) == 0)) {
            const char *colon = memchr(p, ':', len);
            for (const char *q = p; q < p + len; q++)
                out[n++] = q < colon ? (char)tolower((unsigned char)*q) : *q;
            out[n++] = '\n';
        }
        p = lf + 1;
    }
    return n;
}

static size_t list_lines(const struct list_field *f, unsigned count, char *out, bool *all_lower)
{
    size_t n = 0;
    *all_lower = true;
    for (unsigned i = 1; i < count; i++) { /* after :status */
        for (size_t k = 0; k < f[i].name.n; k++)
            out[n++] = (char)tolower((unsigned char)f[i].name.p[k]);
        *all_lower = *all_lower && (f[i].lower || !f[i].name.n);
        memcpy(out + n, ": ", 2), n += 2;
        memcpy(out + n, f[i].value.p, f[i].value.n), n += f[i].value.n;
        out[n++] = '\n';
    }
    return n;
}

static bool within(struct span v, const char *p, size_t n)
{
    return v.p >= p && v.p + v.n <= p + n;
}

static void test_same_fields_as_http1(void)
{
    static const struct field_name custom = {{"X-Custom", 8}, {NULL, 0}};
    struct response_field extra[] = {{FIELD(ACAO), S("*")}, {&custom, S("yes")}};
    struct field_block block = {.n = 2, .lasting = true};
    block.f[0] = (struct response_field){FIELD(CONTENT_TYPE), S("text/html")};
    block.f[1] = (struct response_field){FIELD(ETAG), S("\"abc\"")};
    struct h1_context hcx = {S("Sun, 06 Dec 2026 03:00:00 GMT"), S("pith/0"), extra, 2, 1, true};
    struct field_list_context fcx = {hcx.date, hcx.server, extra, 2};
    static const int statuses[] = {200, 206, 204, 304, 404, 101};
    for (size_t i = 0; i < ARRAY_LEN(statuses); i++) {
        for (int known = 0; known < 2; known++) {
            char stack_value[8] = "max=1";
            struct response r;
            response_init(&r, statuses[i]);
            response_add(&r, FIELD(CACHE_CONTROL), S(stack_value));
            r.block = &block;
            r.length = 1234;
            r.length_known = known;
            char want[2048], got[2048], keep_mem[256];
            struct buf keep = buf_make(keep_mem, sizeof keep_mem);
            struct list_field f[FIELD_LIST_MAX(2)];
            unsigned count = field_list_encode(&r, &fcx, f, &keep);
            bool lower;
            size_t wn = h1_lines(&r, &hcx, want), gn = list_lines(f, count, got, &lower);
            CHECK_MEM(got, gn, want, wn, "the fields and order HTTP/1's head has");
            CHECK_MEM(f[0].name.p, f[0].name.n, ":status", 7, ":status first");
            char digits[4];
            snprintf(digits, sizeof digits, "%d", statuses[i]);
            CHECK_MEM(f[0].value.p, f[0].value.n, digits, 3, "the status's digits");
            CHECK(!lower, "an operator's name goes as written (the library lowercases)");
            CHECK(!keep.full, "keep held the copies");
            /* what may not last is in keep; a lasting block is pointed at */
            for (unsigned k = 0; k < count; k++) {
                bool from_block =
                    f[k].value.p == block.f[0].value.p || f[k].value.p == block.f[1].value.p;
                bool from_extra = f[k].value.p == extra[0].value.p ||
                                  f[k].value.p == extra[1].value.p || f[k].value.p == hcx.server.p;
                CHECK(from_block || from_extra || within(f[k].value, keep_mem, keep.len),
                      "every value lasts: kept, a lasting block's, or the context's");
                CHECK(f[k].value.p < stack_value || f[k].value.p >= stack_value + 8,
                      "the handler's stack value is copied");
            }
        }
    }
}

static void test_no_lasting_block_is_copied(void)
{
    struct field_block block = {.n = 1, .lasting = false};
    block.f[0] = (struct response_field){FIELD(ETAG), S("\"x\"")};
    struct field_list_context cx = {S("date"), {0}, NULL, 0};
    struct response r;
    response_init(&r, 200);
    r.block = &block;
    char keep_mem[64];
    struct buf keep = buf_make(keep_mem, sizeof keep_mem);
    struct list_field f[FIELD_LIST_MAX(0)];
    unsigned n = field_list_encode(&r, &cx, f, &keep);
    CHECK_LONG(n, 4, ":status, date, content-length, etag (no server)");
    CHECK_MEM(f[3].name.p, f[3].name.n, "etag", 4, "the block's name, lowercase");
    CHECK(f[3].lower, "a constant lowercase name");
    CHECK(within(f[3].value, keep_mem, keep.len), "a block that does not last is copied");
    keep = buf_make(keep_mem, 8);
    field_list_encode(&r, &cx, f, &keep);
    CHECK(keep.full, "keep too small: full, for the caller's assertion");
}

int main(void)
{
    test_same_fields_as_http1();
    test_no_lasting_block_is_copied();
    return unit_done();
}

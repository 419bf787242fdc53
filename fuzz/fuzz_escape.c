/* SPDX-License-Identifier: MIT */
/*
 * fuzz_escape.c - the four escapers of escape.h on arbitrary bytes. For each
 * it traps when the output leaves the alphabet escape.h documents, when
 * unescaping it does not give the input back (HTML, URI path, log), when an
 * escape is used where the byte needed none (the output must be the one
 * canonical form), or when the JSON string does not decode, code point by
 * code point, to the input read as UTF-8 (fuzz/ref/utf8_ref.c, from the
 * Unicode Standard's Table 3-7) with each byte that starts no well-formed
 * sequence standing for itself (U+0000..U+00FF), which is what escape.h
 * promises. It also checks struct buf: a counting buf (buf_counter) measures
 * exactly what a real one receives, a buf of exactly that room is filled
 * without being full, a buf one byte short ends full with a prefix of the
 * output, and escaping appends after what a buf already holds. Outputs are
 * heap buffers of exactly their room, so a write past one is an ASan report.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/escape.h"
#include "ref/utf8_ref.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_escape: %s\n", what);
        __builtin_trap();
    }
}

enum which { HTML, URI, URI_SLASH, LOG, JSON, NWHICH };

static const char *const names[NWHICH] = {"html", "uri", "uri+slash", "log", "json"};

static void run(enum which w, struct buf *b, struct span s)
{
    switch (w) {
    case HTML: escape_html(b, s); break;
    case URI: escape_uri_path(b, s, false); break;
    case URI_SLASH: escape_uri_path(b, s, true); break;
    case LOG: escape_log(b, s); break;
    default: escape_json(b, s); break;
    }
}

/* The checks below are not what the fuzzer should steer by (their branches
 * follow the writer's), and their comparison callbacks would cost most of a
 * run: no coverage instrumentation for them. */
#pragma clang attribute push(__attribute__((no_sanitize("coverage"))), apply_to = function)

static int hex_upper(unsigned char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* ---- HTML: & < > " ' only as entities --------------------------------------- */

static void check_html(const char *o, size_t n, struct span s)
{
    static const char *const ent[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};
    static const char raw[] = "&<>\"'";
    char *back = malloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        require(o[i] != '<' && o[i] != '>' && o[i] != '"' && o[i] != '\'', "html: raw < > \" '");
        if (o[i] != '&') {
            back[k++] = o[i++];
            continue;
        }
        int e = -1;
        for (int j = 0; j < 5 && e < 0; j++)
            if (n - i >= strlen(ent[j]) && memcmp(o + i, ent[j], strlen(ent[j])) == 0)
                e = j;
        require(e >= 0, "html: '&' that starts no entity");
        back[k++] = raw[e];
        i += strlen(ent[e]);
    }
    require(k == s.n && memcmp(back, s.p, k) == 0, "html: does not unescape to the input");
    free(back);
}

/* ---- URI path: unreserved and '/' as they are, the rest %XX --------------------- */

static bool unreserved(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

static void check_uri(const char *o, size_t n, struct span s, bool slash)
{
    char *back = malloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)o[i];
        if (c != '%') {
            require(unreserved(c) || (c == '/' && !slash), "uri: byte outside the alphabet");
            back[k++] = o[i++];
            continue;
        }
        require(n - i >= 3 && hex_upper((unsigned char)o[i + 1]) >= 0 &&
                    hex_upper((unsigned char)o[i + 2]) >= 0,
                "uri: '%' without two upper-case hex digits");
        unsigned char d = (unsigned char)(hex_upper((unsigned char)o[i + 1]) * 16 +
                                          hex_upper((unsigned char)o[i + 2]));
        require(!unreserved(d) && !(d == '/' && !slash), "uri: a byte encoded that needed none");
        back[k++] = (char)d;
        i += 3;
    }
    require(k == s.n && memcmp(back, s.p, k) == 0, "uri: does not decode to the input");
    free(back);
}

/* ---- log: printable ASCII, '"' and '\' never raw --------------------------------- */

static void check_log(const char *o, size_t n, struct span s)
{
    char *back = malloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)o[i];
        require(c >= 0x20 && c <= 0x7e && c != '"', "log: byte outside 0x20..0x7E or a raw '\"'");
        if (c != '\\') {
            back[k++] = o[i++];
            continue;
        }
        require(n - i >= 4 && o[i + 1] == 'x' && hex_upper((unsigned char)o[i + 2]) >= 0 &&
                    hex_upper((unsigned char)o[i + 3]) >= 0,
                "log: '\\' not followed by xHH");
        unsigned char d = (unsigned char)(hex_upper((unsigned char)o[i + 2]) * 16 +
                                          hex_upper((unsigned char)o[i + 3]));
        require(d < 0x20 || d > 0x7e || d == '"' || d == '\\',
                "log: a byte escaped that needed none");
        back[k++] = (char)d;
        i += 4;
    }
    require(k == s.n && memcmp(back, s.p, k) == 0, "log: does not unescape to the input");
    free(back);
}

/* ---- JSON ---------------------------------------------------------------------------- */

/* Decodes o[0..n) as the body of a JSON string (RFC 8259 §7): escapes and
 * raw UTF-8, no control characters, no raw '"'. Traps on anything else. */
static size_t decode_json_string(const char *o, size_t n, uint32_t *out)
{
    const unsigned char *p = (const unsigned char *)o;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        require(p[i] >= 0x20 && p[i] != '"' && p[i] != 0x7f, "json: raw control, DEL or '\"'");
        if (p[i] == '\\') {
            require(n - i >= 2, "json: '\\' at the end");
            char e = (char)p[i + 1];
            if (e == '"' || e == '\\') {
                out[k++] = (unsigned char)e;
                i += 2;
                continue;
            }
            /* escape.h: anything else as \u00XX, upper-case hex */
            require(e == 'u' && n - i >= 6 && p[i + 2] == '0' && p[i + 3] == '0' &&
                        hex_upper(p[i + 4]) >= 0 && hex_upper(p[i + 5]) >= 0,
                    "json: escape other than \\\" \\\\ \\u00XX");
            uint32_t cp = (uint32_t)(hex_upper(p[i + 4]) * 16 + hex_upper(p[i + 5]));
            require(cp < 0x20 || cp == 0x7f || cp >= 0x80, "json: a byte escaped that needed none");
            out[k++] = cp;
            i += 6;
            continue;
        }
        uint32_t cp;
        size_t len = ref_utf8_seq(p + i, n - i, &cp);
        require(len > 0, "json: output is not UTF-8");
        out[k++] = cp;
        i += len;
    }
    return k;
}

static void check_json(const char *o, size_t n, struct span s)
{
    uint32_t *want = malloc((s.n + 1) * sizeof *want), *got = malloc((n + 1) * sizeof *got);
    size_t a = ref_utf8_lenient_decode(s.p, s.n, want), b = decode_json_string(o, n, got);
    require(a == b && memcmp(want, got, a * sizeof *want) == 0,
            "json: does not decode to the input's code points");
    free(want);
    free(got);
}

#pragma clang attribute pop

/* ---- struct buf ----------------------------------------------------------------------- */

static void check_one(enum which w, struct span s)
{
    struct buf count = buf_counter();
    run(w, &count, s);
    require(!count.full, "the counting buf became full");
    size_t n = count.len;

    /* After three bytes already in the buf, with exactly the room needed. */
    char *mem = malloc(n + 3);
    memcpy(mem, "ab|", 3);
    struct buf b = buf_make(mem, n + 3);
    b.len = 3;
    run(w, &b, s);
    if (b.len != n + 3 || b.full) {
        fprintf(stderr, "fuzz_escape: %s: counted %zu, wrote %zu (full %d)\n", names[w], n,
                b.len - 3, b.full);
        require(0, "the counting buf measured another length");
    }
    require(memcmp(mem, "ab|", 3) == 0, "bytes before the escape changed");
    const char *o = mem + 3;
    switch (w) {
    case HTML: check_html(o, n, s); break;
    case URI: check_uri(o, n, s, false); break;
    case URI_SLASH: check_uri(o, n, s, true); break;
    case LOG: check_log(o, n, s); break;
    default: check_json(o, n, s); break;
    }

    /* One byte short: full, and what was written is a prefix of the output. */
    if (n > 0) {
        char *small = malloc(n - 1 ? n - 1 : 1);
        struct buf t = buf_make(small, n - 1);
        run(w, &t, s);
        require(t.full && t.len <= n - 1, "a buf one byte short did not end full");
        require(memcmp(small, o, t.len) == 0, "a full buf holds other bytes than a prefix");
        free(small);
    }
    free(mem);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *p = malloc(size ? size : 1);
    memcpy(p, data, size);
    for (int w = 0; w < NWHICH; w++)
        check_one((enum which)w, span_make(p, size));
    free(p);
    return 0;
}

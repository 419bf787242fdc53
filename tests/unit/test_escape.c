/* SPDX-License-Identifier: MIT */
/*
 * test_escape.c - escape_html(), escape_uri_path(), escape_log() and
 * escape_json() against escape.h: one row per rule, every one of the 256
 * byte values through each escaper, UTF-8 passthrough and every kind of
 * invalid UTF-8 in JSON (overlong, surrogate, above U+10FFFF, truncated,
 * stray continuation), 20,000 pseudo-random strings decoded back to their
 * input, and the struct buf rule at every capacity below the full length:
 * nothing of an escape is written partially, the output is the escape of a
 * prefix of the input, and `full` is set. Inputs and outputs lie against
 * guard pages.
 */
#include <ctype.h>

#include "core/escape.h"
#include "unit.h"

enum kind { HTML, URI, URI_SLASH, LOG, JSON };

static void run_escape(enum kind k, struct buf *b, struct span s)
{
    switch (k) {
    case HTML: escape_html(b, s); break;
    case URI: escape_uri_path(b, s, false); break;
    case URI_SLASH: escape_uri_path(b, s, true); break;
    case LOG: escape_log(b, s); break;
    case JSON: escape_json(b, s); break;
    }
}

/* Escapes p[0..n) into a fresh malloc'd buffer big enough for anything. */
static char *escape_all(enum kind k, const char *p, size_t n, size_t *len)
{
    size_t cap = 6 * n + 1;
    char *out = malloc(cap);
    char *in = guarded_copy(p, n);
    struct buf b = buf_make(out, cap);
    run_escape(k, &b, span_make(in, n));
    guarded_free(in, n);
    *len = b.len;
    return out;
}

/* Lower-cases the hex digits of \xHH and \uXXXX so the comparison does not
 * depend on a hex case escape.h leaves open for logs and JSON. */
static void fold_hex(char *p, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++) {
        if (p[i] != '\\')
            continue;
        if (p[i + 1] == '\\') { /* an escaped backslash: skip the pair */
            i++;
            continue;
        }
        size_t digits = p[i + 1] == 'x' ? 2 : p[i + 1] == 'u' ? 4 : 0;
        for (size_t j = i + 2; j < i + 2 + digits && j < n; j++)
            p[j] = (char)tolower((unsigned char)p[j]);
        i += 1 + digits;
    }
}

static const struct row {
    enum kind kind;
    const char *in;
    size_t n; /* 0: strlen */
    const char *want;
    const char *why;
} rows[] = {
    /* HTML */
    {HTML, "&", 0, "&amp;", "ampersand"},
    {HTML, "<", 0, "&lt;", "less-than"},
    {HTML, ">", 0, "&gt;", "greater-than"},
    {HTML, "\"", 0, "&quot;", "double quote"},
    {HTML, "'", 0, "&#39;", "single quote"},
    {HTML, "<script>alert(1)</script>", 0, "&lt;script&gt;alert(1)&lt;/script&gt;", "script"},
    {HTML, "\"><svg onload=x>", 0, "&quot;&gt;&lt;svg onload=x&gt;", "attribute break-out"},
    {HTML, "' onmouseover='x", 0, "&#39; onmouseover=&#39;x", "single-quoted attribute"},
    {HTML, "a&amp;b", 0, "a&amp;amp;b", "an entity is escaped again"},
    {HTML, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 0,
     "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "UTF-8 passes through"},
    {HTML, "\xff\xfe", 0, "\xff\xfe", "any other byte passes through"},
    {HTML, "a\nb\tc", 0, "a\nb\tc", "controls pass through"},
    {HTML, "", 0, "", "empty"},
    {HTML, "plain", 0, "plain", "nothing to escape"},

    /* URI path */
    {URI, "azAZ09-._~", 0, "azAZ09-._~", "unreserved kept"},
    {URI, "a/b/c", 0, "a/b/c", "'/' kept"},
    {URI_SLASH, "a/b", 0, "a%2Fb", "'/' encoded as one segment"},
    {URI, "a b", 0, "a%20b", "space"},
    {URI, "\r\n", 0, "%0D%0A", "CR LF"},
    {URI, "%", 0, "%25", "percent"},
    {URI, "?#", 0, "%3F%23", "query and fragment"},
    {URI, "\"'<>", 0, "%22%27%3C%3E", "quotes and angle brackets"},
    {URI, "\\", 0, "%5C", "backslash"},
    {URI, ":@!$&()*+,;=", 0, "%3A%40%21%24%26%28%29%2A%2B%2C%3B%3D", "sub-delims and gen-delims"},
    {URI, "caf\xc3\xa9", 0, "caf%C3%A9", "UTF-8 bytes encoded upper-case"},
    {URI, "\x80\xff", 0, "%80%FF", "high bytes upper-case"},
    {URI, "\x7f", 0, "%7F", "DEL"},
    {URI, "a\0b", 3, "a%00b", "NUL"},
    {URI, "%2e%2e", 0, "%252e%252e", "an encoded dot-dot stays encoded"},
    {URI, "//x", 0, "//x", "'//' kept without encode_slash"},
    {URI_SLASH, "..", 0, "..", "dots are unreserved"},

    /* log */
    {LOG, "GET / HTTP/1.1", 0, "GET / HTTP/1.1", "printable kept"},
    {LOG, "\"", 0, "\\x22", "double quote"},
    {LOG, "\\", 0, "\\x5c", "backslash"},
    {LOG, "a\r\nb", 0, "a\\x0d\\x0ab", "CR LF: no forged log line"},
    {LOG, "\t", 0, "\\x09", "HTAB"},
    {LOG, "\x7f", 0, "\\x7f", "DEL"},
    {LOG, "\x80\xff", 0, "\\x80\\xff", "high bytes"},
    {LOG, "caf\xc3\xa9", 0, "caf\\xc3\\xa9", "UTF-8 is escaped too"},
    {LOG, "a\0b", 3, "a\\x00b", "NUL"},
    {LOG, "\x1b[31m", 0, "\\x1b[31m", "terminal escape"},
    {LOG, "'<>&", 0, "'<>&", "other ASCII punctuation kept"},

    /* JSON */
    {JSON, "plain", 0, "plain", "nothing to escape"},
    {JSON, "\"", 0, "\\\"", "double quote"},
    {JSON, "\\", 0, "\\\\", "backslash"},
    {JSON, "/", 0, "/", "slash needs no escape"},
    {JSON, "\n", 0, "\\u000a", "LF"},
    {JSON, "\x01\x1f", 0, "\\u0001\\u001f", "controls"},
    {JSON, "a\0b", 3, "a\\u0000b", "NUL"},
    {JSON, "caf\xc3\xa9", 0, "caf\xc3\xa9", "2-byte UTF-8 kept"},
    {JSON, "\xe2\x82\xac", 0, "\xe2\x82\xac", "3-byte UTF-8 kept"},
    {JSON, "\xf0\x9f\x98\x80", 0, "\xf0\x9f\x98\x80", "4-byte UTF-8 kept"},
    {JSON, "\xc2\x80", 0, "\xc2\x80", "U+0080, smallest 2-byte"},
    {JSON, "\xe0\xa0\x80", 0, "\xe0\xa0\x80", "U+0800, smallest 3-byte"},
    {JSON, "\xf0\x90\x80\x80", 0, "\xf0\x90\x80\x80", "U+10000, smallest 4-byte"},
    {JSON, "\xf4\x8f\xbf\xbf", 0, "\xf4\x8f\xbf\xbf", "U+10FFFF, the largest"},
    {JSON, "\xed\x9f\xbf", 0, "\xed\x9f\xbf", "U+D7FF, below the surrogates"},
    {JSON, "\xee\x80\x80", 0, "\xee\x80\x80", "U+E000, above the surrogates"},
    {JSON, "\xef\xbf\xbf", 0, "\xef\xbf\xbf", "U+FFFF (a noncharacter, valid UTF-8)"},
    {JSON, "\xc0\x80", 0, "\\u00c0\\u0080", "overlong NUL"},
    {JSON, "\xc1\xbf", 0, "\\u00c1\\u00bf", "overlong 2-byte"},
    {JSON, "\xe0\x80\xaf", 0, "\\u00e0\\u0080\\u00af", "overlong 3-byte '/'"},
    {JSON, "\xe0\x9f\xbf", 0, "\\u00e0\\u009f\\u00bf", "overlong 3-byte, largest"},
    {JSON, "\xf0\x80\x80\xaf", 0, "\\u00f0\\u0080\\u0080\\u00af", "overlong 4-byte"},
    {JSON, "\xf0\x8f\xbf\xbf", 0, "\\u00f0\\u008f\\u00bf\\u00bf", "overlong 4-byte, largest"},
    {JSON, "\xed\xa0\x80", 0, "\\u00ed\\u00a0\\u0080", "surrogate U+D800"},
    {JSON, "\xed\xbf\xbf", 0, "\\u00ed\\u00bf\\u00bf", "surrogate U+DFFF"},
    {JSON, "\xf4\x90\x80\x80", 0, "\\u00f4\\u0090\\u0080\\u0080", "U+110000"},
    {JSON, "\xf5\x80\x80\x80", 0, "\\u00f5\\u0080\\u0080\\u0080", "F5 lead byte"},
    {JSON, "\xff", 0, "\\u00ff", "FF"},
    {JSON, "\x80", 0, "\\u0080", "stray continuation byte"},
    {JSON, "\xe2\x82", 0, "\\u00e2\\u0082", "truncated 3-byte at the end"},
    {JSON, "\xf0\x9f\x98", 0, "\\u00f0\\u009f\\u0098", "truncated 4-byte at the end"},
    {JSON, "\xc3", 0, "\\u00c3", "truncated 2-byte at the end"},
    {JSON,
     "\xc3"
     "a",
     0, "\\u00c3a", "lead byte followed by ASCII"},
    {JSON,
     "\xe2\x82"
     "a\xe2\x82\xac",
     0, "\\u00e2\\u0082a\xe2\x82\xac", "truncated then valid"},
    {JSON, "\xc3\xa9\xa9", 0, "\xc3\xa9\\u00a9", "valid then stray continuation"},
};

static void test_rows(void)
{
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        const struct row *r = &rows[i];
        size_t n = r->n ? r->n : strlen(r->in), len;
        char *got = escape_all(r->kind, r->in, n, &len);
        size_t wn = strlen(r->want);
        char *want = malloc(wn + 1);
        memcpy(want, r->want, wn);
        if (r->kind == LOG || r->kind == JSON) {
            fold_hex(got, len);
            fold_hex(want, wn);
        }
        CHECK_MEM(got, len, want, wn, r->why);
        free(want);
        free(got);
    }
}

static bool unreserved(unsigned c)
{
    return isalnum((int)c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* Each of the 256 bytes alone through each escaper. */
static void test_bytes(void)
{
    for (unsigned c = 0; c < 256; c++) {
        char in = (char)c, want[16];
        size_t len, wn;
        char *got;

        got = escape_all(HTML, &in, 1, &len);
        const char *ent = c == '&'    ? "&amp;"
                          : c == '<'  ? "&lt;"
                          : c == '>'  ? "&gt;"
                          : c == '"'  ? "&quot;"
                          : c == '\'' ? "&#39;"
                                      : NULL;
        if (ent)
            CHECK_MEM(got, len, ent, strlen(ent), "html: each special byte");
        else
            CHECK_MEM(got, len, &in, 1, "html: every other byte copied");
        free(got);

        for (int slash = 0; slash < 2; slash++) {
            got = escape_all(slash ? URI_SLASH : URI, &in, 1, &len);
            if (unreserved(c) || (c == '/' && !slash)) {
                CHECK_MEM(got, len, &in, 1, "uri: unreserved (and '/') kept");
            } else {
                wn = (size_t)snprintf(want, sizeof want, "%%%02X", c);
                CHECK_MEM(got, len, want, wn, "uri: %XX upper-case");
            }
            free(got);
        }

        got = escape_all(LOG, &in, 1, &len);
        if (c >= 0x20 && c <= 0x7e && c != '"' && c != '\\') {
            CHECK_MEM(got, len, &in, 1, "log: printable kept");
        } else {
            wn = (size_t)snprintf(want, sizeof want, "\\x%02x", c);
            fold_hex(got, len);
            CHECK_MEM(got, len, want, wn, "log: \\xHH");
        }
        free(got);

        got = escape_all(JSON, &in, 1, &len);
        if (c == '"' || c == '\\') {
            wn = (size_t)snprintf(want, sizeof want, "\\%c", c);
            CHECK_MEM(got, len, want, wn, "json: quote and backslash");
        } else if (c < 0x20 || c >= 0x80) {
            wn = (size_t)snprintf(want, sizeof want, "\\u%04x", c);
            fold_hex(got, len);
            CHECK_MEM(got, len, want, wn, "json: controls and lone high bytes as \\u00XX");
        } else if (c == 0x7f) {
            /* escape.h escapes below 0x20 only; DEL may go either way */
            fold_hex(got, len);
            CHECK((len == 1 && got[0] == 0x7f) || (len == 6 && memcmp(got, "\\u007f", 6) == 0),
                  "json: DEL copied or \\u007f");
        } else {
            CHECK_MEM(got, len, &in, 1, "json: printable ASCII kept");
        }
        free(got);
    }
}

/* ---- decoders: escaped output read back must give the input ------------- */

static int hexval(char c)
{
    return isdigit((unsigned char)c)    ? c - '0'
           : isxdigit((unsigned char)c) ? tolower((unsigned char)c) - 'a' + 10
                                        : -1;
}

static bool decode_html(const char *p, size_t n, char *out, size_t *on)
{
    static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};
    static const char chars[] = "&<>\"'";
    *on = 0;
    for (size_t i = 0; i < n;) {
        if (p[i] == '<' || p[i] == '>' || p[i] == '"' || p[i] == '\'')
            return false; /* must never appear raw */
        if (p[i] != '&') {
            out[(*on)++] = p[i++];
            continue;
        }
        size_t k;
        for (k = 0; k < 5; k++)
            if (n - i >= strlen(ents[k]) && memcmp(p + i, ents[k], strlen(ents[k])) == 0)
                break;
        if (k == 5)
            return false;
        out[(*on)++] = chars[k];
        i += strlen(ents[k]);
    }
    return true;
}

static bool decode_uri(const char *p, size_t n, bool slash, char *out, size_t *on)
{
    *on = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)p[i];
        if (unreserved(c) || (c == '/' && !slash)) {
            out[(*on)++] = p[i++];
        } else if (c == '%' && n - i >= 3 && hexval(p[i + 1]) >= 0 && hexval(p[i + 2]) >= 0 &&
                   !islower((unsigned char)p[i + 1]) && !islower((unsigned char)p[i + 2])) {
            out[(*on)++] = (char)(hexval(p[i + 1]) * 16 + hexval(p[i + 2]));
            i += 3;
        } else {
            return false;
        }
    }
    return true;
}

static bool decode_log(const char *p, size_t n, char *out, size_t *on)
{
    *on = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c > 0x7e || c == '"')
            return false;
        if (c != '\\') {
            out[(*on)++] = p[i++];
        } else if (n - i >= 4 && p[i + 1] == 'x' && hexval(p[i + 2]) >= 0 &&
                   hexval(p[i + 3]) >= 0) {
            out[(*on)++] = (char)(hexval(p[i + 2]) * 16 + hexval(p[i + 3]));
            i += 4;
        } else {
            return false;
        }
    }
    return true;
}

/* A JSON string body (RFC 8259 §7) that is valid UTF-8; \u00XX read back
 * as the byte XX (escape.h's rule for controls and bad bytes). */
static bool decode_json(const char *p, size_t n, char *out, size_t *on)
{
    const unsigned char *u = (const unsigned char *)p;
    *on = 0;
    for (size_t i = 0; i < n;) {
        if (u[i] < 0x20 || u[i] == '"')
            return false;
        if (u[i] == '\\') {
            if (n - i >= 2 && (p[i + 1] == '"' || p[i + 1] == '\\')) {
                out[(*on)++] = p[i + 1];
                i += 2;
            } else if (n - i >= 6 && p[i + 1] == 'u' && p[i + 2] == '0' && p[i + 3] == '0' &&
                       hexval(p[i + 4]) >= 0 && hexval(p[i + 5]) >= 0) {
                out[(*on)++] = (char)(hexval(p[i + 4]) * 16 + hexval(p[i + 5]));
                i += 6;
            } else {
                return false;
            }
        } else if (u[i] < 0x80) {
            out[(*on)++] = p[i++];
        } else {
            size_t k = unit_utf8_len(u + i, n - i);
            if (k == 0)
                return false; /* raw bytes must be valid UTF-8 */
            memcpy(out + *on, p + i, k);
            *on += k;
            i += k;
        }
    }
    return true;
}

static uint64_t rng_state = 0x452821e638d01377u;

static uint64_t rng_next(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Random bytes biased toward the interesting ones. */
static size_t random_input(char *p)
{
    static const char pool[] = "&<>\"'\\/%?# \r\n\t\x7f\x80\xbf\xc0\xc2\xc3\xa9\xe0\xa0\xed\xef"
                               "\xf0\x90\xf4\x8f\xf5\xff"
                               "aZ09-._~";
    size_t n = rng_next() % 40;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng_next();
        p[i] = r % 3 ? pool[(r >> 8) % (sizeof pool - 1)] : (char)(r >> 16);
    }
    return n;
}

static void test_round_trip(void)
{
    char in[64], back[64];
    for (int round = 0; round < 20000; round++) {
        size_t n = random_input(in), len, bn;
        char *out;

        out = escape_all(HTML, in, n, &len);
        CHECK(decode_html(out, len, back, &bn) && bn == n && memcmp(back, in, n) == 0,
              "html: decodes back, no raw < > \" '");
        free(out);

        out = escape_all(URI, in, n, &len);
        CHECK(decode_uri(out, len, false, back, &bn) && bn == n && memcmp(back, in, n) == 0,
              "uri: decodes back, only unreserved, '/' and %XX");
        free(out);

        out = escape_all(URI_SLASH, in, n, &len);
        CHECK(decode_uri(out, len, true, back, &bn) && bn == n && memcmp(back, in, n) == 0,
              "uri segment: decodes back, no raw '/'");
        free(out);

        out = escape_all(LOG, in, n, &len);
        CHECK(decode_log(out, len, back, &bn) && bn == n && memcmp(back, in, n) == 0,
              "log: decodes back, printable ASCII only");
        free(out);

        out = escape_all(JSON, in, n, &len);
        CHECK(decode_json(out, len, back, &bn) && bn == n && memcmp(back, in, n) == 0,
              "json: valid UTF-8 JSON string body that decodes back");
        free(out);
    }
}

/* ---- the buffer-full rule ----------------------------------------------- */

static void check_full(enum kind k, const char *in, size_t n, const char *why)
{
    size_t full_len;
    char *full = escape_all(k, in, n, &full_len);
    /* the lengths at which the output is the complete escape of a prefix */
    bool *cut = calloc(full_len + 1, 1);
    for (size_t i = 0; i <= n; i++) {
        size_t pl;
        char *pre = escape_all(k, in, i, &pl);
        if (pl <= full_len && memcmp(pre, full, pl) == 0)
            cut[pl] = true;
        free(pre);
    }
    char *src = guarded_copy(in, n);
    for (size_t cap = 0; cap <= full_len; cap++) {
        char *z = calloc(1, cap + 1);
        char *out = guarded_copy(z, cap);
        free(z);
        struct buf b = buf_make(out, cap);
        run_escape(k, &b, span_make(src, n));
        if (cap == full_len) {
            CHECK_MEM(out, b.len, full, full_len, why);
            CHECK_LONG(b.full, false, why);
        } else {
            CHECK_LONG(b.full, true, why);
            CHECK(b.len <= cap && memcmp(out, full, b.len) == 0 && cut[b.len], why);
        }
        guarded_free(out, cap);
    }
    /* once full, a buffer takes nothing more, even what would fit */
    char one[1];
    struct buf b = buf_make(one, 1);
    b.full = true;
    run_escape(k, &b, span_make(src, n));
    CHECK_LONG(b.len, 0, why);
    guarded_free(src, n);
    free(cut);
    free(full);
}

static void test_full(void)
{
    const char *hostile = "a<b>&\"c'd e/f\r\n\x80\xc3\xa9\xe2\x82\xac\xe2\x82z\\";
    static const enum kind kinds[] = {HTML, URI, URI_SLASH, LOG, JSON};
    static const char *const why[] = {"html: buffer full", "uri: buffer full",
                                      "uri segment: buffer full", "log: buffer full",
                                      "json: buffer full"};
    for (size_t i = 0; i < ARRAY_LEN(kinds); i++) {
        check_full(kinds[i], hostile, strlen(hostile), why[i]);
        check_full(kinds[i], "", 0, why[i]);
        check_full(kinds[i], "\"", 1, why[i]);
    }
}

int main(void)
{
    test_rows();
    unit_gen_begin(); /* every byte, random strings, every buffer capacity */
    test_bytes();
    test_round_trip();
    test_full();
    unit_gen_end();
    return unit_done();
}

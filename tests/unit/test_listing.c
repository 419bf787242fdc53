/* SPDX-License-Identifier: MIT */
/*
 * test_listing.c - the directory listing writer against listing.h, with
 * hostile file names (markup, attribute break-outs, percent and dot tricks,
 * '#', '?', CR/LF, a 255-byte name, invalid UTF-8): in HTML no raw '<' '>'
 * '"' or '\'' of a name appears anywhere (the page has exactly the markup it
 * has for a name "x"), each href is "./" + the percent-encoded name and
 * each link text the HTML-escaped name; the JSON document parses with a
 * strict RFC 8259 parser and gives every name back byte for byte; each
 * entry fits LISTING_ENTRY_MAX for worst-case 255-byte names and the tail
 * LISTING_TAIL_MAX; a deep path's head (quadratic in the depth) sets `full`
 * in a buffer too small for it and leaves a prefix. Every output buffer is
 * exactly its size, against a guard page.
 */
#include "core/date.h"
#include "core/listing.h"
#include "unit.h"

#define NAME_MAX_BYTES 255

struct name {
    const char *p;
    size_t n;
};

static char long_name[NAME_MAX_BYTES];

static struct name hostile[] = {
    {"<script>alert(1)</script>", 0},
    {"\"><svg onload=x>", 0},
    {"' onmouseover='x", 0},
    {"a&b", 0},
    {"&amp;", 0},
    {"%2e%2e", 0},
    {"..", 0},
    {"#x", 0},
    {"?x", 0},
    {"a\nb", 0},
    {"a\r\nSet-Cookie: x=y", 0},
    {"javascript:alert(1)", 0},
    {"a:b", 0},
    {"\\..\\x", 0},
    {"</script><script>x()</script>", 0},
    {"caf\xc3\xa9 \xe2\x82\xac", 0},
    {"\xff\xfe", 0},
    {"\xc0\xaf", 0},
    {"bad\xe2\x82", 0},
    {"\xed\xa0\x80", 0},
    {"tab\there", 0},
    {"\x01\x1f\x7f", 0},
    {"x", 0},
    {long_name, NAME_MAX_BYTES},
};

static size_t name_len(const struct name *nm)
{
    return nm->n ? nm->n : strlen(nm->p);
}

/* A zeroed buffer of exactly cap bytes against a guard page. */
static char *guarded_buf(size_t cap)
{
    char *z = calloc(1, cap + 1);
    char *p = guarded_copy(z, cap);
    free(z);
    return p;
}

static size_t count(const char *p, size_t n, char c)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += p[i] == c;
    return k;
}

static const char *find(const char *p, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(p + i, needle, k) == 0)
            return p + i;
    return NULL;
}

/* Reference escapes, written here from escape.h's words. */
static size_t ref_uri(const char *p, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~')
            out[o++] = (char)c;
        else
            o += (size_t)sprintf(out + o, "%%%02X", c);
    }
    return o;
}

static size_t ref_html(const char *p, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        const char *e = p[i] == '&'    ? "&amp;"
                        : p[i] == '<'  ? "&lt;"
                        : p[i] == '>'  ? "&gt;"
                        : p[i] == '"'  ? "&quot;"
                        : p[i] == '\'' ? "&#39;"
                                       : NULL;
        if (e) {
            memcpy(out + o, e, strlen(e));
            o += strlen(e);
        } else {
            out[o++] = p[i];
        }
    }
    return o;
}

/* One entry into a guarded LISTING_ENTRY_MAX buffer; returns a malloc'd copy. */
static char *entry(enum listing_format f, const char *p, size_t n, bool is_dir, bool meta,
                   uint64_t size, int64_t mtime, bool first, size_t *len, bool *full)
{
    char *name = guarded_copy(p, n);
    char *out = guarded_buf(LISTING_ENTRY_MAX);
    struct buf b = buf_make(out, LISTING_ENTRY_MAX);
    struct listing_entry e = {span_make(name, n), is_dir, meta, size, mtime};
    listing_entry(&b, f, &e, first);
    char *copy = malloc(b.len + 1);
    memcpy(copy, out, b.len);
    *len = b.len;
    *full = b.full;
    guarded_free(out, LISTING_ENTRY_MAX);
    guarded_free(name, n);
    return copy;
}

static void test_html_entries(void)
{
    static char href[NAME_MAX_BYTES * 3 + 2], text[NAME_MAX_BYTES * 6 + 2];
    for (size_t i = 0; i < ARRAY_LEN(hostile); i++) {
        const char *p = hostile[i].p;
        size_t n = name_len(&hostile[i]);
        for (int v = 0; v < 4; v++) {
            bool is_dir = v & 1, meta = v & 2;
            size_t len, xlen;
            bool full, xfull;
            char *got =
                entry(LISTING_HTML, p, n, is_dir, meta, 12345, 784111777, i == 0, &len, &full);
            char *x =
                entry(LISTING_HTML, "x", 1, is_dir, meta, 12345, 784111777, i == 0, &xlen, &xfull);
            CHECK(!full && len > 0 && len < LISTING_ENTRY_MAX, "html entry fits");
            /* the name adds no markup: the same number of each special byte as
             * for the name "x" */
            const char specials[] = "<>\"'";
            for (size_t k = 0; k < 4; k++)
                CHECK_LONG(count(got, len, specials[k]), count(x, xlen, specials[k]),
                           "html: no raw < > \" ' from a name");
            /* href="./<percent-encoded>[/]" */
            const char *h = find(got, len, "href=\"");
            CHECK(h != NULL, "html: an href");
            if (h) {
                h += 6;
                const char *end = memchr(h, '"', len - (size_t)(h - got));
                size_t hn = ref_uri(p, n, href + 2);
                href[0] = '.';
                href[1] = '/';
                hn += 2;
                if (is_dir)
                    href[hn++] = '/';
                CHECK(end != NULL, "html: href closed");
                if (end)
                    CHECK_MEM(h, (size_t)(end - h), href, hn, "html: href is ./ + %-encoded name");
                /* the link text */
                const char *t = end ? find(end, len - (size_t)(end - got), "\">") : NULL;
                const char *te = t ? find(t, len - (size_t)(t - got), "</a>") : NULL;
                size_t tn = ref_html(p, n, text);
                if (is_dir)
                    text[tn++] = '/';
                CHECK(t && te, "html: link text");
                if (t && te)
                    CHECK_MEM(t + 2, (size_t)(te - t - 2), text, tn, "html: text is escaped");
            }
            free(got);
            free(x);
        }
    }
}

/* ---- a strict JSON parser (RFC 8259) that keeps the "name" strings ------ */

struct json {
    const unsigned char *p;
    size_t n, at;
    char names[64][NAME_MAX_BYTES + 1];
    size_t name_n[64];
    size_t nnames;
};

static void ws(struct json *j)
{
    while (j->at < j->n && (j->p[j->at] == ' ' || j->p[j->at] == '\t' || j->p[j->at] == '\n' ||
                            j->p[j->at] == '\r'))
        j->at++;
}

static bool lit(struct json *j, const char *s)
{
    size_t k = strlen(s);
    if (j->n - j->at < k || memcmp(j->p + j->at, s, k) != 0)
        return false;
    j->at += k;
    return true;
}

static int hexv(unsigned char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* A string; its bytes go to out (NULL: discarded). \u00XX decodes to the
 * byte XX, as escape_json() encodes control and invalid bytes. */
static bool string(struct json *j, char *out, size_t *on, size_t cap)
{
    size_t o = 0;
    if (!lit(j, "\""))
        return false;
    while (j->at < j->n) {
        unsigned char c = j->p[j->at];
        if (c == '"') {
            j->at++;
            if (on)
                *on = o;
            return true;
        }
        if (c < 0x20)
            return false;
        if (c == '\\') {
            if (j->n - j->at < 2)
                return false;
            unsigned char e = j->p[j->at + 1];
            const char *simple = strchr("\"\\/bfnrt", e);
            if (e && simple) {
                static const char map[] = "\"\\/\b\f\n\r\t";
                if (out && o < cap)
                    out[o] = map[simple - "\"\\/bfnrt"];
                o++;
                j->at += 2;
            } else if (e == 'u' && j->n - j->at >= 6 && hexv(j->p[j->at + 2]) >= 0 &&
                       hexv(j->p[j->at + 3]) >= 0 && hexv(j->p[j->at + 4]) >= 0 &&
                       hexv(j->p[j->at + 5]) >= 0) {
                if (hexv(j->p[j->at + 2]) || hexv(j->p[j->at + 3]))
                    return false; /* escape_json never writes above \u00FF */
                if (out && o < cap)
                    out[o] = (char)(hexv(j->p[j->at + 4]) * 16 + hexv(j->p[j->at + 5]));
                o++;
                j->at += 6;
            } else {
                return false;
            }
        } else if (c < 0x80) {
            if (out && o < cap)
                out[o] = (char)c;
            o++;
            j->at++;
        } else {
            size_t k = unit_utf8_len(j->p + j->at, j->n - j->at);
            if (k == 0)
                return false; /* RFC 8259 §8.1: JSON text is UTF-8 */
            for (size_t i = 0; i < k; i++, o++)
                if (out && o < cap)
                    out[o] = (char)j->p[j->at + i];
            j->at += k;
        }
    }
    return false;
}

static bool number(struct json *j)
{
    size_t start = j->at;
    if (j->at < j->n && j->p[j->at] == '0') {
        j->at++;
    } else {
        while (j->at < j->n && j->p[j->at] >= '0' && j->p[j->at] <= '9')
            j->at++;
    }
    return j->at > start; /* listing sizes are non-negative integers */
}

/* ws "key" ws ":" ws */
static bool key(struct json *j, const char *k)
{
    char quoted[32];
    snprintf(quoted, sizeof quoted, "\"%s\"", k);
    ws(j);
    if (!lit(j, quoted))
        return false;
    ws(j);
    if (!lit(j, ":"))
        return false;
    ws(j);
    return true;
}

/* {"name":string,"type":"file"|"directory","size":number|null,"mtime":string|null} */
static bool object(struct json *j)
{
    char type[16];
    size_t tn = 0;
    if (j->nnames == 64)
        return false;
    ws(j);
    if (!lit(j, "{") || !key(j, "name") ||
        !string(j, j->names[j->nnames], &j->name_n[j->nnames], NAME_MAX_BYTES + 1))
        return false;
    j->nnames++;
    ws(j);
    if (!lit(j, ",") || !key(j, "type") || !string(j, type, &tn, sizeof type))
        return false;
    if (!((tn == 4 && memcmp(type, "file", 4) == 0) ||
          (tn == 9 && memcmp(type, "directory", 9) == 0)))
        return false;
    ws(j);
    if (!lit(j, ",") || !key(j, "size") || !(lit(j, "null") || number(j)))
        return false;
    ws(j);
    if (!lit(j, ",") || !key(j, "mtime") || !(lit(j, "null") || string(j, NULL, NULL, 0)))
        return false;
    ws(j);
    return lit(j, "}");
}

static bool document(struct json *j)
{
    ws(j);
    if (!lit(j, "["))
        return false;
    ws(j);
    if (!lit(j, "]")) {
        do {
            if (!object(j))
                return false;
            ws(j);
        } while (lit(j, ","));
        if (!lit(j, "]"))
            return false;
    }
    ws(j);
    return j->at == j->n;
}

static void test_json(void)
{
    size_t cap = 4096 + ARRAY_LEN(hostile) * LISTING_ENTRY_MAX + LISTING_TAIL_MAX;
    char *doc = malloc(cap);
    for (int v = 0; v < 4; v++) {
        struct buf b = buf_make(doc, cap);
        listing_begin(&b, LISTING_JSON, SPAN_LIT("dir"));
        for (size_t i = 0; i < ARRAY_LEN(hostile); i++) {
            struct listing_entry e = {span_make(hostile[i].p, name_len(&hostile[i])), v & 1,
                                      (v & 2) != 0, UINT64_MAX - i, (int64_t)i * 86400 * 365};
            if (i == 3)
                e.mtime = DATE_MAX; /* last second of 9999 */
            if (i == 4)
                e.mtime = -1; /* unformattable: null */
            listing_entry(&b, LISTING_JSON, &e, i == 0);
        }
        listing_end(&b, LISTING_JSON, SPAN_LIT("pith/test"));
        CHECK(!b.full, "json document fits");
        struct json *j = calloc(1, sizeof *j);
        j->p = (const unsigned char *)doc;
        j->n = b.len;
        bool ok = document(j);
        if (!ok)
            fprintf(stderr, "json: parse error at byte %zu of %zu\n", j->at, j->n);
        CHECK(ok, "json: the document is valid JSON of the documented shape");
        CHECK_LONG(j->nnames, ARRAY_LEN(hostile), "json: one object per entry");
        for (size_t i = 0; i < j->nnames && i < ARRAY_LEN(hostile); i++)
            CHECK_MEM(j->names[i], j->name_n[i], hostile[i].p, name_len(&hostile[i]),
                      "json: the name round-trips");
        free(j);
    }
    /* an empty directory is "[]" with whitespace */
    struct buf b = buf_make(doc, cap);
    listing_begin(&b, LISTING_JSON, SPAN_LIT(""));
    listing_end(&b, LISTING_JSON, SPAN_LIT("pith/test"));
    struct json *j = calloc(1, sizeof *j);
    j->p = (const unsigned char *)doc;
    j->n = b.len;
    CHECK(document(j) && j->nnames == 0, "json: empty listing is an empty array");
    free(j);
    free(doc);
}

static void test_worst_case(void)
{
    /* 255 bytes of the byte each format expands most, and a few others */
    static const unsigned char fill[] = {'"', '\'', '&', '<', 0x01, 0x7f, 0xff, '%', ' '};
    for (size_t k = 0; k < ARRAY_LEN(fill); k++) {
        char name[NAME_MAX_BYTES];
        memset(name, fill[k], sizeof name);
        for (int v = 0; v < 8; v++) {
            size_t len;
            bool full;
            enum listing_format f = (v & 4) ? LISTING_JSON : LISTING_HTML;
            char *got = entry(f, name, sizeof name, v & 1, (v & 2) != 0, UINT64_MAX, DATE_MAX,
                              false, &len, &full);
            CHECK(!full && len < LISTING_ENTRY_MAX, "255-byte worst-case name fits");
            free(got);
            got = entry(f, name, sizeof name, v & 1, (v & 2) != 0, 0, INT64_MIN, true, &len, &full);
            CHECK(!full && len < LISTING_ENTRY_MAX, "255-byte name, odd mtime, fits");
            free(got);
        }
    }
}

/* listing_begin() into a buffer of exactly cap bytes; returns b.len, or
 * (size_t)-1 when it did not fit (then *copy holds what was written). */
static size_t head_cap(enum listing_format f, const char *path, size_t n, size_t cap, char **copy)
{
    char *p = guarded_copy(path, n);
    char *out = guarded_buf(cap);
    struct buf b = buf_make(out, cap);
    listing_begin(&b, f, span_make(p, n));
    if (copy) {
        *copy = malloc(b.len + 1);
        memcpy(*copy, out, b.len);
        (*copy)[b.len] = 0;
    }
    size_t r = b.full ? (size_t)-1 : b.len;
    guarded_free(out, cap);
    guarded_free(p, n);
    return r;
}

#define HEAD_ROOM (64 * 1024) /* plenty for the paths below */

static size_t head(enum listing_format f, const char *path, size_t n, char **copy)
{
    return head_cap(f, path, n, HEAD_ROOM, copy);
}

static void test_head_tail(void)
{
    /* hostile path segments are escaped like names */
    static const char *const paths[] = {"",
                                        "a",
                                        "a/b/c",
                                        "<script>/\"><svg onload=x>",
                                        "' onmouseover='x/a&b",
                                        "%2e%2e/#x/?x",
                                        "caf\xc3\xa9/\xff"};
    char *plain = NULL;
    head(LISTING_HTML, "x", 1, &plain);
    size_t plain_len = strlen(plain);
    for (size_t i = 0; i < ARRAY_LEN(paths); i++) {
        char *got = NULL;
        size_t len = head(LISTING_HTML, paths[i], strlen(paths[i]), &got);
        CHECK(len != (size_t)-1, "html head written");
        if (len != (size_t)-1) {
            /* every segment adds the same markup as a one-letter segment */
            size_t segs = 1 + count(paths[i], strlen(paths[i]), '/');
            char *ref = NULL;
            char shape[64] = "";
            for (size_t s = 0; s < segs && strlen(paths[i]); s++)
                strcat(shape, s ? "/x" : "x");
            head(LISTING_HTML, shape, strlen(shape), &ref);
            const char specials[] = "<>\"'";
            for (size_t k = 0; k < 4; k++)
                CHECK_LONG(count(got, len, specials[k]), count(ref, strlen(ref), specials[k]),
                           "html head: no raw < > \" ' from the path");
            free(ref);
        }
        free(got);
        len = head(LISTING_JSON, paths[i], strlen(paths[i]), NULL);
        CHECK(len != (size_t)-1 && len <= 2, "json head is '['");
    }
    CHECK(plain_len > 0, "html head written");

    /* a 255-byte segment of the worst byte: 6 + 3 + 6 + 6 bytes per byte */
    char worst[NAME_MAX_BYTES];
    memset(worst, '"', sizeof worst);
    char *w = NULL;
    size_t wlen = head(LISTING_HTML, worst, sizeof worst, &w);
    CHECK(wlen != (size_t)-1 && count(w, wlen, '"') == count(plain, plain_len, '"'),
          "255 x '\"' path: escaped everywhere");
    free(w);
    free(plain);

    /* A deep path: the head grows with the square of the depth, and a buffer
     * too small for it says so with `full` (listing.h: callers check it),
     * holding a prefix of the real head. */
    size_t dn = 1023; /* "a/a/.../a": 512 segments */
    char *deep = malloc(dn);
    for (size_t i = 0; i < dn; i++)
        deep[i] = i % 2 ? '/' : 'a';
    char *whole = NULL, *part = NULL;
    size_t big = head_cap(LISTING_HTML, deep, dn, 4u << 20, &whole);
    CHECK(big != (size_t)-1 && big > 512 * 512, "deep path: the whole head, quadratic");
    if (big != (size_t)-1) {
        size_t links = 0;
        for (const char *q = whole; (q = strstr(q, "<a href=\"/")) != NULL; q++)
            links++;
        CHECK_LONG(links, 1 + 512, "deep path: a breadcrumb link per segment, and the root");
        CHECK_LONG(head_cap(LISTING_HTML, deep, dn, big, NULL), big, "deep path: exact room");
        CHECK_LONG(head_cap(LISTING_HTML, deep, dn, big - 1, &part), (size_t)-1,
                   "deep path: one byte short sets full");
        CHECK(part && strlen(part) < big && memcmp(part, whole, strlen(part)) == 0,
              "deep path: what was written is a prefix of the head");
        free(part);
        part = NULL;
        CHECK_LONG(head_cap(LISTING_HTML, deep, dn, 4096, &part), (size_t)-1,
                   "deep path in 4 KiB: full");
        CHECK(part && memcmp(part, whole, strlen(part)) == 0, "deep path in 4 KiB: a prefix");
        free(part);
    }
    free(whole);
    free(deep);

    /* the tail */
    static const char *const servers[] = {"pith/0.1.0", "<b>\"'&"};
    for (size_t i = 0; i < ARRAY_LEN(servers); i++) {
        for (int f = 0; f < 2; f++) {
            char *out = guarded_buf(LISTING_TAIL_MAX);
            struct buf b = buf_make(out, LISTING_TAIL_MAX);
            listing_end(&b, f ? LISTING_JSON : LISTING_HTML,
                        span_make(servers[i], strlen(servers[i])));
            CHECK(!b.full, "tail fits LISTING_TAIL_MAX");
            if (!f && i == 1)
                CHECK(find(out, b.len, "&lt;b&gt;&quot;&#39;&amp;") != NULL,
                      "server name escaped in the footer");
            guarded_free(out, LISTING_TAIL_MAX);
        }
    }
}

static const struct size_row {
    uint64_t n;
    const char *want;
} size_rows[] = {
    {0, "0 B"},
    {1, "1 B"},
    {1023, "1023 B"},
    {1024, "1.0 KiB"},
    {1536, "1.5 KiB"},
    {10 * 1024, "10.0 KiB"},
    {UINT64_C(1) << 20, "1.0 MiB"},
    {UINT64_C(1) << 30, "1.0 GiB"},
    {UINT64_C(1) << 40, "1.0 TiB"},
    {UINT64_C(1) << 50, "1.0 PiB"},
    {UINT64_C(1) << 60, "1.0 EiB"},
};

/* The breadcrumb has one link per segment and one for the root: the root
 * listing has exactly one, never an empty segment's link. */
static void test_breadcrumb_links(void)
{
    static const struct {
        const char *path;
        size_t links;
    } t[] = {{"", 1}, {"a", 2}, {"a/b", 3}, {"dir with space/x", 3}};
    for (size_t i = 0; i < ARRAY_LEN(t); i++) {
        char *page = NULL;
        size_t n = head(LISTING_HTML, t[i].path, strlen(t[i].path), &page);
        CHECK(n != (size_t)-1 && page, t[i].path);
        size_t links = 0;
        for (const char *q = page; q && (q = strstr(q, "<a href=\"/")) != NULL; q++)
            links++;
        CHECK_LONG(links, t[i].links, t[i].path);
        free(page);
    }
}

static void test_human_size(void)
{
    char out[64];
    for (size_t i = 0; i < ARRAY_LEN(size_rows); i++) {
        struct buf b = buf_make(out, sizeof out);
        listing_human_size(&b, size_rows[i].n);
        CHECK_MEM(out, b.len, size_rows[i].want, strlen(size_rows[i].want), "human size");
    }
    /* anything: digits, an optional ".d", a space, a unit */
    uint64_t v = 1;
    unit_gen_begin();
    for (int i = 0; i < 2000; i++) {
        v = v * 6364136223846793005u + 1442695040888963407u;
        uint64_t n = v >> (v % 64);
        struct buf b = buf_make(out, sizeof out);
        listing_human_size(&b, n);
        out[b.len] = 0;
        char unit[8] = "";
        unsigned long long whole;
        int consumed = 0;
        bool ok = sscanf(out, "%llu%n", &whole, &consumed) == 1;
        const char *rest = out + consumed;
        if (rest[0] == '.')
            rest += 2;
        ok = ok && sscanf(rest, " %7s", unit) == 1 &&
             (!strcmp(unit, "B") || !strcmp(unit, "KiB") || !strcmp(unit, "MiB") ||
              !strcmp(unit, "GiB") || !strcmp(unit, "TiB") || !strcmp(unit, "PiB") ||
              !strcmp(unit, "EiB"));
        ok = ok && (strcmp(unit, "B") || whole == n) && whole < 1024;
        CHECK(ok, "human size shape");
    }
    unit_gen_end();
}

int main(void)
{
    test_breadcrumb_links();
    memset(long_name, '"', sizeof long_name);
    memcpy(long_name, "<img src=x onerror=alert(1)>", 28);
    test_html_entries();
    test_json();
    test_worst_case();
    test_head_tail();
    test_human_size();
    return unit_done();
}

/* SPDX-License-Identifier: MIT */
/*
 * fuzz_listing.c - the directory listing writer (listing.h) on arbitrary
 * names, paths and metadata, in HTML and JSON. It traps when:
 *   - a counting buf (buf_counter) measures a piece (head, entry, tail)
 *     other than what a buf of exactly that room receives, or that buf ends
 *     full; an entry needs more than LISTING_ENTRY_MAX (names up to 255
 *     bytes) or the tail more than LISTING_TAIL_MAX;
 *   - HTML: a name or the path adds a '<', '>', '"' or '\'' to the page (the
 *     page is compared with the same page for names and path made of 'a's),
 *     or a '&' that starts no entity; a row's href does not percent-decode
 *     to "./" name ["/"], its text does not unescape to name ["/"]; the
 *     title, the heading or the breadcrumb (each link's href and text) does
 *     not give the path back; a size or time cell does not say the entry's
 *     size and mtime (human sizes within a tenth of the unit, rounded down);
 *   - JSON: the document is not valid JSON (RFC 8259, parsed here, UTF-8
 *     checked), or is not an array of objects {name, type, size, mtime}
 *     whose name decodes to the name's code points (escape.h's reading of
 *     ill-formed UTF-8), type, size and mtime as listing.c documents.
 * Input: 1 control byte, the path, then entries, each a NUL, a flags byte
 * and the name (names holding '/' or longer than 255 bytes are dropped, as
 * no directory can hold them). Every piece is written into a heap buffer of
 * exactly its room, so a write past one is an ASan report.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/date.h"
#include "core/listing.h"
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
        fprintf(stderr, "fuzz_listing: %s\n", what);
        __builtin_trap();
    }
}

#define MAX_ENTRIES 64
#define PATH_CAP    512

struct doc {
    char *p;
    size_t n;
};

struct listing_in {
    enum listing_format f;
    struct span path, server;
    struct listing_entry e[MAX_ENTRIES];
    size_t n;
};

/* The checks below are not what the fuzzer should steer by (their branches
 * follow the writer's), and their comparison callbacks would cost most of a
 * run: no coverage instrumentation for them. */
#pragma clang attribute push(__attribute__((no_sanitize("coverage"))), apply_to = function)

/* ---- writing --------------------------------------------------------------------- */

static void append(struct doc *d, const char *p, size_t n)
{
    d->p = realloc(d->p, d->n + n + 1);
    memcpy(d->p + d->n, p, n);
    d->n += n;
}

enum piece { HEAD, ENTRY, TAIL };

/* One piece, counted, then written into exactly that room. */
static void piece(struct doc *d, const struct listing_in *in, enum piece k, size_t i)
{
    struct buf count = buf_counter(), b = count;
    for (int pass = 0; pass < 2; pass++) {
        struct buf *t = pass ? &b : &count;
        if (pass)
            b = buf_make(malloc(count.len ? count.len : 1), count.len);
        if (k == HEAD)
            listing_begin(t, in->f, in->path);
        else if (k == ENTRY)
            listing_entry(t, in->f, &in->e[i], i == 0);
        else
            listing_end(t, in->f, in->server);
    }
    require(!count.full && !b.full && b.len == count.len, "counted length differs from written");
    if (k == ENTRY)
        require(b.len <= LISTING_ENTRY_MAX, "an entry longer than LISTING_ENTRY_MAX");
    if (k == TAIL)
        require(b.len <= LISTING_TAIL_MAX, "the tail longer than LISTING_TAIL_MAX");
    append(d, b.p, b.len);
    free(b.p);
}

static struct doc write_doc(const struct listing_in *in)
{
    struct doc d = {NULL, 0};
    piece(&d, in, HEAD, 0);
    for (size_t i = 0; i < in->n; i++)
        piece(&d, in, ENTRY, i);
    piece(&d, in, TAIL, 0);
    /* The whole page through one buf of exactly its size, as a stream. */
    char *one = malloc(d.n ? d.n : 1);
    struct buf b = buf_make(one, d.n);
    listing_begin(&b, in->f, in->path);
    for (size_t i = 0; i < in->n; i++)
        listing_entry(&b, in->f, &in->e[i], i == 0);
    listing_end(&b, in->f, in->server);
    require(!b.full && b.len == d.n && memcmp(one, d.p, d.n) == 0, "one buf differs from pieces");
    free(one);
    return d;
}

/* ---- HTML -------------------------------------------------------------------------- */

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Percent-decodes o[0..n) into out; false on a bad escape. */
static bool pct_decode(const char *o, size_t n, char *out, size_t *len)
{
    *len = 0;
    for (size_t i = 0; i < n; i++) {
        if (o[i] != '%') {
            out[(*len)++] = o[i];
            continue;
        }
        if (n - i < 3 || hexval(o[i + 1]) < 0 || hexval(o[i + 2]) < 0)
            return false;
        out[(*len)++] = (char)(hexval(o[i + 1]) * 16 + hexval(o[i + 2]));
        i += 2;
    }
    return true;
}

static const char *const entities[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};

/* Unescapes HTML text o[0..n) (the five entities only); false on another '&'. */
static bool html_unescape(const char *o, size_t n, char *out, size_t *len)
{
    *len = 0;
    for (size_t i = 0; i < n;) {
        if (o[i] != '&') {
            out[(*len)++] = o[i++];
            continue;
        }
        int e = -1;
        for (int j = 0; j < 5 && e < 0; j++)
            if (n - i >= strlen(entities[j]) &&
                memcmp(o + i, entities[j], strlen(entities[j])) == 0)
                e = j;
        if (e < 0)
            return false;
        out[(*len)++] = "&<>\"'"[e];
        i += strlen(entities[e]);
    }
    return true;
}

/* The text between `from` and the next `to`, starting at *at; advances past
 * `to`. (libc's memmem and memchr keep the checks out of the coverage
 * instrumentation, which would otherwise cost most of the run.) */
static bool between(const struct doc *d, size_t *at, const char *from, const char *to,
                    struct span *out)
{
    size_t fl = strlen(from), tl = strlen(to);
    if (d->n - *at < fl || memcmp(d->p + *at, from, fl) != 0)
        return false;
    size_t s = *at + fl;
    const char *e = memmem(d->p + s, d->n - s, to, tl);
    if (!e)
        return false;
    *out = span_make(d->p + s, (size_t)(e - (d->p + s)));
    *at = (size_t)(e - d->p) + tl;
    return true;
}

static size_t find(const struct doc *d, size_t from, const char *s)
{
    const char *e = from <= d->n ? memmem(d->p + from, d->n - from, s, strlen(s)) : NULL;
    return e ? (size_t)(e - d->p) : SIZE_MAX;
}

static size_t count_byte(const struct doc *d, char c)
{
    size_t k = 0;
    for (const char *p = d->p, *end = d->p + d->n; (p = memchr(p, c, (size_t)(end - p))); p++)
        k++;
    return k;
}

/* text is exactly want[0..wn) followed by `suffix` (0 or 1 bytes). */
static bool equals(const char *t, size_t tn, struct span want, const char *suffix)
{
    size_t sl = strlen(suffix);
    return tn == want.n + sl && memcmp(t, want.p, want.n) == 0 &&
           memcmp(t + want.n, suffix, sl) == 0;
}

static void check_html_text(struct span text, struct span want, const char *suffix,
                            const char *what)
{
    char *u = malloc(text.n + 1);
    size_t un;
    require(html_unescape(text.p, text.n, u, &un) && equals(u, un, want, suffix), what);
    free(u);
}

static void check_href(struct span href, const char *prefix, struct span want, const char *suffix,
                       const char *what)
{
    char *u = malloc(href.n + 1);
    size_t un, pl = strlen(prefix);
    require(href.n >= pl && memcmp(href.p, prefix, pl) == 0, what);
    for (size_t i = pl; i < href.n; i++)
        require(href.p[i] != '"' && href.p[i] != '<' && href.p[i] != '>' && href.p[i] != ' ', what);
    require(pct_decode(href.p + pl, href.n - pl, u, &un) && equals(u, un, want, suffix), what);
    free(u);
}

/* "W[.T] UNIT" for n bytes: exact below 1 KiB, else n / 1024^u rounded down
 * to a tenth (whole units from 100 up), u as large as keeps W below 1024. */
static void check_human(struct span t, uint64_t n)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    char s[64];
    require(t.n < sizeof s, "human size: too long");
    memcpy(s, t.p, t.n);
    s[t.n] = 0;
    unsigned long long whole;
    unsigned tenth = 0;
    int used = 0;
    char unit[8];
    bool has_tenth = strchr(s, '.') != NULL;
    if (has_tenth)
        require(sscanf(s, "%llu.%1u %7s%n", &whole, &tenth, unit, &used) == 3, "human size: form");
    else
        require(sscanf(s, "%llu %7s%n", &whole, unit, &used) == 2, "human size: form");
    require((size_t)used == t.n, "human size: trailing bytes");
    int u = -1;
    for (int i = 0; i < 7; i++)
        if (strcmp(unit, units[i]) == 0)
            u = i;
    require(u >= 0, "human size: unit");
    unsigned __int128 scale = (unsigned __int128)1 << (10 * u), d = whole * 10u + tenth;
    require(u == 0 ? whole == n && !has_tenth : has_tenth == (whole < 100), "human size: digits");
    require(whole < 1024 || u == 6, "human size: a larger unit was due");
    require(u == 0 || whole >= 1, "human size: a smaller unit was due");
    /* shown <= exact < shown + a tenth (+ what the shortcut drops: 1/1024 unit) */
    require(d * scale <= (unsigned __int128)n * 10, "human size: rounded up");
    require((unsigned __int128)n * 10 <
                (d + (has_tenth || u == 0 ? 1 : 10)) * scale + 10 * scale / 1024,
            "human size: more than a tenth below");
}

static void check_row(const struct doc *d, size_t *at, const struct listing_entry *e)
{
    size_t row = find(d, *at, "<tr data-dir=\"");
    require(row != SIZE_MAX, "html: a row is missing");
    *at = row;
    struct span dir = {0}, href = {0}, text = {0}, num = {0}, time = {0};
    require(between(d, at, "<tr data-dir=\"", "\"><td><a href=\"", &dir), "html: row start");
    require(dir.n == 1 && dir.p[0] == (e->is_dir ? '1' : '0'), "html: data-dir");
    require(between(d, at, "", "\">", &href), "html: href");
    check_href(href, "./", e->name, e->is_dir ? "/" : "", "html: href is not ./name");
    require(between(d, at, "", "</a></td>", &text), "html: link text");
    check_html_text(text, e->name, e->is_dir ? "/" : "", "html: link text is not the name");
    require(between(d, at, "<td class=\"num\"", "</td>", &num), "html: size cell");
    if (e->has_meta && !e->is_dir) {
        char want[64];
        int wl = snprintf(want, sizeof want, " data-v=\"%llu\">", (unsigned long long)e->size);
        require(num.n > (size_t)wl && memcmp(num.p, want, (size_t)wl) == 0, "html: size data-v");
        check_human(span_make(num.p + wl, num.n - (size_t)wl), e->size);
    } else {
        require(num.n == 2 && memcmp(num.p, ">-", 2) == 0, "html: size cell without a size");
    }
    require(between(d, at, "<td class=\"time\"", "</td></tr>\n", &time), "html: time cell");
    char iso[DATE_ISO_LEN];
    size_t in = e->has_meta ? date_format_iso(e->mtime, iso) : 0;
    if (in) {
        char want[160];
        int wl = snprintf(want, sizeof want,
                          " data-v=\"%llu\"><time datetime=\"%.*s\">%.10s %.5s</time>",
                          (unsigned long long)e->mtime, (int)in, iso, iso, iso + 11);
        require(time.n == (size_t)wl && memcmp(time.p, want, (size_t)wl) == 0, "html: time cell");
    } else {
        require(time.n == 1 && time.p[0] == '>', "html: time cell without a time");
    }
}

static void check_breadcrumb(const struct doc *d, struct span path)
{
    size_t at = find(d, 0, "<nav aria-label=\"breadcrumb\"><a href=\"/\">/</a>");
    require(at != SIZE_MAX, "html: breadcrumb");
    at += strlen("<nav aria-label=\"breadcrumb\"><a href=\"/\">/</a>");
    size_t start = 0;
    for (size_t i = 0; i <= path.n; i++) {
        if (i < path.n && path.p[i] != '/')
            continue;
        if (i == start)
            continue; /* only the root's empty path: no segment, no link */
        struct span href = {0}, text = {0};
        require(between(d, &at, " <a href=\"", "\">", &href), "html: breadcrumb link");
        check_href(href, "/", span_make(path.p, i), "/", "html: breadcrumb href");
        require(between(d, &at, "", "</a> /", &text), "html: breadcrumb text");
        check_html_text(text, span_make(path.p + start, i - start), "", "html: breadcrumb text");
        start = i + 1;
    }
    require(d->n - at >= 6 && memcmp(d->p + at, "</nav>", 6) == 0, "html: breadcrumb end");
}

/* Each of < > " ' as often as on the page with harmless names, and every
 * '&' an entity. */
static void check_no_markup(const struct doc *d, const struct doc *base)
{
    static const char marks[] = "<>\"'";
    for (int m = 0; m < 4; m++) {
        size_t a = count_byte(d, marks[m]), b = count_byte(base, marks[m]);
        if (a != b) {
            fprintf(stderr, "fuzz_listing: '%c' %zu times, %zu with harmless names\n", marks[m], a,
                    b);
            require(0, "html: a name or the path added markup");
        }
    }
    const char *end = d->p + d->n;
    for (const char *p = d->p; (p = memchr(p, '&', (size_t)(end - p))); p++) {
        bool ok = false;
        for (int j = 0; j < 5; j++)
            ok = ok || ((size_t)(end - p) >= strlen(entities[j]) &&
                        memcmp(p, entities[j], strlen(entities[j])) == 0);
        require(ok, "html: '&' that starts no entity");
    }
}

static void check_html(const struct doc *d, const struct listing_in *in, const struct doc *base)
{
    check_no_markup(d, base);
    struct span t = {NULL, 0};
    size_t at = find(d, 0, "<title>");
    require(at != SIZE_MAX && between(d, &at, "<title>Index of /", "</title>", &t), "html: title");
    check_html_text(t, in->path, in->path.n ? "/" : "", "html: title is not the path");
    at = find(d, 0, "<h1>");
    require(at != SIZE_MAX && between(d, &at, "<h1>Index of /", "</h1>", &t), "html: h1");
    check_html_text(t, in->path, in->path.n ? "/" : "", "html: h1 is not the path");
    check_breadcrumb(d, in->path);
    require((find(d, 0, "<tr class=\"parent\">") != SIZE_MAX) == (in->path.n > 0),
            "html: a parent row exactly below the root");
    at = find(d, 0, "<tbody>");
    for (size_t i = 0; i < in->n; i++)
        check_row(d, &at, &in->e[i]);
    require(find(d, at, "<tr data-dir=") == SIZE_MAX, "html: more rows than entries");
    at = find(d, at, "<footer>");
    require(at != SIZE_MAX && between(d, &at, "<footer>", "</footer>", &t), "html: footer");
    check_html_text(t, in->server, "", "html: footer is not the server");
}

/* ---- JSON (RFC 8259) --------------------------------------------------------------- */

struct jp {
    const unsigned char *p;
    size_t n, i;
};

enum jkind { J_STRING, J_NUMBER, J_NULL, J_OTHER };

struct jval {
    enum jkind kind;
    size_t start, end; /* its text */
    uint32_t *cp;      /* J_STRING: decoded code points (caller's room) */
    size_t ncp, cp_room;
};

static void jws(struct jp *j)
{
    while (j->i < j->n &&
           (j->p[j->i] == ' ' || j->p[j->i] == '\t' || j->p[j->i] == '\n' || j->p[j->i] == '\r'))
        j->i++;
}

static bool jlit(struct jp *j, const char *s)
{
    size_t l = strlen(s);
    if (j->n - j->i < l || memcmp(j->p + j->i, s, l) != 0)
        return false;
    j->i += l;
    return true;
}

static int jhex4(const unsigned char *p)
{
    int v = 0;
    for (int k = 0; k < 4; k++) {
        int h = p[k] >= '0' && p[k] <= '9'   ? p[k] - '0'
                : p[k] >= 'a' && p[k] <= 'f' ? p[k] - 'a' + 10
                : p[k] >= 'A' && p[k] <= 'F' ? p[k] - 'A' + 10
                                             : -1;
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

static void jput(struct jval *v, uint32_t cp)
{
    if (v && v->ncp < v->cp_room)
        v->cp[v->ncp++] = cp;
}

/* string = quotation-mark *char quotation-mark */
static bool jstring(struct jp *j, struct jval *v)
{
    if (!jlit(j, "\""))
        return false;
    for (;;) {
        if (j->i >= j->n)
            return false;
        unsigned char c = j->p[j->i];
        if (c == '"') {
            j->i++;
            return true;
        }
        if (c < 0x20)
            return false;
        if (c != '\\') {
            uint32_t cp;
            size_t len = ref_utf8_seq(j->p + j->i, j->n - j->i, &cp);
            if (len == 0)
                return false; /* §8.1: JSON text is UTF-8 */
            jput(v, cp);
            j->i += len;
            continue;
        }
        if (j->n - j->i < 2)
            return false;
        const char *simple = strchr("\"\\/bfnrt", j->p[j->i + 1]);
        if (simple && j->p[j->i + 1]) {
            static const char map[] = "\"\\/\b\f\n\r\t";
            jput(v, (unsigned char)map[simple - "\"\\/bfnrt"]);
            j->i += 2;
            continue;
        }
        int u;
        if (j->p[j->i + 1] != 'u' || j->n - j->i < 6 || (u = jhex4(j->p + j->i + 2)) < 0)
            return false;
        j->i += 6;
        if (u >= 0xd800 && u <= 0xdbff) { /* a surrogate pair */
            int lo;
            if (j->n - j->i < 6 || j->p[j->i] != '\\' || j->p[j->i + 1] != 'u' ||
                (lo = jhex4(j->p + j->i + 2)) < 0xdc00 || lo > 0xdfff)
                return false;
            j->i += 6;
            u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
        } else if (u >= 0xdc00 && u <= 0xdfff) {
            return false;
        }
        jput(v, (uint32_t)u);
    }
}

static bool jdigits(struct jp *j)
{
    size_t s = j->i;
    while (j->i < j->n && j->p[j->i] >= '0' && j->p[j->i] <= '9')
        j->i++;
    return j->i > s;
}

/* number = [ minus ] int [ frac ] [ exp ] */
static bool jnumber(struct jp *j)
{
    jlit(j, "-");
    if (jlit(j, "0")) {
        /* no leading zeros */
    } else if (j->i >= j->n || j->p[j->i] < '1' || j->p[j->i] > '9' || !jdigits(j)) {
        return false;
    }
    if (jlit(j, ".") && !jdigits(j))
        return false;
    if (j->i < j->n && (j->p[j->i] == 'e' || j->p[j->i] == 'E')) {
        j->i++;
        if (!jlit(j, "+"))
            jlit(j, "-");
        if (!jdigits(j))
            return false;
    }
    return true;
}

static bool jvalue(struct jp *j, struct jval *v, int depth);

static bool jmembers(struct jp *j, int depth, bool object)
{
    jws(j);
    if (jlit(j, object ? "}" : "]"))
        return true;
    for (;;) {
        jws(j);
        if (object) {
            if (!jstring(j, NULL))
                return false;
            jws(j);
            if (!jlit(j, ":"))
                return false;
        }
        if (!jvalue(j, NULL, depth + 1))
            return false;
        jws(j);
        if (jlit(j, object ? "}" : "]"))
            return true;
        if (!jlit(j, ","))
            return false;
    }
}

/* value = false / null / true / object / array / number / string, with the
 * whitespace around it. */
static bool jvalue(struct jp *j, struct jval *v, int depth)
{
    if (depth > 64)
        return false;
    jws(j);
    size_t start = j->i;
    enum jkind kind = J_OTHER;
    bool ok;
    if (j->i >= j->n)
        return false;
    unsigned char c = j->p[j->i];
    if (c == '"') {
        kind = J_STRING;
        ok = jstring(j, v);
    } else if (c == '{' || c == '[') {
        j->i++;
        ok = jmembers(j, depth, c == '{');
    } else if (c == 'n') {
        kind = J_NULL;
        ok = jlit(j, "null");
    } else if (c == 't' || c == 'f') {
        ok = jlit(j, c == 't' ? "true" : "false");
    } else {
        kind = J_NUMBER;
        ok = jnumber(j);
    }
    if (v) {
        v->kind = kind;
        v->start = start;
        v->end = j->i;
    }
    jws(j);
    return ok;
}

/* One listing object: exactly "name", "type", "size", "mtime" in that order. */
static void check_json_entry(struct jp *j, const struct listing_entry *e)
{
    static const char *const keys[] = {"\"name\"", "\"type\"", "\"size\"", "\"mtime\""};
    struct jval v[4];
    uint32_t *cp = malloc((e->name.n + 1) * sizeof *cp);
    jws(j);
    require(jlit(j, "{"), "json: an entry is not an object");
    for (int k = 0; k < 4; k++) {
        jws(j);
        require(jlit(j, keys[k]), "json: keys are not name, type, size, mtime");
        jws(j);
        require(jlit(j, ":"), "json: ':'");
        v[k] = (struct jval){.cp = k == 0 ? cp : NULL, .cp_room = k == 0 ? e->name.n + 1 : 0};
        require(jvalue(j, &v[k], 1), "json: not a value");
        require(jlit(j, k < 3 ? "," : "}"), "json: object syntax");
    }
    uint32_t *want = malloc((e->name.n + 1) * sizeof *want);
    size_t wn = ref_utf8_lenient_decode(e->name.p, e->name.n, want);
    require(v[0].kind == J_STRING && v[0].ncp == wn &&
                memcmp(v[0].cp, want, wn * sizeof *want) == 0,
            "json: name does not decode to the name");
    const char *type = e->is_dir ? "\"directory\"" : "\"file\"";
    require(v[1].end - v[1].start == strlen(type) &&
                memcmp(j->p + v[1].start, type, strlen(type)) == 0,
            "json: type");
    char want_size[32], want_time[32];
    char iso[DATE_ISO_LEN];
    size_t in = e->has_meta ? date_format_iso(e->mtime, iso) : 0;
    if (e->has_meta)
        snprintf(want_size, sizeof want_size, "%llu",
                 (unsigned long long)(e->is_dir ? 0 : e->size));
    else
        strcpy(want_size, "null");
    if (in)
        snprintf(want_time, sizeof want_time, "\"%.*s\"", (int)in, iso);
    else
        strcpy(want_time, "null");
    require(v[2].end - v[2].start == strlen(want_size) &&
                memcmp(j->p + v[2].start, want_size, strlen(want_size)) == 0,
            "json: size");
    require(v[3].end - v[3].start == strlen(want_time) &&
                memcmp(j->p + v[3].start, want_time, strlen(want_time)) == 0,
            "json: mtime");
    free(cp);
    free(want);
}

static void check_json(const struct doc *d, const struct listing_in *in)
{
    struct jp j = {(const unsigned char *)d->p, d->n, 0};
    require(jvalue(&j, NULL, 0) && j.i == d->n, "json: the document is not one JSON value");
    j.i = 0;
    jws(&j);
    require(jlit(&j, "["), "json: not an array");
    for (size_t i = 0; i < in->n; i++) {
        if (i > 0) {
            jws(&j);
            require(jlit(&j, ","), "json: ',' between entries");
        }
        check_json_entry(&j, &in->e[i]);
    }
    jws(&j);
    require(jlit(&j, "]"), "json: more entries than written");
}

/* ---- input ---------------------------------------------------------------------------- */

static const uint64_t sizes[8] = {0, 1, 1023, 1024, 1048575, 102604, UINT64_MAX, (1ull << 60) - 1};
static const int64_t times[8] = {0,         1700000000, -1,       DATE_MAX, DATE_MAX + 1,
                                 INT64_MIN, INT64_MAX,  784111777};

/* The same listing with every byte of every name and path segment made 'a'. */
static struct doc harmless(const struct listing_in *in)
{
    struct listing_in h = *in;
    char *path = malloc(in->path.n + 1), *names = malloc(MAX_ENTRIES * 256);
    for (size_t i = 0; i < in->path.n; i++)
        path[i] = in->path.p[i] == '/' ? '/' : 'a';
    h.path = span_make(path, in->path.n);
    for (size_t i = 0; i < in->n; i++) {
        memset(names + 256 * i, 'a', in->e[i].name.n);
        h.e[i].name = span_make(names + 256 * i, in->e[i].name.n);
    }
    h.server = SPAN_LIT("pith/0.1.0");
    struct doc d = write_doc(&h);
    free(path);
    free(names);
    return d;
}

#pragma clang attribute pop

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    struct listing_in in = {.f = data[0] & 1 ? LISTING_JSON : LISTING_HTML};
    in.server = data[0] & 2 ? SPAN_LIT("pith/<0.1.0> & \"friends\"") : SPAN_LIT("pith/0.1.0");
    const uint8_t *end = data + size, *at = data + 1;
    const uint8_t *nul = memchr(at, 0, (size_t)(end - at));
    const uint8_t *path_end = nul ? nul : end;

    /* The path as listing.h wants it: segments without empty ones. */
    char *path = malloc(PATH_CAP);
    size_t pn = 0;
    for (const uint8_t *s = at; s < path_end && pn < PATH_CAP - 1; s++) {
        if (*s == '/' && (pn == 0 || path[pn - 1] == '/'))
            continue;
        path[pn++] = (char)*s;
    }
    if (pn && path[pn - 1] == '/')
        pn--;
    in.path = span_make(path, pn);

    /* Entries: NUL, flags, name. */
    char *names = malloc(MAX_ENTRIES * 256);
    for (at = path_end; at < end && in.n < MAX_ENTRIES;) {
        at++; /* the NUL */
        if (at >= end)
            break;
        uint8_t flags = *at++;
        const uint8_t *e = memchr(at, 0, (size_t)(end - at));
        size_t n = (size_t)((e ? e : end) - at);
        if (n >= 1 && n <= 255 && !memchr(at, '/', n)) {
            char *name = names + 256 * in.n;
            memcpy(name, at, n);
            in.e[in.n++] = (struct listing_entry){
                .name = span_make(name, n),
                .is_dir = flags & 1,
                .has_meta = !(flags & 2),
                .size = sizes[flags >> 2 & 7] ^ (flags & 0x80 ? n * 7919 : 0),
                .mtime = times[flags >> 5 & 7],
            };
        }
        at += n;
    }

    struct doc d = write_doc(&in);
    if (in.f == LISTING_HTML) {
        struct doc base = harmless(&in);
        check_html(&d, &in, &base);
        free(base.p);
    } else {
        check_json(&d, &in);
    }
    free(d.p);
    free(path);
    free(names);
    return 0;
}

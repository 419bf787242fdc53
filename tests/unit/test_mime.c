/* SPDX-License-Identifier: MIT */
/*
 * test_mime.c - mime_lookup() and the table of mime_list.h against mime.h:
 * the table is sorted in strict byte order with no duplicates, lower-case
 * extensions of at most MIME_EXT_MAX bytes, charset only on textual types;
 * the types a static site needs, case-insensitive lookup, every table entry
 * found again through its own extension (in any case), and the names that
 * must get MIME_DEFAULT (no extension, trailing dot, dotfiles, a dot in a
 * directory only, too long, not in the table). Names lie against a guard
 * page.
 */
#include <ctype.h>

#include "core/mime.h"
#include "unit.h"

static struct span lookup(const char *name, size_t n)
{
    char *p = guarded_copy(name, n);
    struct span t = mime_lookup(span_make(p, n));
    guarded_free(p, n);
    return t;
}

static bool contains(struct span s, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= s.n; i++)
        if (memcmp(s.p + i, needle, k) == 0)
            return true;
    return false;
}

static bool starts(struct span s, const char *prefix)
{
    return s.n >= strlen(prefix) && memcmp(s.p, prefix, strlen(prefix)) == 0;
}

static bool ends(const char *p, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(p + n - k, suffix, k) == 0;
}

/* Textual: text/..., and the XML, JSON, JavaScript, TOML and YAML types
 * ("image/svg+xml" too; "svgz" is gzip, binary). Parameters are ignored. */
static bool textual(struct span ext, struct span type)
{
    if (ext.n == 4 && memcmp(ext.p, "svgz", 4) == 0)
        return false;
    size_t n = 0;
    while (n < type.n && type.p[n] != ';')
        n++;
    return starts(type, "text/") || ends(type.p, n, "/xml") || ends(type.p, n, "+xml") ||
           ends(type.p, n, "/json") || ends(type.p, n, "+json") || ends(type.p, n, "/javascript") ||
           ends(type.p, n, "/toml") || ends(type.p, n, "/yaml");
}

static void test_table(void)
{
    struct span ext, type, prev = {NULL, 0};
    size_t i;
    for (i = 0; mime_entry(i, &ext, &type); i++) {
        CHECK(ext.n >= 1 && ext.n <= MIME_EXT_MAX, "extension length 1..MIME_EXT_MAX");
        bool lower = true;
        for (size_t k = 0; k < ext.n; k++)
            lower =
                lower && !isupper((unsigned char)ext.p[k]) && ext.p[k] != '.' && ext.p[k] != '/';
        CHECK(lower, "extension lower case, no '.' or '/'");
        if (prev.p) {
            size_t m = prev.n < ext.n ? prev.n : ext.n;
            int c = memcmp(prev.p, ext.p, m);
            bool ascending = c < 0 || (c == 0 && prev.n < ext.n);
            if (!ascending)
                fprintf(stderr, "mime_list.h: \"%.*s\" is not before \"%.*s\"\n", (int)prev.n,
                        prev.p, (int)ext.n, ext.p);
            CHECK(ascending, "table sorted in strict byte order (no duplicates)");
        }
        prev = ext;

        CHECK(type.n > 0 && memchr(type.p, '/', type.n) != NULL, "type/subtype");
        bool ctl = false;
        for (size_t k = 0; k < type.n; k++)
            ctl = ctl || (unsigned char)type.p[k] < 0x20 || (unsigned char)type.p[k] >= 0x7f;
        CHECK(!ctl, "type is printable ASCII (it goes into a header)");
        bool charset = contains(type, "charset");
        if (charset)
            CHECK(type.n > 15 && memcmp(type.p + type.n - 15, "; charset=utf-8", 15) == 0,
                  "charset is written \"; charset=utf-8\" at the end");
        if (textual(ext, type) != charset)
            fprintf(stderr, "mime_list.h: %.*s -> %.*s\n", (int)ext.n, ext.p, (int)type.n, type.p);
        CHECK_LONG(charset, textual(ext, type), "charset=utf-8 exactly on textual types");

        /* every entry is found through its own extension, in any case */
        char name[64];
        int n = snprintf(name, sizeof name, "file.%.*s", (int)ext.n, ext.p);
        struct span got = lookup(name, (size_t)n);
        CHECK(got.n == type.n && memcmp(got.p, type.p, type.n) == 0, "entry found");
        for (int k = 5; k < n; k++)
            name[k] = (char)toupper((unsigned char)name[k]);
        got = lookup(name, (size_t)n);
        CHECK(got.n == type.n && memcmp(got.p, type.p, type.n) == 0, "entry found upper-case");
    }
    CHECK(i >= 60, "at least 60 entries");
    CHECK(!mime_entry(i, &ext, &type), "past the end stays false");
    CHECK(!mime_entry((size_t)-1, &ext, &type), "SIZE_MAX is past the end");
}

static const struct row {
    const char *name;
    const char *want;
    const char *why;
} rows[] = {
    {"index.html", "text/html; charset=utf-8", "html"},
    {"style.css", "text/css; charset=utf-8", "css"},
    {"app.js", "text/javascript; charset=utf-8", "js (RFC 9239)"},
    {"mod.mjs", "text/javascript; charset=utf-8", "mjs: module scripts need a JS type"},
    {"data.json", "application/json; charset=utf-8", "json"},
    {"app.wasm", "application/wasm", "wasm (streaming compile needs it)"},
    {"logo.svg", "image/svg+xml; charset=utf-8", "svg"},
    {"a.png", "image/png", "png"},
    {"a.jpg", "image/jpeg", "jpg"},
    {"a.jpeg", "image/jpeg", "jpeg"},
    {"a.webp", "image/webp", "webp"},
    {"a.avif", "image/avif", "avif"},
    {"a.gif", "image/gif", "gif"},
    {"favicon.ico", "image/vnd.microsoft.icon", "ico"},
    {"f.woff", "font/woff", "woff"},
    {"f.woff2", "font/woff2", "woff2"},
    {"f.ttf", "font/ttf", "ttf"},
    {"f.otf", "font/otf", "otf"},
    {"v.mp4", "video/mp4", "mp4"},
    {"v.webm", "video/webm", "webm"},
    {"a.mp3", "audio/mpeg", "mp3"},
    {"a.ogg", "audio/ogg", "ogg"},
    {"doc.pdf", "application/pdf", "pdf"},
    {"readme.txt", "text/plain; charset=utf-8", "txt"},
    {"feed.xml", "application/xml; charset=utf-8", "xml"},
    {"README.md", "text/markdown; charset=utf-8", "md"},
    {"t.csv", "text/csv; charset=utf-8", "csv"},
    {"a.zip", "application/zip", "zip"},
    {"a.tar.gz", "application/gzip", "gz: the last extension counts"},
    {"a.tar", "application/x-tar", "tar"},
    {"app.js.map", "application/json; charset=utf-8", "source map"},
    {"site.webmanifest", "application/manifest+json; charset=utf-8", "webmanifest"},

    /* case-insensitive */
    {"A.PNG", "image/png", "upper-case extension"},
    {"a.Html", "text/html; charset=utf-8", "mixed case"},
    {"A.WEBMANIFEST", "application/manifest+json; charset=utf-8", "long, upper case"},

    /* paths: only the last segment counts */
    {"dir/a.css", "text/css; charset=utf-8", "path"},
    {"/abs/dir.x/a.css", "text/css; charset=utf-8", "dotted directory, dotted file"},
    {".html", "text/html; charset=utf-8", "a name that is only '.' + extension"},

    /* MIME_DEFAULT */
    {"", MIME_DEFAULT, "empty name"},
    {"Makefile", MIME_DEFAULT, "no extension"},
    {"a.", MIME_DEFAULT, "trailing dot"},
    {".", MIME_DEFAULT, "a lone dot"},
    {"..", MIME_DEFAULT, "two dots"},
    {".bashrc", MIME_DEFAULT, "dotfile: 'bashrc' is not a type"},
    {"a.b/c", MIME_DEFAULT, "a dot in a directory name only"},
    {"a.html/", MIME_DEFAULT, "trailing slash: empty last segment"},
    {"a.b/.c/d", MIME_DEFAULT, "dots only in directories"},
    {"a.unknownext", MIME_DEFAULT, "not in the table"},
    {"a.htm l", MIME_DEFAULT, "space inside the extension"},
    {"a.html ", MIME_DEFAULT, "trailing space"},
    {"a.js~", MIME_DEFAULT, "editor backup"},
    {"a.abcdefghijklmnopq", MIME_DEFAULT, "17-byte extension (> MIME_EXT_MAX)"},
    {"a.htmlhtmlhtmlhtmlhtml", MIME_DEFAULT, "long extension starting like html"},
    {"a.h", "text/plain; charset=utf-8", "one-letter extension in the table"},
    {"a.ht", MIME_DEFAULT, "prefix of an extension"},
    {"a.htmlx", MIME_DEFAULT, "extension with a suffix"},
    {"a.webmanifesta", MIME_DEFAULT, "the longest entry plus one"},
    {"a.\xc3\xa9", MIME_DEFAULT, "non-ASCII extension"},
    {"a.HTM\xcc", MIME_DEFAULT, "non-ASCII byte after a prefix"},
};

static void test_rows(void)
{
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        const struct row *r = &rows[i];
        CHECK_SPAN(lookup(r->name, strlen(r->name)), r->want, r->why);
    }
    /* 16 bytes is the limit: a 16-byte extension is looked up (and not
     * found), a 17-byte one is not even looked up; both are the default. */
    CHECK_SPAN(lookup("a.abcdefghijklmnop", 18), MIME_DEFAULT, "16-byte extension");
    /* NUL is a byte: "a.png\0" has the extension "png\0" */
    CHECK_SPAN(lookup("a.png\0", 6), MIME_DEFAULT, "NUL after the extension");
    CHECK_SPAN(lookup("a\0.png", 6), "image/png", "NUL before the dot");
}

int main(void)
{
    unit_gen_begin(); /* properties of every entry of the table */
    test_table();
    unit_gen_end();
    test_rows();
    return unit_done();
}

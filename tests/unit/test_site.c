/* SPDX-License-Identifier: MIT */
/*
 * test_site.c - src/core/site.c: the --header, --error-page and --fallback
 * parsers' verdicts, which fields go on which response, and the fallback
 * and clean-URL decisions, row by row.
 */
#include "core/respond.h"
#include "core/site.h"
#include "unit.h"

#include <string.h>

static struct span S(const char *s) {
    return span_make(s, strlen(s));
}

static void
test_header_parse(void)
{
    static const struct {
        const char *spec;
        bool ok;
        const char *why;
    } rows[] = {
        {"X-Frame-Options: DENY", true, "a plain field"},
        {"*.js=X-A: b", true, "a scoped field"},
        {"X-A:", true, "an empty value is a value"},
        {"X-A: a=b: c", true, "'=' and ':' after the name are the value's"},
        {"X A: b", false, "a space in the name"},
        {"X-A: b\r\nY: c", false, "CR LF in the value"},
        {"X-A: b\x7f", false, "DEL in the value"},
        {"X-A: caf\xc3\xa9", false, "non-ASCII in the value"},
        {"content-length: 1", false, "a framing field, any case"},
        {"Vary: x", false, "Vary belongs to precompressed variants"},
        {"=X-A: b", false, "an empty glob"},
        {"[=X-A: b", false, "an invalid glob"},
        {"X-A b", false, "no colon"},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        struct site s;
        memset(&s, 0, sizeof s);
        CHECK_LONG(site_add_header(&s, S(rows[i].spec)) == NULL, rows[i].ok, rows[i].why);
    }
    struct site s;
    memset(&s, 0, sizeof s);
    CHECK(site_add_header(&s, S("X-A:   spaced value \t")) == NULL, "trimmed");
    CHECK_MEM(s.header[0].value.p, s.header[0].value.n, "spaced value", 12, "OWS trimmed");
}

/* The fields site_fields gives, in their HTTP/1 form, into out. */
static size_t fields_text(const struct site *s, int status, enum site_method m, struct span name,
                          char *out, size_t cap)
{
    struct response_field f[SITE_FIELDS_MAX];
    unsigned n = site_fields(s, status, m, name, f);
    struct buf b = buf_make(out, cap);
    for (unsigned i = 0; i < n; i++)
        respond_field_span(&b, f[i].name->h1, f[i].value);
    return b.len;
}

static void test_fields(void)
{
    struct site s;
    memset(&s, 0, sizeof s);
    site_add_header(&s, S("X-All: 1"));
    site_add_header(&s, S("*.js=X-Js: 2"));
    char out[4096];
    size_t n = fields_text(&s, 200, SITE_GET_HEAD, S("app.js"), out, sizeof out);
    CHECK_MEM(out, n, "X-All: 1\r\nX-Js: 2\r\n", 19, "both on a 200 of app.js");
    n = fields_text(&s, 304, SITE_GET_HEAD, S("a.css"), out, sizeof out);
    CHECK_MEM(out, n, "X-All: 1\r\n", 10, "only the unscoped one on a.css");
    n = fields_text(&s, 404, SITE_GET_HEAD, S("app.js"), out, sizeof out);
    CHECK_LONG((long)n, 0, "none on an error");
    s.cors = true;
    n = fields_text(&s, 404, SITE_GET_HEAD, S(""), out, sizeof out);
    CHECK(n > 30 && memcmp(out, "Access-Control-Allow-Origin: *\r\n", 32) == 0,
          "CORS on an error to GET");
    n = fields_text(&s, 405, SITE_OTHER, S(""), out, sizeof out);
    CHECK_LONG((long)n, 0, "no CORS for other methods");
    n = fields_text(&s, 204, SITE_OPTIONS, S(""), out, sizeof out);
    CHECK(n > 100 && memcmp(out, "Access-Control-Allow-Origin: *\r\n", 32) == 0,
          "the preflight's fields on OPTIONS");
    struct response_field f[SITE_FIELDS_MAX];
    site_fields(&s, 200, SITE_GET_HEAD, S("app.js"), f);
    CHECK_MEM(f[0].name->lower.p, f[0].name->lower.n, "access-control-allow-origin", 27,
              "pith's own names have their lowercase form");
    CHECK_LONG((long)f[2].name->lower.n, 0, "an operator's name has none (the library's copy)");
    CHECK(site_check(&s) == NULL, "no conflict");
    site_add_header(&s, S("access-control-max-age: 1"));
    CHECK(site_check(&s) != NULL, "--cors and an Access-Control-* --header");
}

static void test_paths(void)
{
    struct site s;
    memset(&s, 0, sizeof s);
    CHECK(site_set_fallback(&s, S("/a/./b/../index.html")) == NULL, "normalized");
    CHECK_MEM(s.fallback, strlen(s.fallback), "a/index.html", 12, "the normalized path");
    CHECK(site_set_fallback(&s, S("/.env")) != NULL, "a dotfile");
    CHECK(!s.has_fallback, "a refused fallback is none");
    CHECK(site_set_fallback(&s, S("/")) != NULL, "the root");
    CHECK(site_set_fallback(&s, S("/../x")) != NULL, "climbing");
    CHECK(site_add_page(&s, S("404=/404.html")) == NULL, "a page");
    CHECK(site_add_page(&s, S("404=/other.html")) != NULL, "twice");
    CHECK(site_add_page(&s, S("416=/x.html")) != NULL, "416 has no page");
    CHECK(site_add_page(&s, S("0404=/x.html")) != NULL, "0404 is 404: twice");
    CHECK(site_page_for(&s, 404) != NULL && site_page_for(&s, 403) == NULL, "lookup");
}

static void test_decisions(void)
{
    struct site s;
    memset(&s, 0, sizeof s);
    site_set_fallback(&s, S("/index.html"));
    CHECK(site_fallback_applies(&s, SITE_GET_HEAD, S("app/route")), "a route");
    CHECK(!site_fallback_applies(&s, SITE_GET_HEAD, S("app/x.js")), "an extension");
    CHECK(!site_fallback_applies(&s, SITE_GET_HEAD, S(".well-known/x")), "a dot-segment");
    CHECK(!site_fallback_applies(&s, SITE_OTHER, S("app/route")), "not GET/HEAD");
    char out[64];
    CHECK_LONG((long)site_clean_candidate(&s, S("about"), out, sizeof out), 0, "clean URLs off");
    s.clean_urls = true;
    CHECK_LONG((long)site_clean_candidate(&s, S("d/about"), out, sizeof out), 12, "d/about.html");
    CHECK_MEM(out, 12, "d/about.html", 12, "the candidate");
    CHECK_LONG((long)site_clean_candidate(&s, S("a.txt"), out, sizeof out), 0, "has a dot");
    CHECK_LONG((long)site_clean_redirect(&s, S("d/about.html")), 7, "to d/about");
    CHECK_LONG((long)site_clean_redirect(&s, S("v1.2.html")), 0, "v1.2 would have a dot");
    CHECK_LONG((long)site_clean_redirect(&s, S(".html")), 0, "nothing before .html");
}

int main(void)
{
    test_header_parse();
    test_fields();
    test_paths();
    test_decisions();
    return unit_done();
}

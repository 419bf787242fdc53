/* SPDX-License-Identifier: MIT */
/*
 * site.c - see site.h. Everything here is decided once per response from
 * values checked at start, so nothing a request carries reaches a field
 * (the file name only selects which configured fields apply).
 */
#include "site.h"

#include "bytes.h"
#include "glob.h"
#include "target.h"

/* RFC 9110 §5.6.2 tchar. */
static bool is_tchar(char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || ascii_is_digit(c))
        return true;
    return mem_find("!#$%&'*+-.^_`|~", 15, c) < 15;
}

/* Fields pith writes itself (framing, validators, type, caching, the
 * redirect and method answers, the Server field) or that belong to the
 * connection (RFC 9110 §7.6.1): a --header copy would send two conflicting
 * values, or hop-by-hop semantics a static file cannot honour. Content-
 * Encoding and Vary are another feature's (precompressed variants). */
static const char *const owned[] = {
    "Content-Length",
    "Transfer-Encoding",
    "Connection",
    "Keep-Alive",
    "Upgrade",
    "TE",
    "Trailer",
    "Proxy-Connection",
    "Date",
    "Server",
    "Content-Type",
    "Content-Range",
    "Content-Encoding",
    "Accept-Ranges",
    "ETag",
    "Last-Modified",
    "Cache-Control",
    "Location",
    "Allow",
    "Vary",
};

static bool owned_name(struct span name)
{
    for (size_t i = 0; i < ARRAY_LEN(owned); i++)
        if (span_eq_nocase_cstr(name, owned[i]))
            return true;
    return false;
}

static bool value_ok(struct span v)
{
    for (size_t i = 0; i < v.n; i++) {
        unsigned char c = (unsigned char)v.p[i];
        if (!(c == ' ' || c == '\t' || (c >= 0x21 && c <= 0x7e)))
            return false;
    }
    return true;
}

site_error site_add_header(struct site *s, struct span spec)
{
    size_t colon = mem_find(spec.p, spec.n, ':');
    if (colon == spec.n)
        return "expected 'NAME: VALUE' or 'GLOB=NAME: VALUE'";
    size_t eq = mem_find(spec.p, colon, '=');
    struct site_header h = {0};
    size_t name_at = 0;
    if (eq < colon) {
        h.glob = span_make(spec.p, eq);
        if (!h.glob.n || !glob_valid(h.glob))
            return "the pattern before '=' is not a valid glob";
        name_at = eq + 1;
    }
    struct span name = span_make(spec.p + name_at, colon - name_at);
    if (!name.n)
        return "the field name is empty";
    for (size_t i = 0; i < name.n; i++)
        if (!is_tchar(name.p[i]))
            return "the field name is not a token (RFC 9110 5.6.2)";
    if (owned_name(name))
        return "pith writes this field itself (see pith(1), --header)";
    h.name.h1 = name; /* no lowercase form: HTTP/2's and HTTP/3's libraries make one */
    struct span raw = span_make(spec.p + colon + 1, spec.n - colon - 1);
    if (!value_ok(raw))
        return "the value may hold only visible ASCII, spaces and tabs (no CR, LF, NUL)";
    h.value = span_trim_ows(raw);
    size_t bytes = name.n + 2 + h.value.n + 2;
    if (s->nheaders == SITE_HEADERS_MAX)
        return "more than 16 --header fields";
    if (s->header_bytes + bytes > SITE_FIELD_BYTES_MAX)
        return "the --header fields add up to more than 2048 bytes";
    s->header[s->nheaders++] = h;
    s->header_bytes += bytes;
    return NULL;
}

/* A path as a request would name it: absolute, normalized, no dotfile,
 * not the root, no trailing slash. */
static site_error normalize_path(struct span path, char *out)
{
    if (!path.n || path.p[0] != '/')
        return "the path must start with '/'";
    unsigned flags = 0;
    long n = target_normalize(path, out, SITE_PATH_MAX - 1, &flags);
    if (n == -403)
        return "the path names a dotfile, which pith never serves";
    if (n < 0)
        return "the path is not a valid path beneath the root";
    if (n == 0 || (flags & TARGET_TRAILING_SLASH))
        return "the path must name a file, not a directory";
    out[n] = '\0';
    return NULL;
}

site_error site_set_fallback(struct site *s, struct span path)
{
    site_error e = normalize_path(path, s->fallback);
    s->has_fallback = e == NULL;
    return e;
}

static bool page_status_ok(uint64_t st)
{
    return st == 403 || st == 404 || st == 405 || st == 500 || st == 503;
}

site_error site_add_page(struct site *s, struct span spec)
{
    size_t eq = mem_find(spec.p, spec.n, '=');
    uint64_t st;
    if (eq == spec.n || !u64_parse(span_make(spec.p, eq), &st))
        return "expected 'CODE=/path', e.g. 404=/404.html";
    if (!page_status_ok(st))
        return "pages can be given for 403, 404, 405, 500 and 503 only";
    if (s->npages == SITE_PAGES_MAX)
        return "more than 8 --error-page options";
    struct site_page *p = &s->page[s->npages];
    for (unsigned i = 0; i < s->npages; i++)
        if (s->page[i].status == (int)st)
            return "a page for this status is given twice";
    site_error e = normalize_path(span_make(spec.p + eq + 1, spec.n - eq - 1), p->path);
    if (e)
        return e;
    p->status = (int)st;
    s->npages++;
    return NULL;
}

site_error site_check(const struct site *s)
{
    for (unsigned i = 0; s->cors && i < s->nheaders; i++) {
        struct span n = s->header[i].name.h1;
        if (n.n >= 15 && span_eq_nocase_cstr(span_make(n.p, 15), "Access-Control-"))
            return "--cors writes the Access-Control-* fields itself";
    }
    return NULL;
}

const char *site_page_for(const struct site *s, int status)
{
    for (unsigned i = 0; i < s->npages; i++)
        if (s->page[i].status == status)
            return s->page[i].path;
    return NULL;
}

/* The request fields pith acts on, which a cross-origin script may send
 * after a preflight (Range and the conditionals; the CORS-safelisted ones
 * need no mention). A fixed list: nothing from the request is echoed. */
#define CORS_ALLOW_HEADERS                                                                         \
    "Range, If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since, If-Range"
/* Response fields beyond the CORS-safelisted ones a script may read. */
#define CORS_EXPOSE_HEADERS "Content-Range, Accept-Ranges, ETag, Content-Length"

unsigned site_fields(const struct site *s, int status, enum site_method m, struct span name,
                     struct response_field *out)
{
    unsigned n = 0;
#define PUT(id, v) (out[n++] = (struct response_field){FIELD(id), SPAN_LIT(v)})
    if (s->cors && m == SITE_GET_HEAD) {
        PUT(ACAO, "*");
        PUT(ACEH, CORS_EXPOSE_HEADERS);
    } else if (s->cors && m == SITE_OPTIONS) {
        /* Fetch §3.2.3 (CORS-preflight response): "*" is valid for
         * requests without credentials, the only kind a static site
         * needs; Max-Age spares a preflight per request (browsers cap
         * it: Chromium at 2 hours). Same answer for every origin and
         * every requested header, so no Vary. */
        PUT(ACAO, "*");
        PUT(ACAM, "GET, HEAD, OPTIONS");
        PUT(ACAH, CORS_ALLOW_HEADERS);
        PUT(ACMA, "7200");
    }
#undef PUT
    if (status < 200 || status >= 400)
        return n;
    for (unsigned i = 0; i < s->nheaders; i++) {
        const struct site_header *h = &s->header[i];
        if (!h->glob.n || (name.n && glob_match(h->glob, name)))
            out[n++] = (struct response_field){&h->name, h->value};
    }
    return n;
}

static struct span last_segment(struct span path)
{
    size_t i = path.n;
    while (i > 0 && path.p[i - 1] != '/')
        i--;
    return span_make(path.p + i, path.n - i);
}

bool site_fallback_applies(const struct site *s, enum site_method m, struct span path)
{
    if (!s->has_fallback || m != SITE_GET_HEAD || !path.n)
        return false;
    for (size_t i = 0; i < path.n; i++)
        if (path.p[i] == '.' && (i == 0 || path.p[i - 1] == '/'))
            return false; /* a dotfile or .well-known: never replaced */
    struct span last = last_segment(path);
    return mem_find(last.p, last.n, '.') == last.n;
}

size_t site_clean_candidate(const struct site *s, struct span path, char *out, size_t cap)
{
    struct span last = last_segment(path);
    if (!s->clean_urls || !last.n || mem_find(last.p, last.n, '.') < last.n || path.n + 6 > cap)
        return 0;
    mem_copy(out, path.p, path.n);
    mem_copy(out + path.n, ".html", 6);
    return path.n + 5;
}

size_t site_clean_redirect(const struct site *s, struct span path)
{
    struct span last = last_segment(path);
    if (!s->clean_urls || last.n <= 5 || !mem_eq(last.p + last.n - 5, ".html", 5))
        return 0;
    if (mem_find(last.p, last.n - 5, '.') < last.n - 5)
        return 0; /* "a.b.html": "/a.b" would not be served clean */
    return path.n - 5;
}

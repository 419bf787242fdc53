/* SPDX-License-Identifier: MIT */
/*
 * site.h - the site options (--fallback, --clean-urls, --header, --cors,
 * --no-server-header, --error-page) as validated data, and the pure
 * decisions made from them for one response: which extra fields it gets,
 * whether a missing path falls back to the single-page app's file, which
 * name a clean URL tries, where a ".html" URL redirects. The parsers run
 * once at start on the command line's values and refuse anything that
 * could not be sent as it is (docs/DESIGN.md "Site features").
 */
#ifndef PITH_SITE_H
#define PITH_SITE_H

#include "core.h"
#include "response.h"

#define SITE_HEADERS_MAX     16
#define SITE_PAGES_MAX       8
#define SITE_PATH_MAX        256  /* a --fallback or --error-page path, normalized */
#define SITE_FIELD_BYTES_MAX 2048 /* all --header fields together, as sent */

struct site_header {
    struct span glob;       /* empty: every response; else the file name's pattern */
    struct field_name name; /* a token, not one pith writes itself (no lowercase form) */
    struct span value;      /* visible ASCII, SP, HTAB; no leading or trailing blank */
};

struct site_page {
    int status;
    char path[SITE_PATH_MAX]; /* normalized, relative, NUL-terminated */
};

struct site {
    bool has_fallback;
    char fallback[SITE_PATH_MAX]; /* normalized, relative, NUL-terminated */
    bool clean_urls;
    bool cors;
    bool no_server_header;
    struct site_header header[SITE_HEADERS_MAX];
    unsigned nheaders;
    size_t header_bytes; /* their encoded size, bounded by SITE_FIELD_BYTES_MAX */
    struct site_page page[SITE_PAGES_MAX];
    unsigned npages;
};

/* Why a value was refused (a constant sentence), or NULL when accepted. */
typedef const char *site_error;

/* "NAME: VALUE" or "GLOB=NAME: VALUE" (the glob may hold neither '=' nor
 * ':'), appended to s->header. The value's spans point into spec, which
 * must outlive s. */
site_error site_add_header(struct site *s, struct span spec);

/* "CODE=/path" for a status pith may answer with a page (403, 404, 405,
 * 500, 503); the path is normalized as a request's would be, and may name
 * neither a dotfile nor the root. */
site_error site_add_page(struct site *s, struct span spec);

/* "/path" for --fallback, normalized the same way. */
site_error site_set_fallback(struct site *s, struct span path);

/* Checks the options together (after all are given): --cors and an
 * Access-Control-* --header would send the field twice. */
site_error site_check(const struct site *s);

/* The page for status, or NULL. */
const char *site_page_for(const struct site *s, int status);

/* The method classes the decisions below need. */
enum site_method {
    SITE_GET_HEAD,
    SITE_OPTIONS,
    SITE_OTHER, /* also: a request rejected before its method was known */
};

/* The extra fields of a response, in order, into out (room for
 * SITE_FIELDS_MAX; the values point into s or are constants); returns
 * their count: the --header fields on 2xx and 3xx responses (304 included,
 * errors not: nginx's add_header without "always") whose glob matches
 * name (the served file's base name; empty: only unscoped ones), and with
 * --cors, Access-Control-Allow-Origin and -Expose-Headers on every answer
 * to GET and HEAD, and the preflight's fields on an OPTIONS answer. */
#define SITE_FIELDS_MAX (SITE_HEADERS_MAX + 4)
unsigned site_fields(const struct site *s, int status, enum site_method m, struct span name,
                     struct response_field *out);

/* Whether a GET/HEAD of the normalized path (no file there) is answered
 * with the fallback: only when no segment starts with '.' and the last has
 * no '.' at all (no extension: "/app/route", never "/app.js"). */
bool site_fallback_applies(const struct site *s, enum site_method m, struct span path);

/* --clean-urls: when path's last segment has no '.', writes "path.html"
 * into out (cap bytes, NUL-terminated) and returns its length; else 0. */
size_t site_clean_candidate(const struct site *s, struct span path, char *out, size_t cap);

/* --clean-urls: the length of path without its ".html" when it should be
 * redirected there (the last segment is "NAME.html", NAME not empty), else
 * 0. */
size_t site_clean_redirect(const struct site *s, struct span path);

#endif

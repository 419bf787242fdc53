/* SPDX-License-Identifier: MIT */
/*
 * fuzz_site.c - the --header, --error-page and --fallback parsers
 * (src/core/site.c) on arbitrary values, and what an accepted value turns
 * into on the wire. The input is split at NUL bytes into up to eight
 * values (argv cannot carry a NUL); the first byte of each picks the
 * option. Whatever is accepted, the extra fields site_fields() writes must
 * be lines "Name: value\r\n" whose name is a token and whose value holds
 * no CR, LF, NUL or byte outside visible ASCII, SP and HTAB; a page or
 * fallback path must be relative, NUL-terminated, without an empty, "."
 * or ".." segment or a segment starting with '.' (but a first
 * ".well-known"). Values are copied into
 * buffers of exactly their length, so a read past one is an ASan report.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/respond.h"
#include "core/site.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_site: %s\n", what);
        __builtin_trap();
    }
}

static int tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

static void check_fields(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t start = i;
        while (i < n && tchar((unsigned char)p[i]))
            i++;
        require(i > start && i + 2 <= n && p[i] == ':' && p[i + 1] == ' ', "a field's name");
        for (i += 2; i < n && p[i] != '\r'; i++) {
            unsigned char c = (unsigned char)p[i];
            require(c == ' ' || c == '\t' || (c >= 0x21 && c <= 0x7e), "a byte in a value");
        }
        require(i + 1 < n && p[i + 1] == '\n', "a field's end");
        i += 2;
    }
}

static void check_path(const char *path)
{
    size_t n = strlen(path);
    require(n > 0 && n < SITE_PATH_MAX && path[0] != '/' && path[n - 1] != '/', "a path's ends");
    for (const char *seg = path; seg;) {
        /* ".well-known" first is served like any name (the dotfile rule). */
        int well_known = seg == path && strncmp(seg, ".well-known", 11) == 0 &&
                         (seg[11] == '/' || seg[11] == '\0');
        require((seg[0] != '.' || well_known) && seg[0] != '/' && seg[0] != '\0',
                "a path's segment");
        seg = strchr(seg, '/');
        seg = seg ? seg + 1 : NULL;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct site s;
    memset(&s, 0, sizeof s);
    char *vals[8];
    unsigned nv = 0;
    size_t at = 0;
    while (at < size && nv < 8) {
        const uint8_t *end = memchr(data + at, 0, size - at);
        size_t n = end ? (size_t)(end - (data + at)) : size - at;
        if (n > 0) {
            char *v = malloc(n);
            memcpy(v, data + at, n);
            vals[nv++] = v;
            struct span spec = {v + 1, n - 1};
            switch (v[0] % 3) {
            case 0: (void)site_add_header(&s, spec); break;
            case 1: (void)site_add_page(&s, spec); break;
            default: (void)site_set_fallback(&s, spec); break;
            }
        }
        at += n + 1;
    }
    (void)site_check(&s);
    char out[SITE_FIELD_BYTES_MAX + 1024];
    static const int statuses[] = {200, 206, 301, 304, 404, 405};
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
        for (int m = SITE_GET_HEAD; m <= SITE_OTHER; m++) {
            struct response_field f[SITE_FIELDS_MAX];
            unsigned nf =
                site_fields(&s, statuses[i], (enum site_method)m, (struct span){"app.js", 6}, f);
            require(nf <= SITE_FIELDS_MAX, "the fields fit their bound");
            struct buf b = {out, 0, sizeof out, false};
            for (unsigned k = 0; k < nf; k++)
                respond_field_span(&b, f[k].name->h1, f[k].value);
            require(!b.full, "the fields fit their bound");
            check_fields(out, b.len);
        }
    }
    for (unsigned i = 0; i < s.npages; i++)
        check_path(s.page[i].path);
    if (s.has_fallback)
        check_path(s.fallback);
    for (unsigned i = 0; i < nv; i++)
        free(vals[i]);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * mime.c - binary search over the sorted X-macro list in mime_list.h. The
 * extension is folded to lower case into a small stack buffer first, so the
 * table needs one entry per extension whatever the case on disk.
 */
#include "mime.h"

#include "bytes.h"

struct mime_entry {
    const char *ext;
    const char *type;
};

static const struct mime_entry table[] = {
#ifdef PITH_ROUTER /* the router profile: the MIME_R entries only */
#define MIME(ext, type)
#else
#define MIME(ext, type) {ext, type},
#endif
#define MIME_R(ext, type) {ext, type},
#include "mime_list.h"
#undef MIME
#undef MIME_R
};

/* Byte-order compare of a[0..n) with the NUL-terminated b. */
static int compare(const char *a, size_t n, const char *b)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (y == 0 || x != y)
            return y == 0 ? 1 : (x < y ? -1 : 1);
    }
    return b[n] == 0 ? 0 : -1;
}

static struct span span_of(const char *s)
{
    return span_make(s, cstr_len(s));
}

struct span mime_lookup(struct span name)
{
    size_t dot = name.n;
    for (size_t i = name.n; i > 0; i--) {
        char c = name.p[i - 1];
        if (c == '/')
            break;
        if (c == '.') {
            dot = i - 1;
            break;
        }
    }
    size_t n = name.n - dot;
    if (n < 2 || n - 1 > MIME_EXT_MAX)
        return SPAN_LIT(MIME_DEFAULT);
    char ext[MIME_EXT_MAX];
    for (size_t i = 1; i < n; i++)
        ext[i - 1] = ascii_lower(name.p[dot + i]);
    size_t lo = 0, hi = ARRAY_LEN(table);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = compare(ext, n - 1, table[mid].ext);
        if (c == 0)
            return span_of(table[mid].type);
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return SPAN_LIT(MIME_DEFAULT);
}

bool mime_entry(size_t i, struct span *ext, struct span *type)
{
    if (i >= ARRAY_LEN(table))
        return false;
    *ext = span_of(table[i].ext);
    *type = span_of(table[i].type);
    return true;
}

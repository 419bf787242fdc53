/* SPDX-License-Identifier: MIT */
/*
 * glob_ref.c - the reference glob of glob_ref.h: the pattern becomes a list
 * of items (a byte table each, or a star), then a table of every (item,
 * name position) pair says which suffixes match. It must stay independent of
 * src/core/glob.c (no shared helpers), or a shared bug would agree with
 * itself.
 */
#include "ref/glob_ref.h"

#include "core/glob.h" /* GLOB_MAX_TOKENS only */

#include <stdlib.h>
#include <string.h>

/* The fuzzer is steered by the coverage of the code under test; the
 * reference's own branches would only add noise, and their comparison
 * callbacks cost most of a run. */
#pragma clang attribute push(__attribute__((no_sanitize("coverage"))), apply_to = function)

struct item {
    bool star;
    bool accept[256]; /* for a non-star item: the bytes it matches */
};

struct items {
    struct item v[GLOB_MAX_TOKENS];
    size_t n;
};

/* A set body s[0..n) (after '[' and an optional '!', before the closing
 * ']'): members and "lo-hi" ranges, read left to right. */
static void fill_set(struct item *it, const unsigned char *s, size_t n, bool negate)
{
    bool in[256] = {false};
    for (size_t i = 0; i < n; i++) {
        if (i + 2 < n && s[i + 1] == '-') {
            for (unsigned c = s[i]; c <= s[i + 2]; c++)
                in[c] = true;
            i += 2;
        } else {
            in[s[i]] = true;
        }
    }
    for (unsigned c = 0; c < 256; c++)
        it->accept[c] = in[c] != negate;
}

/* "{n}" at p[*i], n in 1..32 (leading zeros allowed); *count = 1 when there
 * is no '{'. False on a '{' that does not open a valid repeat. */
static bool read_repeat(const unsigned char *p, size_t n, size_t *i, size_t *count)
{
    *count = 1;
    if (*i >= n || p[*i] != '{')
        return true;
    size_t j = *i + 1, value = 0, digits = 0;
    while (j < n && p[j] >= '0' && p[j] <= '9') {
        if (value <= 1000)
            value = value * 10 + (size_t)(p[j] - '0');
        j++;
        digits++;
    }
    if (digits == 0 || j >= n || p[j] != '}' || value < 1 || value > 32)
        return false;
    *count = value;
    *i = j + 1;
    return true;
}

/* The pattern as items; false when it is not well formed. */
static bool compile_items(const char *pat, size_t n, struct items *out)
{
    const unsigned char *p = (const unsigned char *)pat;
    out->n = 0;
    if (n == 0)
        return false;
    for (size_t i = 0; i < n;) {
        struct item it;
        memset(&it, 0, sizeof it);
        bool repeatable = true;
        if (p[i] == '*') {
            it.star = true;
            repeatable = false;
            i++;
        } else if (p[i] == '?') {
            memset(it.accept, true, sizeof it.accept);
            i++;
        } else if (p[i] == '[') {
            size_t j = i + 1;
            bool negate = j < n && p[j] == '!';
            if (negate)
                j++;
            size_t body = j;
            if (j < n && p[j] == ']')
                j++; /* a ']' first is a member */
            const unsigned char *close = j < n ? memchr(p + j, ']', n - j) : NULL;
            if (!close)
                return false;
            j = (size_t)(close - p);
            fill_set(&it, p + body, j - body, negate);
            i = j + 1;
        } else if (p[i] == '\\' && i + 1 < n) {
            it.accept[p[i + 1]] = true;
            i += 2;
        } else {
            it.accept[p[i]] = true;
            i++;
        }
        size_t count = 1;
        if (repeatable && !read_repeat(p, n, &i, &count))
            return false;
        if (out->n + count > GLOB_MAX_TOKENS)
            return false;
        for (size_t k = 0; k < count; k++)
            out->v[out->n++] = it;
    }
    return true;
}

bool ref_glob_valid(const char *p, size_t n)
{
    struct items *it = malloc(sizeof *it);
    bool ok = compile_items(p, n, it);
    free(it);
    return ok;
}

bool ref_glob_match(const char *p, size_t pn, const char *name, size_t nn)
{
    struct items *it = malloc(sizeof *it);
    if (!compile_items(p, pn, it)) {
        free(it);
        return false;
    }
    /* m[i * (nn + 1) + j]: items i.. match name[j..). */
    size_t w = nn + 1;
    bool *m = calloc((it->n + 1) * w, sizeof *m);
    m[it->n * w + nn] = true;
    for (size_t i = it->n; i-- > 0;) {
        for (size_t j = nn + 1; j-- > 0;) {
            const struct item *t = &it->v[i];
            if (t->star)
                m[i * w + j] = m[(i + 1) * w + j] || (j < nn && m[i * w + j + 1]);
            else
                m[i * w + j] =
                    j < nn && t->accept[(unsigned char)name[j]] && m[(i + 1) * w + j + 1];
        }
    }
    bool ok = m[0];
    free(m);
    free(it);
    return ok;
}

size_t ref_glob_sample(const char *p, size_t pn, const unsigned char *seed, size_t sn, char *out,
                       size_t cap)
{
    struct items *it = malloc(sizeof *it);
    size_t len = 0, s = 0;
    bool ok = compile_items(p, pn, it);
    for (size_t i = 0; ok && i < it->n; i++) {
        unsigned choice = sn ? seed[s++ % sn] : 0;
        if (it->v[i].star) {
            for (unsigned k = 0; k < choice % 4 && ok; k++) {
                ok = len < cap;
                if (ok)
                    out[len++] = (char)(sn ? seed[s++ % sn] : 'x');
            }
            continue;
        }
        /* the accepted byte at or after the seed's, wrapping around */
        int pick = -1;
        for (unsigned k = 0; k < 256 && pick < 0; k++)
            if (it->v[i].accept[(choice + k) % 256])
                pick = (int)((choice + k) % 256);
        ok = pick >= 0 && len < cap;
        if (ok)
            out[len++] = (char)pick;
    }
    free(it);
    return ok ? len : (size_t)-1;
}

#pragma clang attribute pop

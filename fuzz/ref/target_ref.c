/* SPDX-License-Identifier: MIT */
/*
 * target_ref.c - the reference normalizer of target_ref.h. Written for
 * reading, not speed: every step builds a complete intermediate result
 * before the next step looks at it. It must stay independent of
 * src/core/target.c (no shared helpers), or a shared bug would agree with
 * itself.
 */
#include "ref/target_ref.h"

#include "core/target.h" /* the flag's value only */

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct ref_seg {
    char *s; /* decoded bytes */
    size_t n;
};

/* Decodes raw[0..n) once into a new allocation; false on a bad escape, a
 * NUL (raw or %00) or an encoded '/'. */
static bool decode(const char *raw, size_t n, struct ref_seg *out)
{
    out->s = malloc(n + 1);
    out->n = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)raw[i];
        if (c == '%') {
            if (i + 2 >= n)
                return false;
            if (!isxdigit((unsigned char)raw[i + 1]) || !isxdigit((unsigned char)raw[i + 2]))
                return false;
            char hex[3] = {raw[i + 1], raw[i + 2], 0};
            c = (unsigned char)strtol(hex, NULL, 16);
            if (c == '/')
                return false;
            i += 2;
        }
        if (c == 0)
            return false;
        out->s[out->n++] = (char)c;
    }
    return true;
}

static bool seg_is(const struct ref_seg *s, const char *lit)
{
    return s->n == strlen(lit) && memcmp(s->s, lit, s->n) == 0;
}

static long finish(struct ref_seg *segs, size_t nseg, size_t *stack, long ret)
{
    for (size_t i = 0; i < nseg; i++)
        free(segs[i].s);
    free(segs);
    free(stack);
    return ret;
}

long target_ref_normalize(const char *p, size_t n, char *out, size_t cap, unsigned *flags)
{
    *flags = 0;
    if (n == 0 || p[0] != '/')
        return -400;

    /* 1. Split the raw path after its leading '/' on every raw '/'. */
    size_t nseg = 1;
    for (size_t i = 1; i < n; i++)
        nseg += p[i] == '/';
    struct ref_seg *segs = calloc(nseg, sizeof(*segs));
    size_t *stack = calloc(nseg, sizeof(*stack));

    /* 2. Decode every segment; any decoding error is 400. */
    size_t start = 1, k = 0;
    for (size_t i = 1; i <= n; i++) {
        if (i == n || p[i] == '/') {
            if (!decode(p + start, i - start, &segs[k++]))
                return finish(segs, k, stack, -400);
            start = i + 1;
        }
    }

    /* 3. Remove dot-segments with a stack; popping an empty stack is 400. */
    size_t depth = 0;
    for (size_t i = 0; i < nseg; i++) {
        if (segs[i].n == 0 || seg_is(&segs[i], "."))
            continue;
        if (seg_is(&segs[i], "..")) {
            if (depth == 0)
                return finish(segs, nseg, stack, -400);
            depth--;
            continue;
        }
        stack[depth++] = i;
    }

    /* 4. The joined length must fit. */
    size_t total = 0;
    for (size_t i = 0; i < depth; i++)
        total += segs[stack[i]].n + (i > 0);
    if (total > cap)
        return finish(segs, nseg, stack, -414);

    /* 5. Dotfiles, with the first-segment ".well-known" exception. */
    for (size_t i = 0; i < depth; i++) {
        const struct ref_seg *s = &segs[stack[i]];
        if (s->s[0] == '.' && !(i == 0 && seg_is(s, ".well-known")))
            return finish(segs, nseg, stack, -403);
    }

    /* 6. Join, and note a directory form from the last raw segment. */
    size_t len = 0;
    for (size_t i = 0; i < depth; i++) {
        if (i > 0)
            out[len++] = '/';
        memcpy(out + len, segs[stack[i]].s, segs[stack[i]].n);
        len += segs[stack[i]].n;
    }
    const struct ref_seg *last = &segs[nseg - 1];
    if (last->n == 0 || seg_is(last, ".") || seg_is(last, ".."))
        *flags = TARGET_TRAILING_SLASH;
    return finish(segs, nseg, stack, (long)len);
}

bool target_ref_output_ok(const char *o, size_t n)
{
    if (n == 0)
        return true;
    if (memchr(o, '\0', n) || o[0] == '/' || o[n - 1] == '/')
        return false;
    size_t start = 0, index = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && o[i] != '/')
            continue;
        size_t len = i - start;
        const char *s = o + start;
        if (len == 0)
            return false; /* "//" */
        if (s[0] == '.' && !(index == 0 && len == 11 && memcmp(s, ".well-known", 11) == 0))
            return false; /* ".", "..", or a dotfile */
        start = i + 1;
        index++;
    }
    return true;
}

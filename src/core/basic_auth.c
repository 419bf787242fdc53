/* SPDX-License-Identifier: MIT */
/*
 * basic_auth.c - see basic_auth.h. One pass over the token: each group of
 * four characters gives three bytes, the last group up to two '='.
 */
#include "core/basic_auth.h"

#include "core/bytes.h"

/* A base64 character's six bits, or -1. */
static int b64(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Decodes t (a multiple of 4 characters) into out[cap]: the length, or -1
 * (malformed), -2 (too long). */
static long decode(struct span t, char *out, size_t cap)
{
    if (t.n == 0 || t.n % 4)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < t.n; i += 4) {
        bool last = i + 4 == t.n;
        int pad = last ? (t.p[i + 3] == '=') + (t.p[i + 3] == '=' && t.p[i + 2] == '=') : 0;
        int v[4];
        for (int k = 0; k < 4 - pad; k++)
            if ((v[k] = b64(t.p[i + (size_t)k])) < 0)
                return -1;
        /* The bits a padded group does not use must be zero (RFC 4648
         * §3.5: a decoder may refuse them; two encodings of one value are
         * one too many here). */
        if ((pad == 1 && (v[2] & 3)) || (pad == 2 && (v[1] & 15)))
            return -1;
        unsigned bytes = 3 - (unsigned)pad;
        if (n + bytes > cap)
            return -2;
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 |
                     (pad < 2 ? (uint32_t)v[2] << 6 : 0) | (pad < 1 ? (uint32_t)v[3] : 0);
        out[n++] = (char)(w >> 16);
        if (bytes > 1)
            out[n++] = (char)(w >> 8);
        if (bytes > 2)
            out[n++] = (char)w;
    }
    return (long)n;
}

int basic_auth_parse(struct span value, char *out, size_t cap, struct span *user,
                     struct span *password, struct span *token)
{
    if (value.n < 7 || !span_eq_nocase(span_make(value.p, 5), SPAN_LIT("Basic")) ||
        value.p[5] != ' ')
        return -1;
    size_t at = 6;
    while (at < value.n && value.p[at] == ' ')
        at++;
    *token = span_make(value.p + at, value.n - at);
    if (cap == 0)
        return -2;
    long n = decode(*token, out, cap - 1);
    if (n < 0)
        return (int)n;
    size_t colon = mem_find(out, (size_t)n, ':');
    if (colon == (size_t)n || mem_find(out, (size_t)n, '\0') < (size_t)n)
        return -1;
    out[n] = '\0';
    *user = span_make(out, colon);
    *password = span_make(out + colon + 1, (size_t)n - colon - 1);
    return 0;
}

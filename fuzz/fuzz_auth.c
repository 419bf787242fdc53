/* SPDX-License-Identifier: MIT */
/*
 * fuzz_auth.c - basic auth's parsers on any bytes. Up to the first LF the
 * input is an Authorization value (core/basic_auth.c): accepted
 * credentials lie in the output buffer, the password is NUL-terminated and
 * holds no NUL, and encoding "user:password" in base64 again gives exactly
 * the token (the decoding is strict: one encoding per value). After it
 * comes a password-file line (core/htpasswd.c): an accepted entry has a
 * user without ':' or control bytes and a hash of an accepted kind; a
 * refusal says why. Inputs are copied to buffers of exactly their length.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/basic_auth.h"
#include "core/htpasswd.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_auth: %s\n", what);
        __builtin_trap();
    }
}

static size_t encode(const unsigned char *in, size_t n, char *out)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t k = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t w = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
                     (i + 2 < n ? in[i + 2] : 0);
        out[k++] = a[w >> 18 & 63];
        out[k++] = a[w >> 12 & 63];
        out[k++] = i + 1 < n ? a[w >> 6 & 63] : '=';
        out[k++] = i + 2 < n ? a[w & 63] : '=';
    }
    return k;
}

static void credentials(const char *p, size_t n)
{
    char *v = malloc(n ? n : 1);
    memcpy(v, p, n);
    char out[512];
    struct span user, pass, tok;
    int r = basic_auth_parse((struct span){v, n}, out, sizeof out, &user, &pass, &tok);
    require(r == 0 || r == -1 || r == -2, "a result");
    if (r == 0) {
        require(user.p == out && pass.p == out + user.n + 1, "in the buffer");
        require(pass.p[pass.n] == '\0' && !memchr(pass.p, 0, pass.n), "terminated, no NUL");
        require(!memchr(user.p, ':', user.n), "no ':' in the user");
        unsigned char plain[512];
        memcpy(plain, user.p, user.n);
        plain[user.n] = ':';
        memcpy(plain + user.n + 1, pass.p, pass.n);
        char again[700];
        size_t k = encode(plain, user.n + 1 + pass.n, again);
        require(k == tok.n && memcmp(again, tok.p, k) == 0, "one encoding per value");
    }
    free(v);
}

static void line(const char *p, size_t n)
{
    char *l = malloc(n ? n : 1);
    memcpy(l, p, n);
    struct htpasswd_entry e;
    const char *why = NULL;
    int r = htpasswd_line((struct span){l, n}, &e, &why);
    if (r == 1) {
        require(e.user.n > 0 && !memchr(e.user.p, ':', e.user.n), "a user");
        for (size_t i = 0; i < e.user.n; i++)
            require((unsigned char)e.user.p[i] >= 0x20 && e.user.p[i] != 0x7f, "no control");
        require(
            (e.hash.n > 3 && !memcmp(e.hash.p, "$y$", 3)) ||
                (e.hash.n > 4 && (!memcmp(e.hash.p, "$2b$", 4) || !memcmp(e.hash.p, "$2y$", 4))) ||
                (e.hash.n > 3 && !memcmp(e.hash.p, "$6$", 3)),
            "an accepted kind");
    } else if (r < 0) {
        require(why && why[0], "a reason");
    }
    free(l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    const char *nl = memchr(p, '\n', size);
    size_t first = nl ? (size_t)(nl - p) : size;
    credentials(p, first);
    if (nl)
        line(nl + 1, size - first - 1);
    return 0;
}

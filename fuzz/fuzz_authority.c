/* SPDX-License-Identifier: MIT */
/*
 * fuzz_authority.c - authority_host() on any bytes: it never reads past
 * the input (copied into a buffer of exactly its length) or writes past
 * out[cap]; an accepted host is NUL-terminated, its length is the result,
 * it holds only the characters a redirect may carry (letters, digits, '-',
 * '.', and ':' only for a bracketed IPv6 literal), it is the input's own
 * bytes at the right place, and what follows it is a port of 1 to 5
 * digits or nothing. The capacity comes from the first byte, so the
 * "does not fit" edge is reached too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/authority.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_authority: %s\n", what);
        __builtin_trap();
    }
}

static int allowed(char c, bool ipv6)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || (ipv6 && c == ':');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t cap = 1 + data[0] % 80;
    size_t n = size - 1;
    char *in = malloc(n ? n : 1);
    char *out = malloc(cap);
    memcpy(in, data + 1, n);
    bool ipv6 = false;
    long r = authority_host((struct span){in, n}, out, cap, &ipv6);
    if (r >= 0) {
        size_t len = (size_t)r, from = ipv6 ? 1 : 0;
        require(len + 1 <= cap && out[len] == '\0', "terminated within cap");
        require(len > 0, "a host is never empty");
        require(from + len <= n && memcmp(out, in + from, len) == 0, "the input's own bytes");
        for (size_t i = 0; i < len; i++)
            require(allowed(out[i], ipv6), "only host characters");
        size_t rest = from + len + (ipv6 ? 1 : 0);
        require(!ipv6 || in[from + len] == ']', "a literal ends with its bracket");
        if (rest < n) {
            require(in[rest] == ':' && n - rest >= 2 && n - rest <= 6, "a port follows");
            for (size_t i = rest + 1; i < n; i++)
                require(in[i] >= '0' && in[i] <= '9', "the port is digits");
        }
    }
    free(in);
    free(out);
    return 0;
}

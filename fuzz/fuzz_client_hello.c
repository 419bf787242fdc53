/* SPDX-License-Identifier: MIT */
/*
 * fuzz_client_hello.c - client_hello.h against its promises, on bytes a
 * TLS client chooses (issue 35's tls-alpn-01 decision reads them before
 * OpenSSL does). The input: its first byte k, the next k bytes a protocol
 * name, the rest an extension body. client_hello_alpn_offers agrees with a
 * reference written differently (a recursive walk over the names), and
 * client_hello_sni with one that counts what is left instead of where it
 * is; a name it returns lies inside the body. Then the body's bytes are
 * cut into names and framed as a well-formed list, which must offer each
 * of them and nothing else of the probe's. The input is libFuzzer's own
 * exact-size buffer, so ASan sees a read past its end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/client_hello.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_client_hello: %s\n", what);
        abort();
    }
}

/* ---- the references ------------------------------------------------------ */

/* The names in p[0..left) (no list length): 1 well formed and proto among
 * them, 0 well formed without it, -1 malformed. */
static int ref_names(const uint8_t *p, size_t left, const uint8_t *proto, size_t pn)
{
    if (left == 0)
        return 0;
    size_t n = p[0];
    if (n == 0 || 1 + n > left)
        return -1;
    int rest = ref_names(p + 1 + n, left - 1 - n, proto, pn);
    if (rest < 0)
        return -1;
    return rest || (n == pn && memcmp(p + 1, proto, n) == 0);
}

static int ref_alpn(const uint8_t *p, size_t len, const uint8_t *proto, size_t pn)
{
    if (len < 3 || ((size_t)p[0] * 256 + p[1]) + 2 != len)
        return 0;
    return ref_names(p + 2, len - 2, proto, pn) == 1;
}

/* The first host_name's offset and length, or -1. */
static long ref_sni(const uint8_t *p, size_t len, size_t *n_out)
{
    if (len < 2 || ((size_t)p[0] * 256 + p[1]) + 2 != len)
        return -1;
    const uint8_t *q = p + 2;
    size_t left = len - 2;
    while (left >= 3) {
        size_t n = (size_t)q[1] * 256 + q[2];
        if (left - 3 < n)
            return -1;
        if (q[0] == 0) {
            *n_out = n;
            return n ? (long)(q + 3 - p) : -1;
        }
        q += 3 + n;
        left -= 3 + n;
    }
    return -1;
}

/* ---- the properties ------------------------------------------------------ */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t pn = data[0] < size - 1 ? data[0] : size - 1;
    const uint8_t *proto = data + 1, *body = data + 1 + pn;
    size_t len = size - 1 - pn;
    /* Copies the libFuzzer buffer's tail exactly: ASan sees past len. */
    uint8_t *b = malloc(len ? len : 1), *pr = malloc(pn ? pn : 1);
    memcpy(b, body, len);
    memcpy(pr, proto, pn);
    struct span want = {(const char *)pr, pn};

    bool got = client_hello_alpn_offers(b, len, want);
    require(got == (ref_alpn(b, len, pr, pn) == 1), "ALPN agrees with the reference");

    struct span name = {0};
    size_t rn = 0;
    long at = ref_sni(b, len, &rn);
    bool ok = client_hello_sni(b, len, &name);
    require(ok == (at >= 0), "SNI agrees with the reference on whether there is a name");
    if (ok) {
        require((const uint8_t *)name.p == b + at && name.n == rn, "SNI: the same name");
        require(name.n > 0 && (const uint8_t *)name.p + name.n <= b + len, "SNI: inside the body");
    }

    /* The body cut into names of 1..8 bytes (each length from its first
     * byte), framed as a list: every name is offered, the probe only when
     * it is one of them. */
    if (len > 0 && len <= 4000) {
        uint8_t *list = malloc(2 + 2 * len);
        size_t n = 2, names = 0, starts[4000], lens[4000];
        for (size_t i = 0; i < len;) {
            size_t k = 1 + body[i] % 8;
            if (k > len - i)
                k = len - i;
            list[n++] = (uint8_t)k;
            memcpy(list + n, body + i, k);
            starts[names] = n;
            lens[names++] = k;
            n += k;
            i += k;
        }
        list[0] = (uint8_t)((n - 2) >> 8);
        list[1] = (uint8_t)(n - 2);
        bool probe = false;
        for (size_t j = 0; j < names; j++) {
            struct span s = {(const char *)list + starts[j], lens[j]};
            require(client_hello_alpn_offers(list, n, s), "a framed name is offered");
            probe = probe || (lens[j] == pn && memcmp(list + starts[j], pr, pn) == 0);
        }
        require(client_hello_alpn_offers(list, n, want) == probe, "the probe, only if framed");
        require(!client_hello_alpn_offers(list, n - 1, want), "a cut list offers nothing");
        free(list);
    }
    free(b);
    free(pr);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * fuzz_realip.c - realip_pick() against a reference that reads the list
 * the other way round: every element of every field line of the header,
 * left to right, into one array, then the last one not trusted. The
 * input's first byte chooses the peer (trusted or not) and the trusted
 * set; the rest is field lines split at '\n', each "name:value" (the name
 * compared case-insensitively with X-Forwarded-For). Promised: a verdict
 * of the three; NONE for an untrusted peer or no such header; BAD exactly
 * when an element read before the answer is not an address (empty ones
 * included); FOUND with the right-most untrusted address, or the left-most
 * when every hop is trusted; *out untouched unless FOUND. Each line lives
 * in its own exact-size buffer, so ASan sees a read past one.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/netaddr.h"
#include "core/realip.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_realip: %s\n", what);
        abort();
    }
}

#define LINES_MAX    32
#define ELEMENTS_MAX 4096

static const char *const trust_text[] = {"10.0.0.0/8", "2001:db8::/32", "127.0.0.1", "::/0",
                                         "0.0.0.0/0"};
static const char *const peer_text[] = {"10.0.0.1", "2001:db8::7", "127.0.0.1", "192.0.2.9", "::1"};

static int is_ows(char c)
{
    return c == ' ' || c == '\t';
}

static int name_matches(const char *p, size_t n)
{
    static const char want[] = "x-forwarded-for";
    if (n != sizeof want - 1)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i] >= 'A' && p[i] <= 'Z' ? (char)(p[i] + 32) : p[i];
        if (c != want[i])
            return 0;
    }
    return 1;
}

struct element {
    const char *p;
    size_t n;
};

/* The elements of every matching line, left to right, trimmed. */
static size_t ref_elements(const struct http_field *f, size_t nf, struct element *out)
{
    size_t ne = 0;
    for (size_t k = 0; k < nf; k++) {
        if (!name_matches(f[k].name.p, f[k].name.n))
            continue;
        const char *v = f[k].value.p;
        size_t start = 0, n = f[k].value.n;
        for (size_t i = 0; i <= n && ne < ELEMENTS_MAX; i++) {
            if (i < n && v[i] != ',')
                continue;
            size_t s = start, e = i;
            while (s < e && is_ows(v[s]))
                s++;
            while (e > s && is_ows(v[e - 1]))
                e--;
            out[ne++] = (struct element){v + s, e - s};
            start = i + 1;
        }
    }
    return ne;
}

static enum realip_verdict ref_pick(const struct http_field *f, size_t nf,
                                    const struct net_cidr *trusted, size_t nt,
                                    const struct net_addr *peer, struct net_addr *out)
{
    static struct element el[ELEMENTS_MAX];
    if (!net_cidr_any(trusted, nt, peer))
        return REALIP_NONE;
    size_t ne = ref_elements(f, nf, el);
    struct net_addr a;
    for (size_t i = ne; i-- > 0;) {
        if (!net_addr_parse((struct span){el[i].p, el[i].n}, &a, NULL))
            return REALIP_BAD;
        *out = a;
        if (!net_cidr_any(trusted, nt, &a))
            return REALIP_FOUND;
    }
    return ne ? REALIP_FOUND : REALIP_NONE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned sel = data[0];
    struct net_cidr trusted[5];
    size_t nt = 0;
    for (unsigned i = 0; i < 5; i++)
        if (sel & (1u << i) || i == 0) /* never an empty set: 10/8 always */
            require(net_cidr_parse((struct span){trust_text[i], strlen(trust_text[i])},
                                   &trusted[nt++]) == 0,
                    "the trusted set parses");
    struct net_addr peer;
    const char *pt = peer_text[(sel >> 5) % 5];
    require(net_addr_parse((struct span){pt, strlen(pt)}, &peer, NULL), "the peer parses");

    /* Field lines, each copied into a buffer of its own exact size. */
    struct http_field f[LINES_MAX];
    char *bufs[LINES_MAX];
    size_t nf = 0;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    for (size_t start = 0, i = 0; i <= n && nf < LINES_MAX; i++) {
        if (i < n && p[i] != '\n')
            continue;
        size_t len = i - start;
        char *b = malloc(len ? len : 1);
        memcpy(b, p + start, len);
        const char *colon = memchr(b, ':', len);
        size_t nn = colon ? (size_t)(colon - b) : len;
        size_t vs = colon ? nn + 1 : len;
        bufs[nf] = b;
        f[nf++] = (struct http_field){{b, nn}, {b + vs, len - vs}};
        start = i + 1;
    }

    struct net_addr got, want;
    memset(&got, 0x5a, sizeof got);
    struct net_addr untouched = got;
    memset(&want, 0, sizeof want);
    struct span name = {"X-Forwarded-For", 15};
    enum realip_verdict v = realip_pick(f, nf, name, trusted, nt, &peer, &got);
    enum realip_verdict r = ref_pick(f, nf, trusted, nt, &peer, &want);
    require(v == REALIP_NONE || v == REALIP_FOUND || v == REALIP_BAD, "a known verdict");
    require(v == r, "the verdict the reference gives");
    if (v == REALIP_FOUND)
        require(!memcmp(got.b, want.b, 16), "the client the reference picks");
    else
        require(!memcmp(got.b, untouched.b, 16), "*out untouched unless FOUND");
    for (size_t k = 0; k < nf; k++)
        free(bufs[k]);
    return 0;
}

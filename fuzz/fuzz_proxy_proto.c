/* SPDX-License-Identifier: MIT */
/*
 * fuzz_proxy_proto.c - proxy_parse() against proxy_proto.h's promises: a
 * known verdict; a length within the input (at most 107 for v1, 16 + the
 * declared length for v2); the same header from exactly those bytes; AGAIN
 * (never a verdict) for every shorter prefix of a header, so a header split
 * across reads parses the same; MISSING exactly when the bytes cannot start
 * a signature. The input is libFuzzer's own exact-size buffer, so ASan sees
 * a read past n. net_addr_parse and net_cidr_parse run on the same bytes,
 * and realip_pick on them as an X-Forwarded-For value from a trusted peer:
 * a client it names is an untrusted address unless every hop was trusted.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/netaddr.h"
#include "core/proxy_proto.h"
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
        fprintf(stderr, "fuzz_proxy_proto: %s\n", what);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    struct proxy_header h, again;
    memset(&h, 0xa5, sizeof h);
    long r = proxy_parse(p, size, &h);
    require(r == PROXY_AGAIN || r == PROXY_BAD || r == PROXY_MISSING ||
                (r > 0 && (size_t)r <= size),
            "a known verdict within the input");
    require((r == PROXY_MISSING) == (size > 0 && !proxy_looks_like_header(p, size)),
            "MISSING exactly when no signature can start here");
    if (r > 0) {
        require(h.version == 1 || h.version == 2, "a version");
        require(h.version != 1 || r <= PROXY_V1_MAX, "v1 within 107 bytes");
        require(h.version != 2 || (size_t)r == PROXY_V2_HEAD + ((size_t)data[14] << 8 | data[15]),
                "v2 is its declared length");
        /* The same header from exactly its bytes, in a buffer of that size. */
        char *exact = malloc((size_t)r);
        memcpy(exact, p, (size_t)r);
        require(proxy_parse(exact, (size_t)r, &again) == r, "the header alone parses the same");
        require(again.has_addr == h.has_addr && again.sport == h.sport && again.dport == h.dport &&
                    (!h.has_addr || !memcmp(&again.src, &h.src, 16)),
                "the same addresses");
        /* Split across reads: every shorter prefix waits. */
        for (long k = 0; k < r; k++)
            require(proxy_parse(exact, (size_t)k, &again) == PROXY_AGAIN, "a prefix waits");
        free(exact);
    }
    struct net_addr a;
    struct net_cidr c;
    if (net_addr_parse((struct span){p, size}, &a, NULL)) {
        /* An address parsed is a prefix of itself (/128 matches itself). */
        c.a = a;
        c.bits = 128;
        require(net_cidr_match(&c, &a), "an address matches itself");
    }
    if (net_cidr_parse((struct span){p, size}, &c) == 0) {
        require(c.bits <= 128, "a prefix length within 128");
        require(net_cidr_match(&c, &c.a), "a prefix matches its own network");
    }
    struct net_cidr trusted[2];
    net_cidr_parse((struct span){"10.0.0.0/8", 10}, &trusted[0]);
    net_cidr_parse((struct span){"2001:db8::/32", 13}, &trusted[1]);
    struct net_addr peer, client;
    net_addr_parse((struct span){"10.0.0.1", 8}, &peer, NULL);
    struct http_field f = {{"X-Forwarded-For", 15}, {p, size}};
    enum realip_verdict v = realip_pick(&f, 1, f.name, trusted, 2, &peer, &client);
    require(v == REALIP_NONE || v == REALIP_FOUND || v == REALIP_BAD, "a known verdict");
    if (v == REALIP_FOUND && net_cidr_any(trusted, 2, &client)) {
        /* All trusted: then no element parsed as untrusted. */
        struct net_addr a;
        for (size_t i = 0, start = 0; i <= size; i++)
            if (i == size || p[i] == ',') {
                size_t s0 = start, e = i;
                while (s0 < e && (p[s0] == ' ' || p[s0] == '\t'))
                    s0++;
                while (e > s0 && (p[e - 1] == ' ' || p[e - 1] == '\t'))
                    e--;
                require(net_addr_parse((struct span){p + s0, e - s0}, &a, NULL) &&
                            net_cidr_any(trusted, 2, &a),
                        "a trusted client only when every hop is trusted");
                start = i + 1;
            }
    }
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * realip.c - see realip.h.
 */
#include "core/realip.h"

#include "core/bytes.h"

/* The element of v that ends at *end (exclusive), trimmed; *end moves to
 * the comma before it (or -1 past the start). */
static struct span element_before(struct span v, long *end)
{
    long i = *end;
    while (i > 0 && v.p[i - 1] != ',')
        i--;
    struct span e = span_trim_ows(span_make(v.p + i, (size_t)(*end - i)));
    *end = i - 1;
    return e;
}

enum realip_verdict realip_pick(const struct http_field *f, size_t n, struct span name,
                                const struct net_cidr *trusted, size_t ntrusted,
                                const struct net_addr *peer, struct net_addr *out)
{
    if (!net_cidr_any(trusted, ntrusted, peer))
        return REALIP_NONE;
    struct net_addr cur;
    bool seen = false;
    for (size_t k = n; k-- > 0;) {
        if (!span_eq_nocase(f[k].name, name))
            continue;
        struct span v = f[k].value;
        for (long end = (long)v.n; end >= 0;) {
            struct span e = element_before(v, &end);
            if (!net_addr_parse(e, &cur, NULL))
                return REALIP_BAD;
            seen = true;
            if (!net_cidr_any(trusted, ntrusted, &cur)) {
                *out = cur;
                return REALIP_FOUND;
            }
        }
    }
    if (!seen)
        return REALIP_NONE;
    *out = cur; /* every hop trusted: the left-most */
    return REALIP_FOUND;
}

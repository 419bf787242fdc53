/* SPDX-License-Identifier: MIT */
/*
 * netaddr.c - see netaddr.h. Pure parsing over caller-owned bytes: no libc
 * (inet_pton is not there in the freestanding build), no allocation.
 */
#include "core/netaddr.h"

#include "core/bytes.h"

static const unsigned char v4_mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

void net_addr_from_v4(struct net_addr *out, const unsigned char v4[4])
{
    mem_copy(out->b, v4_mapped_prefix, 12);
    mem_copy(out->b + 12, v4, 4);
}

bool net_addr_is_v4(const struct net_addr *a)
{
    return mem_eq(a->b, v4_mapped_prefix, 12);
}

/* Four dotted parts into out[4]. */
static bool ip4_bytes(struct span s, unsigned char out[4])
{
    size_t i = 0;
    for (unsigned part = 0; part < 4; part++) {
        if (part && (i >= s.n || s.p[i++] != '.'))
            return false;
        size_t start = i;
        unsigned v = 0;
        while (i < s.n && ascii_is_digit(s.p[i]) && i - start < 3)
            v = v * 10 + (unsigned)(s.p[i++] - '0');
        size_t len = i - start;
        if (len == 0 || v > 255 || (len > 1 && s.p[start] == '0'))
            return false;
        out[part] = (unsigned char)v;
    }
    return i == s.n;
}

bool net_ip4_parse(struct span s, struct net_addr *out)
{
    unsigned char v4[4];
    if (!ip4_bytes(s, v4))
        return false;
    net_addr_from_v4(out, v4);
    return true;
}

bool net_ip6_parse(struct span s, struct net_addr *out)
{
    unsigned char b[16] = {0};
    size_t i = 0, n = 0; /* bytes written */
    long gap = -1;       /* where "::" stands, in bytes */
    if (s.n >= 2 && s.p[0] == ':' && s.p[1] == ':') {
        gap = 0;
        i = 2;
    } else if (s.n && s.p[0] == ':') {
        return false;
    }
    while (i < s.n) {
        if (n == 16)
            return false;
        /* An IPv4 tail: digits followed by a '.' before the next ':'. */
        size_t j = i;
        while (j < s.n && s.p[j] != ':' && s.p[j] != '.')
            j++;
        if (j < s.n && s.p[j] == '.') {
            if (n > 12 || !ip4_bytes(span_make(s.p + i, s.n - i), b + n))
                return false;
            n += 4;
            i = s.n;
            break;
        }
        unsigned v = 0;
        size_t start = i;
        int h;
        while (i < s.n && i - start < 4 && (h = hex_value(s.p[i])) >= 0)
            v = v * 16 + (unsigned)h, i++;
        if (i == start)
            return false;
        b[n++] = (unsigned char)(v >> 8);
        b[n++] = (unsigned char)v;
        if (i == s.n)
            break;
        if (s.p[i] != ':')
            return false;
        i++;
        if (i < s.n && s.p[i] == ':') {
            if (gap >= 0)
                return false; /* a second "::" */
            gap = (long)n;
            i++;
        } else if (i == s.n) {
            return false; /* a trailing single ':' */
        }
    }
    if (gap < 0 && n != 16)
        return false;
    if (gap >= 0) {
        if (n == 16)
            return false; /* "::" must stand for at least one group */
        size_t tail = n - (size_t)gap;
        mem_move(b + 16 - tail, b + gap, tail);
        for (size_t k = (size_t)gap; k < 16 - tail; k++)
            b[k] = 0;
    }
    mem_copy(out->b, b, 16);
    return true;
}

bool net_addr_parse(struct span s, struct net_addr *out, bool *v4)
{
    bool is4 = mem_find(s.p, s.n, ':') == s.n;
    if (v4)
        *v4 = is4;
    return is4 ? net_ip4_parse(s, out) : net_ip6_parse(s, out);
}

int net_cidr_parse(struct span s, struct net_cidr *out)
{
    size_t slash = mem_find(s.p, s.n, '/');
    bool v4;
    if (!net_addr_parse(span_make(s.p, slash), &out->a, &v4))
        return NET_CIDR_BAD;
    unsigned max = v4 ? 32 : 128;
    uint64_t bits = max;
    if (slash < s.n) {
        struct span len = span_make(s.p + slash + 1, s.n - slash - 1);
        if (len.n == 0 || len.n > 3 || (len.n > 1 && len.p[0] == '0') || !u64_parse(len, &bits) ||
            bits > max)
            return NET_CIDR_BAD;
    }
    out->bits = (unsigned)bits + (v4 ? 96 : 0);
    for (unsigned k = out->bits; k < 128; k++)
        if (out->a.b[k / 8] & (0x80u >> (k % 8)))
            return NET_CIDR_HOST_BITS;
    return 0;
}

bool net_cidr_match(const struct net_cidr *c, const struct net_addr *a)
{
    unsigned whole = c->bits / 8, rest = c->bits % 8;
    if (!mem_eq(c->a.b, a->b, whole))
        return false;
    if (!rest)
        return true;
    unsigned mask = (0xffu << (8 - rest)) & 0xffu;
    return ((c->a.b[whole] ^ a->b[whole]) & mask) == 0;
}

bool net_cidr_any(const struct net_cidr *list, size_t n, const struct net_addr *a)
{
    for (size_t i = 0; i < n; i++)
        if (net_cidr_match(&list[i], a))
            return true;
    return false;
}

/* SPDX-License-Identifier: MIT */
/*
 * fuzz_netaddr.c - netaddr.h against its promises. Text: net_ip4_parse
 * and net_ip6_parse agree with a reference written differently (split on
 * '.', on "::" and ':', here) on what they accept and the 16 bytes they
 * give; net_addr_parse picks the family by the ':' and says so; a parsed
 * address printed back (dotted, full and "::"-compressed hex) parses to
 * the same bytes. CIDR: net_cidr_parse accepts a prefix length without
 * leading zeros within the family's width, counts an IPv4 /n as 96 + n,
 * refuses host bits set (HOST_BITS, never BAD, when only they are wrong),
 * and net_cidr_match agrees with a bit-by-bit compare. Bytes: the first
 * 16 bytes of the input as an address print and parse back to themselves.
 * The input is libFuzzer's own exact-size buffer, so ASan sees a read past
 * its end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/netaddr.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_netaddr: %s\n", what);
        abort();
    }
}

/* ---- the reference parsers ---------------------------------------------- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* "a.b.c.d": exactly four pieces between dots, 1..3 digits, no leading
 * zero, at most 255. */
static int ref_ip4(const char *p, size_t n, unsigned char out[4])
{
    size_t piece = 0, start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && p[i] != '.')
            continue;
        size_t len = i - start;
        if (piece == 4 || len == 0 || len > 3 || (len > 1 && p[start] == '0'))
            return 0;
        unsigned v = 0;
        for (size_t k = start; k < i; k++) {
            if (p[k] < '0' || p[k] > '9')
                return 0;
            v = v * 10 + (unsigned)(p[k] - '0');
        }
        if (v > 255)
            return 0;
        out[piece++] = (unsigned char)v;
        start = i + 1;
    }
    return piece == 4;
}

/* The 16-bit groups of one side of "::" (or of the whole text): pieces
 * between colons, each 1..4 hex digits; the last piece of the text may be
 * a dotted IPv4 address (two groups). -1 when malformed, else the count. */
static int ref_groups(const char *p, size_t n, int may_end_v4, unsigned g[10])
{
    int count = 0;
    if (n == 0)
        return 0;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && p[i] != ':')
            continue;
        size_t len = i - start;
        if (count > 8)
            return -1;
        if (i == n && may_end_v4 && memchr(p + start, '.', len)) {
            unsigned char v4[4];
            if (!ref_ip4(p + start, len, v4))
                return -1;
            g[count++] = (unsigned)v4[0] << 8 | v4[1];
            g[count++] = (unsigned)v4[2] << 8 | v4[3];
            return count;
        }
        if (len == 0 || len > 4)
            return -1;
        unsigned v = 0;
        for (size_t k = start; k < i; k++) {
            int h = hexval(p[k]);
            if (h < 0)
                return -1;
            v = v * 16 + (unsigned)h;
        }
        g[count++] = v;
        start = i + 1;
    }
    return count;
}

static int ref_ip6(const char *p, size_t n, unsigned char out[16])
{
    const char *gap = NULL;
    for (size_t i = 0; i + 1 < n; i++)
        if (p[i] == ':' && p[i + 1] == ':') {
            if (gap)
                return 0; /* a second "::" (or ":::") */
            gap = p + i;
        }
    unsigned head[10], tail[10], all[8] = {0};
    int nh, nt;
    if (!gap) {
        nh = ref_groups(p, n, 1, head);
        if (nh != 8)
            return 0;
        memcpy(all, head, sizeof all);
    } else {
        size_t hn = (size_t)(gap - p), tn = n - hn - 2;
        nh = ref_groups(p, hn, 0, head);
        nt = ref_groups(gap + 2, tn, 1, tail);
        if (nh < 0 || nt < 0 || nh + nt > 7)
            return 0;
        for (int k = 0; k < nh; k++)
            all[k] = head[k];
        for (int k = 0; k < nt; k++)
            all[8 - nt + k] = tail[k];
    }
    for (int k = 0; k < 8; k++) {
        out[2 * k] = (unsigned char)(all[k] >> 8);
        out[2 * k + 1] = (unsigned char)all[k];
    }
    return 1;
}

/* ---- printing ------------------------------------------------------------ */

static size_t print_v4(char *o, const unsigned char *b)
{
    return (size_t)sprintf(o, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
}

/* Full hex groups, or with the longest run of zero groups as "::". */
static size_t print_v6(char *o, const unsigned char *b, int compress)
{
    int best = -1, best_len = 0;
    for (int k = 0; compress && k < 8;) {
        int run = 0;
        while (k + run < 8 && !b[2 * (k + run)] && !b[2 * (k + run) + 1])
            run++;
        if (run > best_len)
            best = k, best_len = run;
        k += run ? run : 1;
    }
    size_t n = 0;
    for (int k = 0; k < 8; k++) {
        if (k == best) {
            n += (size_t)sprintf(o + n, "::");
            k += best_len - 1;
            continue;
        }
        if (n && o[n - 1] != ':')
            o[n++] = ':';
        n += (size_t)sprintf(o + n, "%x", (unsigned)b[2 * k] << 8 | b[2 * k + 1]);
    }
    o[n] = '\0';
    return n;
}

static void round_trip(const struct net_addr *a)
{
    char text[64];
    struct net_addr back;
    bool v4;
    for (int compress = 0; compress <= 1; compress++) {
        size_t n = print_v6(text, a->b, compress);
        require(net_ip6_parse((struct span){text, n}, &back) && !memcmp(back.b, a->b, 16),
                "printed IPv6 parses back to the same bytes");
        require(net_addr_parse((struct span){text, n}, &back, &v4) && !v4 &&
                    !memcmp(back.b, a->b, 16),
                "net_addr_parse takes the IPv6 text back");
    }
    if (net_addr_is_v4(a)) {
        size_t n = print_v4(text, a->b + 12);
        require(net_addr_parse((struct span){text, n}, &back, &v4) && v4 &&
                    !memcmp(back.b, a->b, 16),
                "printed IPv4 parses back to the same mapped address");
    }
}

static int bit(const unsigned char *b, unsigned k)
{
    return b[k / 8] >> (7 - k % 8) & 1;
}

static int ref_match(const struct net_cidr *c, const struct net_addr *a)
{
    for (unsigned k = 0; k < c->bits; k++)
        if (bit(c->a.b, k) != bit(a->b, k))
            return 0;
    return 1;
}

static void check_cidr(const char *p, size_t size, const struct net_addr *other)
{
    struct net_cidr c;
    memset(&c, 0xa5, sizeof c);
    int r = net_cidr_parse((struct span){p, size}, &c);
    require(r == 0 || r == NET_CIDR_BAD || r == NET_CIDR_HOST_BITS, "a known cidr verdict");
    const char *slash = memchr(p, '/', size);
    size_t an = slash ? (size_t)(slash - p) : size;
    struct net_addr a;
    bool v4;
    int addr_ok = net_addr_parse((struct span){p, an}, &a, &v4);
    unsigned max = v4 ? 32 : 128, len = max;
    int len_ok = 1;
    if (slash) {
        const char *l = slash + 1;
        size_t ln = size - an - 1;
        len_ok = ln >= 1 && ln <= 3 && !(ln > 1 && l[0] == '0');
        len = 0;
        for (size_t k = 0; len_ok && k < ln; k++) {
            len_ok = l[k] >= '0' && l[k] <= '9';
            len = len * 10 + (unsigned)(l[k] - '0');
        }
        len_ok = len_ok && len <= max;
    }
    if (!addr_ok || !len_ok) {
        require(r == NET_CIDR_BAD, "a bad address or length is BAD");
        return;
    }
    unsigned bits = len + (v4 ? 96 : 0);
    struct net_cidr want = {a, bits};
    int host = 0;
    for (unsigned k = bits; k < 128; k++)
        host |= bit(a.b, k);
    require(r == (host ? NET_CIDR_HOST_BITS : 0), "HOST_BITS exactly when bits past the prefix");
    if (r != 0)
        return;
    require(c.bits == bits && !memcmp(c.a.b, a.b, 16), "the prefix as written");
    require(net_cidr_match(&c, &a), "a prefix matches its own network");
    require(net_cidr_match(&c, other) == ref_match(&want, other), "match agrees bit by bit");
    require(net_cidr_any(&c, 1, other) == net_cidr_match(&c, other), "any of one is match");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    struct net_addr a, b;
    unsigned char want[16];
    bool v4;

    int ok4 = net_ip4_parse((struct span){p, size}, &a);
    unsigned char r4[4];
    require(ok4 == ref_ip4(p, size, r4), "IPv4 accepts what the reference accepts");
    if (ok4) {
        require(net_addr_is_v4(&a) && !memcmp(a.b + 12, r4, 4), "IPv4 bytes, mapped");
        round_trip(&a);
    }
    int ok6 = net_ip6_parse((struct span){p, size}, &b);
    require(ok6 == ref_ip6(p, size, want), "IPv6 accepts what the reference accepts");
    if (ok6) {
        require(!memcmp(b.b, want, 16), "IPv6 bytes as the reference's");
        round_trip(&b);
    }
    int ok = net_addr_parse((struct span){p, size}, &a, &v4);
    require(v4 == !memchr(p, ':', size), "the family by the colon");
    require(ok == (v4 ? ok4 : ok6), "net_addr_parse is the family's parser");

    /* The input's first 16 bytes as an address. */
    struct net_addr raw = {{0}};
    memcpy(raw.b, data, size < 16 ? size : 16);
    round_trip(&raw);
    check_cidr(p, size, &raw);
    return 0;
}

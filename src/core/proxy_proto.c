/* SPDX-License-Identifier: MIT */
/*
 * proxy_proto.c - see proxy_proto.h. The two versions are told apart by
 * their signatures ("PROXY " and the 12-byte v2 magic, which no HTTP method
 * can start with); each is parsed only once it is complete, so a header
 * split across reads is simply asked for again.
 */
#include "core/proxy_proto.h"

#include "core/bytes.h"

static const char v1_sig[6] = {'P', 'R', 'O', 'X', 'Y', ' '};
static const char v2_sig[12] = {'\r', '\n', '\r', '\n', '\0', '\r', '\n', 'Q', 'U', 'I', 'T', '\n'};

/* p[0..n) matches the first min(n, len) bytes of sig. */
static bool prefix_of(const char *p, size_t n, const char *sig, size_t len)
{
    return mem_eq(p, sig, n < len ? n : len);
}

bool proxy_looks_like_header(const char *p, size_t n)
{
    return n > 0 &&
           (prefix_of(p, n, v1_sig, sizeof v1_sig) || prefix_of(p, n, v2_sig, sizeof v2_sig));
}

/* A decimal port 0..65535, no leading zero, no sign. */
static bool port_parse(struct span s, uint16_t *out)
{
    uint64_t v;
    if (s.n == 0 || s.n > 5 || (s.n > 1 && s.p[0] == '0') || !u64_parse(s, &v) || v > 65535)
        return false;
    *out = (uint16_t)v;
    return true;
}

/* The next space-separated word of line[*i..n): exactly one space before
 * the next one (or the end). */
static struct span word(struct span line, size_t *i)
{
    size_t start = *i, k = start;
    while (k < line.n && line.p[k] != ' ')
        k++;
    *i = k < line.n ? k + 1 : k;
    return span_make(line.p + start, k - start);
}

/* "TCP4 src dst sport dport" or "TCP6 ...", after "PROXY ". */
static bool v1_fields(struct span line, struct proxy_header *h)
{
    size_t i = 0;
    struct span proto = word(line, &i);
    bool v4 = span_eq_cstr(proto, "TCP4");
    if (!v4 && !span_eq_cstr(proto, "TCP6"))
        return false;
    struct span src = word(line, &i), dst = word(line, &i);
    struct span sport = word(line, &i), dport = word(line, &i);
    if (i != line.n || line.p[line.n - 1] == ' ')
        return false;
    bool ok = v4 ? net_ip4_parse(src, &h->src) && net_ip4_parse(dst, &h->dst)
                 : net_ip6_parse(src, &h->src) && net_ip6_parse(dst, &h->dst);
    return ok && port_parse(sport, &h->sport) && port_parse(dport, &h->dport);
}

static long v1_parse(const char *p, size_t n, struct proxy_header *out)
{
    size_t max = n < PROXY_V1_MAX ? n : PROXY_V1_MAX;
    size_t cr = 0;
    /* Printable ASCII up to the CR; anything else is broken at once, so a
     * garbage header is not waited for until the timeout. */
    while (cr < max && p[cr] != '\r') {
        if ((unsigned char)p[cr] < 0x20 || (unsigned char)p[cr] > 0x7e)
            return PROXY_BAD;
        cr++;
    }
    if (cr == max)
        return n >= PROXY_V1_MAX ? PROXY_BAD : PROXY_AGAIN;
    if (cr + 2 > PROXY_V1_MAX)
        return PROXY_BAD; /* the LF would be byte 108 */
    if (cr + 1 >= n)
        return PROXY_AGAIN;
    if (p[cr + 1] != '\n')
        return PROXY_BAD;
    struct span line = span_make(p + sizeof v1_sig, cr - sizeof v1_sig);
    struct proxy_header h = {.version = 1};
    if (line.n >= 7 && mem_eq(line.p, "UNKNOWN", 7) && (line.n == 7 || line.p[7] == ' ')) {
        /* The rest of an UNKNOWN line is to be ignored (spec §2.1). */
        h.has_addr = false;
    } else if (v1_fields(line, &h)) {
        h.has_addr = true;
    } else {
        return PROXY_BAD;
    }
    *out = h;
    return (long)(cr + 2);
}

/* The TLVs after the address block: type (1), length (2), value, tiling
 * the rest exactly. */
static bool tlvs_valid(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (n - i < 3)
            return false;
        size_t len = (size_t)p[i + 1] << 8 | p[i + 2];
        if (n - i - 3 < len)
            return false;
        i += 3 + len;
    }
    return true;
}

static long v2_parse(const char *p, size_t n, struct proxy_header *out)
{
    const unsigned char *u = (const unsigned char *)p;
    if (n < PROXY_V2_HEAD)
        return PROXY_AGAIN;
    unsigned version = u[12] >> 4, command = u[12] & 15;
    unsigned family = u[13] >> 4, transport = u[13] & 15;
    size_t len = (size_t)u[14] << 8 | u[15];
    if (version != 2 || command > 1 || family > 3 || transport > 2 || len > PROXY_V2_MAX_LEN)
        return PROXY_BAD;
    if (n < PROXY_V2_HEAD + len)
        return PROXY_AGAIN;
    const unsigned char *a = u + PROXY_V2_HEAD;
    struct proxy_header h = {.version = 2};
    /* LOCAL: the proxy's own connection (a health check): the socket's
     * addresses stand and the block is skipped (spec §2.2). So is the
     * block of PROXY with UNSPEC: nothing is said about the client. */
    if (command == 0 || (family == 0 && transport == 0)) {
        *out = h;
        return (long)(PROXY_V2_HEAD + len);
    }
    /* A family needs a transport, and a datagram flow cannot be what this
     * stream carries. */
    if (family == 0 || transport != 1)
        return PROXY_BAD;
    size_t used = family == 1 ? 12 : family == 2 ? 36 : 216;
    if (len < used || !tlvs_valid(a + used, len - used))
        return PROXY_BAD;
    if (family != 3) { /* AF_UNIX carries no IP address */
        h.has_addr = true;
        if (family == 1) {
            net_addr_from_v4(&h.src, a);
            net_addr_from_v4(&h.dst, a + 4);
        } else {
            mem_copy(h.src.b, a, 16);
            mem_copy(h.dst.b, a + 16, 16);
        }
        h.sport = (uint16_t)(a[used - 4] << 8 | a[used - 3]);
        h.dport = (uint16_t)(a[used - 2] << 8 | a[used - 1]);
    }
    *out = h;
    return (long)(PROXY_V2_HEAD + len);
}

long proxy_parse(const char *p, size_t n, struct proxy_header *out)
{
    if (n == 0)
        return PROXY_AGAIN;
    if (prefix_of(p, n, v1_sig, sizeof v1_sig))
        return n < sizeof v1_sig ? PROXY_AGAIN : v1_parse(p, n, out);
    if (prefix_of(p, n, v2_sig, sizeof v2_sig))
        return n < sizeof v2_sig ? PROXY_AGAIN : v2_parse(p, n, out);
    return PROXY_MISSING;
}

/* SPDX-License-Identifier: MIT */
/*
 * test_proxy_proto.c - proxy_parse() (PROXY protocol v1 and v2) and the
 * netaddr parsers it and --trusted-proxy stand on: valid headers of both
 * versions with their addresses, every cut of a valid header (AGAIN, never
 * a verdict from a prefix), the v1 107-byte bound, malformed headers,
 * things that are no header at all, IPv4/IPv6 text edge cases, CIDR
 * matching across the v4-mapped form. Inputs lie against a guard page, so
 * a read past n faults.
 */
#include "core/netaddr.h"
#include "core/proxy_proto.h"
#include "unit.h"

static long parse(const char *in, size_t n, struct proxy_header *h)
{
    char *p = guarded_copy(in, n);
    long r = proxy_parse(p, n, h);
    guarded_free(p, n);
    return r;
}

static const struct row {
    const char *in;
    long want; /* the length, or a code */
    const char *src;
    unsigned sport;
    const char *why;
} v1_rows[] = {
    {"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\nGET", 45, "192.0.2.1", 56324, "TCP4"},
    {"PROXY TCP6 2001:db8::1 2001:db8::2 1 65535\r\n", 44, "2001:db8::1", 1, "TCP6"},
    {"PROXY TCP6 ::ffff:192.0.2.9 ::1 0 80\r\n", 38, "192.0.2.9", 0, "TCP6 v4-mapped, port 0"},
    {"PROXY UNKNOWN\r\n", 15, NULL, 0, "UNKNOWN"},
    {"PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n", 35, NULL, 0, "UNKNOWN with the rest ignored"},
    {"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443", PROXY_AGAIN, NULL, 0, "no CRLF yet"},
    {"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r", PROXY_AGAIN, NULL, 0, "CR, no LF yet"},
    {"PROX", PROXY_AGAIN, NULL, 0, "a prefix of the signature"},
    {"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\n", PROXY_BAD, NULL, 0,
     "bare LF: a control byte"},
    {"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\r", PROXY_BAD, NULL, 0, "CR CR"},
    {"PROXY TCP4  192.0.2.1 198.51.100.2 1 2\r\n", PROXY_BAD, NULL, 0, "two spaces"},
    {"PROXY TCP4 192.0.2.1 198.51.100.2 1 2 \r\n", PROXY_BAD, NULL, 0, "trailing space"},
    {"PROXY TCP4 192.0.2.1 198.51.100.2 1\r\n", PROXY_BAD, NULL, 0, "a port missing"},
    {"PROXY TCP4 192.0.2.1 198.51.100.2 1 2 3\r\n", PROXY_BAD, NULL, 0, "a word too many"},
    {"PROXY TCP4 192.0.2.1 198.51.100.2 01 2\r\n", PROXY_BAD, NULL, 0, "leading zero in a port"},
    {"PROXY TCP4 192.0.2.1 198.51.100.2 65536 2\r\n", PROXY_BAD, NULL, 0, "port 65536"},
    {"PROXY TCP4 192.0.2.1 198.51.100.2 -1 2\r\n", PROXY_BAD, NULL, 0, "negative port"},
    {"PROXY TCP4 2001:db8::1 198.51.100.2 1 2\r\n", PROXY_BAD, NULL, 0, "IPv6 in TCP4"},
    {"PROXY TCP6 192.0.2.1 2001:db8::2 1 2\r\n", PROXY_BAD, NULL, 0, "IPv4 in TCP6"},
    {"PROXY TCP4 192.0.2.01 198.51.100.2 1 2\r\n", PROXY_BAD, NULL, 0, "leading zero in IPv4"},
    {"PROXY TCP4 192.0.2.256 198.51.100.2 1 2\r\n", PROXY_BAD, NULL, 0, "octet 256"},
    {"PROXY tcp4 192.0.2.1 198.51.100.2 1 2\r\n", PROXY_BAD, NULL, 0, "lower-case protocol"},
    {"PROXY UDP4 192.0.2.1 198.51.100.2 1 2\r\n", PROXY_BAD, NULL, 0, "unknown protocol"},
    {"PROXY UNKNOWNX\r\n", PROXY_BAD, NULL, 0, "UNKNOWN glued to more"},
    {"PROXY \r\n", PROXY_BAD, NULL, 0, "nothing after PROXY"},
    {"PROXY TCP4 192.0.2.1 198.51.100.2 1 2\x01\r\n", PROXY_BAD, NULL, 0, "a control byte"},
    {"PROXY TCP4 192.0.2.1 198.51.100.2 1 \xff\r\n", PROXY_BAD, NULL, 0, "a non-ASCII byte"},
    {"GET / HTTP/1.1\r\n", PROXY_MISSING, NULL, 0, "an HTTP request"},
    {"PROXYTCP4", PROXY_MISSING, NULL, 0, "no space after PROXY"},
    {"proxy TCP4", PROXY_MISSING, NULL, 0, "lower-case PROXY"},
    {"PROPFIND / HTTP/1.1\r\n", PROXY_MISSING, NULL, 0, "a method that starts like PROXY"},
    {"\r\n\r\nGET / HTTP/1.1\r\n", PROXY_MISSING, NULL, 0, "leading CRLFs, then HTTP"},
};

static void check_src(const struct proxy_header *h, const char *want, const char *why)
{
    struct net_addr a;
    CHECK(net_addr_parse(span_make(want, strlen(want)), &a, NULL), why);
    CHECK(h->has_addr, why);
    CHECK_MEM(h->src.b, 16, a.b, 16, why);
}

static void test_v1(void)
{
    for (size_t i = 0; i < ARRAY_LEN(v1_rows); i++) {
        const struct row *r = &v1_rows[i];
        struct proxy_header h = {0};
        long got = parse(r->in, strlen(r->in), &h);
        CHECK_LONG(got, r->want, r->why);
        if (got > 0 && r->src) {
            check_src(&h, r->src, r->why);
            CHECK_LONG(h.sport, r->sport, r->why);
            CHECK_LONG(h.version, 1, r->why);
        } else if (got > 0) {
            CHECK(!h.has_addr, r->why);
        }
    }
    /* The longest legal line is 107 bytes; 108 without CRLF is broken. */
    const char *longest = "PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff "
                          "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n";
    struct proxy_header h;
    CHECK_LONG(parse(longest, strlen(longest), &h), 104, "the longest TCP6 line");
    char big[120];
    memset(big, 'A', sizeof big);
    memcpy(big, "PROXY UNKNOWN ", 14);
    memcpy(big + 105, "\r\n", 2);
    CHECK_LONG(parse(big, 107, &h), 107, "UNKNOWN of exactly 107 bytes");
    memcpy(big + 105, "A\r\n", 3);
    CHECK_LONG(parse(big, 108, &h), PROXY_BAD, "CRLF past byte 107");
    CHECK_LONG(parse(big, 106, &h), PROXY_AGAIN, "106 bytes without CRLF");
    memset(big + 14, 'A', 100);
    CHECK_LONG(parse(big, 107, &h), PROXY_BAD, "107 bytes without CRLF");

    /* Every cut of a valid header waits for more. */
    const char *full = v1_rows[0].in;
    unit_gen_begin();
    for (size_t n = 0; n < 45; n++)
        CHECK_LONG(parse(full, n, &h), PROXY_AGAIN, "a prefix of a v1 header");
    unit_gen_end();
}

static const unsigned char sig[12] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
                                      0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};

/* A v2 header: ver_cmd, fam, then len bytes of block. */
static size_t v2(unsigned char *out, unsigned vc, unsigned fam, const void *block, size_t len)
{
    memcpy(out, sig, 12);
    out[12] = (unsigned char)vc;
    out[13] = (unsigned char)fam;
    out[14] = (unsigned char)(len >> 8);
    out[15] = (unsigned char)len;
    memcpy(out + 16, block, len);
    return 16 + len;
}

static void test_v2(void)
{
    unsigned char buf[2048], block[1100] = {0};
    struct proxy_header h;
    const unsigned char in4[12] = {192, 0, 2, 1, 198, 51, 100, 2, 0xdc, 0x04, 0x01, 0xbb};
    size_t n = v2(buf, 0x21, 0x11, in4, 12);
    CHECK_LONG(parse((char *)buf, n, &h), 28, "v2 PROXY TCP over IPv4");
    check_src(&h, "192.0.2.1", "v2 IPv4 source");
    CHECK_LONG(h.sport, 56324, "v2 source port");
    CHECK_LONG(h.dport, 443, "v2 destination port");
    unit_gen_begin();
    for (size_t k = 0; k < n; k++)
        CHECK_LONG(parse((char *)buf, k, &h), PROXY_AGAIN, "a prefix of a v2 header");
    unit_gen_end();

    unsigned char in6[36] = {0x20, 0x01, 0x0d, 0xb8, [15] = 1, [16] = 0x20, [17] = 1, [35] = 80};
    n = v2(buf, 0x21, 0x21, in6, 36);
    CHECK_LONG(parse((char *)buf, n, &h), 52, "v2 PROXY TCP over IPv6");
    check_src(&h, "2001:db8::1", "v2 IPv6 source");

    /* TLVs after the addresses: must tile the rest exactly. */
    memcpy(block, in4, 12);
    memcpy(block + 12, "\x04\x00\x02xy\x01\x00\x00", 8); /* NOOP "xy", ALPN empty */
    n = v2(buf, 0x21, 0x11, block, 20);
    CHECK_LONG(parse((char *)buf, n, &h), 36, "v2 with two TLVs");
    n = v2(buf, 0x21, 0x11, block, 19);
    CHECK_LONG(parse((char *)buf, n, &h), PROXY_BAD, "a TLV cut short");
    n = v2(buf, 0x21, 0x11, block, 14);
    CHECK_LONG(parse((char *)buf, n, &h), PROXY_BAD, "two stray bytes after the addresses");

    n = v2(buf, 0x20, 0x00, block, 0);
    CHECK_LONG(parse((char *)buf, n, &h), 16, "LOCAL");
    CHECK(!h.has_addr, "LOCAL keeps the socket's address");
    n = v2(buf, 0x20, 0x11, in4, 12);
    CHECK_LONG(parse((char *)buf, n, &h), 28, "LOCAL with an address block (skipped)");
    CHECK(!h.has_addr, "LOCAL ignores the block");
    n = v2(buf, 0x21, 0x00, block, 5);
    CHECK_LONG(parse((char *)buf, n, &h), 21, "PROXY UNSPEC");
    CHECK(!h.has_addr, "UNSPEC has no address");
    n = v2(buf, 0x21, 0x31, block, 216);
    CHECK_LONG(parse((char *)buf, n, &h), 232, "AF_UNIX");
    CHECK(!h.has_addr, "AF_UNIX has no IP address");

    n = v2(buf, 0x11, 0x11, in4, 12);
    CHECK_LONG(parse((char *)buf, n, &h), PROXY_BAD, "version 1 in the binary form");
    n = v2(buf, 0x22, 0x11, in4, 12);
    CHECK_LONG(parse((char *)buf, n, &h), PROXY_BAD, "command 2");
    n = v2(buf, 0x21, 0x41, in4, 12);
    CHECK_LONG(parse((char *)buf, n, &h), PROXY_BAD, "family 4");
    n = v2(buf, 0x21, 0x12, in4, 12);
    CHECK_LONG(parse((char *)buf, n, &h), PROXY_BAD, "a datagram transport");
    n = v2(buf, 0x21, 0x10, in4, 12);
    CHECK_LONG(parse((char *)buf, n, &h), PROXY_BAD, "INET with UNSPEC transport");
    n = v2(buf, 0x21, 0x11, in4, 11);
    CHECK_LONG(parse((char *)buf, n, &h), PROXY_BAD, "IPv4 block too short");
    n = v2(buf, 0x21, 0x21, in6, 35);
    CHECK_LONG(parse((char *)buf, n, &h), PROXY_BAD, "IPv6 block too short");
    n = v2(buf, 0x21, 0x11, block, PROXY_V2_MAX_LEN + 1);
    CHECK_LONG(parse((char *)buf, 16, &h), PROXY_BAD, "a block over the bound, known at once");
    buf[11] = 0x0b;
    CHECK_LONG(parse((char *)buf, 16, &h), PROXY_MISSING, "the signature's last byte wrong");
}

static void test_addr(void)
{
    static const struct {
        const char *in;
        bool ok;
    } rows[] = {
        {"0.0.0.0", true},
        {"255.255.255.255", true},
        {"1.2.3", false},
        {"1.2.3.4.5", false},
        {"1.2.3.04", false},
        {"1..2.3", false},
        {"1.2.3.4 ", false},
        {"::", true},
        {"::1", true},
        {"1::", true},
        {"1:2:3:4:5:6:7:8", true},
        {"1:2:3:4:5:6:7:8:9", false},
        {"1:2:3:4:5:6:7::", true},
        {"::2:3:4:5:6:7:8", true},
        {"1:2:3:4:5:6:7:8::", false},
        {"1::2::3", false},
        {":::", false},
        {":1::", false},
        {"1:", false},
        {"12345::", false},
        {"::ffff:1.2.3.4", true},
        {"1:2:3:4:5:6:1.2.3.4", true},
        {"::1.2.3", false},
        {"fe80::1%eth0", false},
        {"[::1]", false},
        {"", false},
        {"g::", false},
        {"1:2:3:4:5:6:7:1.2.3.4", false},
    };
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        struct net_addr a;
        char *p = guarded_copy(rows[i].in, strlen(rows[i].in));
        CHECK(net_addr_parse(span_make(p, strlen(rows[i].in)), &a, NULL) == rows[i].ok, rows[i].in);
        guarded_free(p, strlen(rows[i].in));
    }
    struct net_addr a, b;
    net_addr_parse(SPAN_LIT("::ffff:192.0.2.1"), &a, NULL);
    net_addr_parse(SPAN_LIT("192.0.2.1"), &b, NULL);
    CHECK_MEM(a.b, 16, b.b, 16, "IPv4 text is stored v4-mapped");
    net_addr_parse(SPAN_LIT("2001:db8:0:0:1:0:0:1"), &a, NULL);
    net_addr_parse(SPAN_LIT("2001:db8::1:0:0:1"), &b, NULL);
    CHECK_MEM(a.b, 16, b.b, 16, ":: expands in the middle");
}

static void test_cidr(void)
{
    struct net_cidr c;
    struct net_addr a;
    CHECK_LONG(net_cidr_parse(SPAN_LIT("10.0.0.0/8"), &c), 0, "an IPv4 prefix");
    CHECK_LONG(c.bits, 104, "IPv4 /8 is /104 of the mapped form");
    net_addr_parse(SPAN_LIT("10.255.0.1"), &a, NULL);
    CHECK(net_cidr_match(&c, &a), "10.255.0.1 in 10/8");
    net_addr_parse(SPAN_LIT("::ffff:10.1.2.3"), &a, NULL);
    CHECK(net_cidr_match(&c, &a), "a v4-mapped client in 10/8");
    net_addr_parse(SPAN_LIT("11.0.0.1"), &a, NULL);
    CHECK(!net_cidr_match(&c, &a), "11.0.0.1 outside 10/8");
    net_addr_parse(SPAN_LIT("::a00:1"), &a, NULL);
    CHECK(!net_cidr_match(&c, &a), "IPv4-compatible ::10.0.0.1 is not IPv4");
    CHECK_LONG(net_cidr_parse(SPAN_LIT("10.0.0.1/8"), &c), NET_CIDR_HOST_BITS, "host bits");
    CHECK_LONG(net_cidr_parse(SPAN_LIT("10.0.0.0/33"), &c), NET_CIDR_BAD, "IPv4 /33");
    CHECK_LONG(net_cidr_parse(SPAN_LIT("10.0.0.0/"), &c), NET_CIDR_BAD, "empty length");
    CHECK_LONG(net_cidr_parse(SPAN_LIT("10.0.0.0/08"), &c), NET_CIDR_BAD, "leading zero");
    CHECK_LONG(net_cidr_parse(SPAN_LIT("::/0"), &c), 0, "everything");
    CHECK(net_cidr_match(&c, &a), "::/0 matches all");
    CHECK_LONG(net_cidr_parse(SPAN_LIT("0.0.0.0/0"), &c), 0, "all IPv4");
    net_addr_parse(SPAN_LIT("2001:db8::1"), &a, NULL);
    CHECK(!net_cidr_match(&c, &a), "0.0.0.0/0 is IPv4 only");
    CHECK_LONG(net_cidr_parse(SPAN_LIT("2001:db8::/33"), &c), 0, "an odd IPv6 length");
    net_addr_parse(SPAN_LIT("2001:db8:7fff::1"), &a, NULL);
    CHECK(net_cidr_match(&c, &a), "inside /33");
    net_addr_parse(SPAN_LIT("2001:db8:8000::1"), &a, NULL);
    CHECK(!net_cidr_match(&c, &a), "outside /33 by the 33rd bit");
    CHECK_LONG(net_cidr_parse(SPAN_LIT("192.0.2.7"), &c), 0, "a bare address");
    CHECK_LONG(c.bits, 128, "a bare IPv4 address is one host");
}

int main(void)
{
    test_v1();
    test_v2();
    test_addr();
    test_cidr();
    return unit_done();
}

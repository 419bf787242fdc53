/* SPDX-License-Identifier: MIT */
/*
 * test_realip.c - realip_pick(): the right-most untrusted address of an
 * X-Forwarded-For list, across several field lines, only from a trusted
 * peer; malformed elements among those read make the header ignored, those
 * left of the client are never looked at.
 */
#include "core/realip.h"
#include "unit.h"

static struct net_cidr trusted[2];

static void row(const char *peer, const char *v1, const char *v2, int want, const char *client,
                const char *why)
{
    struct http_field f[4] = {
        {SPAN_LIT("Host"), SPAN_LIT("x")},
        {SPAN_LIT("X-Forwarded-For"), {NULL, 0}},
        {SPAN_LIT("Accept"), SPAN_LIT("*/*")},
        {SPAN_LIT("x-forwarded-for"), {NULL, 0}},
    };
    char *p1 = guarded_copy(v1, strlen(v1)), *p2 = v2 ? guarded_copy(v2, strlen(v2)) : NULL;
    f[1].value = span_make(p1, strlen(v1));
    size_t n = 3;
    if (v2) {
        f[3].value = span_make(p2, strlen(v2));
        n = 4;
    }
    struct net_addr pa, out, want_a;
    net_addr_parse(span_make(peer, strlen(peer)), &pa, NULL);
    enum realip_verdict got =
        realip_pick(f, n, SPAN_LIT("X-Forwarded-For"), trusted, ARRAY_LEN(trusted), &pa, &out);
    CHECK_LONG(got, want, why);
    if (got == REALIP_FOUND && client) {
        net_addr_parse(span_make(client, strlen(client)), &want_a, NULL);
        CHECK_MEM(out.b, 16, want_a.b, 16, why);
    }
    guarded_free(p1, strlen(v1));
    if (v2)
        guarded_free(p2, strlen(v2));
}

int main(void)
{
    net_cidr_parse(SPAN_LIT("10.0.0.0/8"), &trusted[0]);
    net_cidr_parse(SPAN_LIT("2001:db8::/32"), &trusted[1]);
    row("10.0.0.1", "203.0.113.7", NULL, REALIP_FOUND, "203.0.113.7", "one hop");
    row("10.0.0.1", "198.51.100.1, 203.0.113.7, 10.1.1.1", NULL, REALIP_FOUND, "203.0.113.7",
        "right-most untrusted, trusted hops skipped");
    row("192.0.2.1", "203.0.113.7", NULL, REALIP_NONE, NULL, "an untrusted peer's header");
    row("10.0.0.1", "garbage, 203.0.113.7", NULL, REALIP_FOUND, "203.0.113.7",
        "left of the client is never read");
    row("10.0.0.1", "203.0.113.7, 10.0.0.9:80", NULL, REALIP_BAD, NULL, "a port is malformed");
    row("10.0.0.1", "203.0.113.7,", NULL, REALIP_BAD, NULL, "an empty element");
    row("10.0.0.1", "", NULL, REALIP_BAD, NULL, "an empty value");
    row("10.0.0.1", "[2001:db8::1]", NULL, REALIP_BAD, NULL, "brackets");
    row("10.0.0.1", "unknown", NULL, REALIP_BAD, NULL, "RFC 7239 'unknown' is not an address");
    row("10.0.0.1", "10.0.0.2,\t10.0.0.3 ", NULL, REALIP_FOUND, "10.0.0.2",
        "all trusted: the left-most");
    row("::ffff:10.0.0.1", "2001:db8::5, 2001:db9::1", NULL, REALIP_FOUND, "2001:db9::1",
        "a v4-mapped peer, an IPv6 client");
    row("10.0.0.1", "203.0.113.7", "10.2.2.2", REALIP_FOUND, "203.0.113.7",
        "two field lines form one list");
    row("10.0.0.1", "10.3.3.3", "198.51.100.9", REALIP_FOUND, "198.51.100.9",
        "the later line is nearer");
    row("10.0.0.1", "1.2.3.04", NULL, REALIP_BAD, NULL, "a leading zero");
    return unit_done();
}

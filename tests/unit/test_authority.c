/* SPDX-License-Identifier: MIT */
/*
 * test_authority.c - authority_host(): names, IPv4, bracketed IPv6, ports,
 * and everything a redirect must never take from a Host (userinfo,
 * percent-escapes, paths, backslashes, '_', empty parts, long ports, a
 * host that does not fit). Inputs lie against guard pages.
 */
#include "core/authority.h"
#include "unit.h"

static const struct row {
    const char *in;
    const char *want; /* NULL: refused */
    bool ipv6;
} rows[] = {
    {"localhost", "localhost", false},
    {"localhost:8080", "localhost", false},
    {"a.test", "a.test", false},
    {"A-b.Example.ORG:443", "A-b.Example.ORG", false},
    {"127.0.0.1", "127.0.0.1", false},
    {"127.0.0.1:1", "127.0.0.1", false},
    {"[::1]", "::1", true},
    {"[::1]:8443", "::1", true},
    {"[2001:db8::a:1.2.3.4]", "2001:db8::a:1.2.3.4", true},
    {"", NULL, false},
    {":80", NULL, false},
    {"localhost:", NULL, false},
    {"localhost:123456", NULL, false},
    {"localhost:8a", NULL, false},
    {"user@localhost", NULL, false},
    {"local%68ost", NULL, false},
    {"evil.example/x", NULL, false},
    {"evil.example\\x", NULL, false},
    {"a_b.test", NULL, false},
    {"a.test:80:80", NULL, false},
    {"[::1", NULL, false},
    {"[]", NULL, false},
    {"[:]", NULL, false},
    {"[::g]", NULL, false},
    {"[::1]x", NULL, false},
    {"[::1]:", NULL, false},
    {"[v1.x]", NULL, false},
    {"a b", NULL, false},
};

static void test_rows(void)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t n = strlen(rows[i].in);
        char *in = guarded_copy(rows[i].in, n);
        char out[64];
        bool ipv6 = !rows[i].ipv6;
        long r = authority_host(span_make(in, n), out, sizeof out, &ipv6);
        if (rows[i].want) {
            CHECK_LONG(r, (long)strlen(rows[i].want), rows[i].in);
            CHECK(r >= 0 && strcmp(out, rows[i].want) == 0, rows[i].in);
            CHECK(ipv6 == rows[i].ipv6, rows[i].in);
        } else {
            CHECK_LONG(r, -1, rows[i].in);
        }
        guarded_free(in, n);
    }
}

/* The host must fit with its NUL: cap - 1 bytes at most. */
static void test_capacity(void)
{
    char out[6];
    bool ipv6;
    CHECK_LONG(authority_host(span_make("abcde", 5), out, sizeof out, &ipv6), 5, "fits exactly");
    CHECK_LONG(authority_host(span_make("abcdef", 6), out, sizeof out, &ipv6), -1, "one too long");
    CHECK_LONG(authority_host(span_make("[::1]", 5), out, 3, &ipv6), -1, "IPv6 too long");
}

int main(void)
{
    test_rows();
    test_capacity();
    return unit_done();
}

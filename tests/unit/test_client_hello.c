/* SPDX-License-Identifier: MIT */
/*
 * test_client_hello.c - client_hello_alpn_offers() and client_hello_sni(),
 * which read a ClientHello's ALPN and server_name extensions as the client
 * sent them (the tls-alpn-01 decision of issue 35, the site's certificate):
 * well-formed lists with the protocol first, last, absent or only as a
 * prefix; lists whose length does not cover the rest exactly, with an empty
 * name or a name that overruns; every cut of a valid list; server_name lists
 * with the host_name after another type, empty, overrunning. Inputs lie
 * against a guard page, so a read past len faults.
 */
#include "core/client_hello.h"
#include "unit.h"

static bool offers(const char *in, size_t n, const char *proto)
{
    unsigned char *p = guarded_copy(in, n);
    bool r = client_hello_alpn_offers(p, n, span_make(proto, strlen(proto)));
    guarded_free(p, n);
    return r;
}

#define B(lit) lit, sizeof(lit) - 1

static const struct alpn_row {
    const char *in;
    size_t n;
    const char *proto;
    bool want;
    const char *why;
} alpn_rows[] = {
    {B("\x00\x0b\x0a"
       "acme-tls/1"),
     "acme-tls/1", true, "acme-tls/1 alone (what a validator sends)"},
    {B("\x00\x0c\x02h2\x08http/1.1"), "h2", true, "the first of two"},
    {B("\x00\x0c\x02h2\x08http/1.1"), "http/1.1", true, "the last of two"},
    {B("\x00\x0c\x02h2\x08http/1.1"), "acme-tls/1", false, "not offered"},
    {B("\x00\x0e\x02h2\x0a"
       "acme-tls/1"),
     "acme-tls/1", true, "after h2"},
    {B("\x00\x0c\x0b"
       "acme-tls/12"),
     "acme-tls/1", false, "a longer name that starts with it"},
    {B("\x00\x0a\x09"
       "acme-tls/"),
     "acme-tls/1", false, "a prefix of it"},
    {B("\x00\x0b\x0a"
       "ACME-TLS/1"),
     "acme-tls/1", false, "byte for byte: no case folding"},
    {B("\x00\x0c\x0a"
       "acme-tls/1"),
     "acme-tls/1", false, "the list length claims one byte more"},
    {B("\x00\x0a\x0a"
       "acme-tls/1"),
     "acme-tls/1", false, "the list length claims one byte less"},
    {B("\x00\x0c\x0a"
       "acme-tls/1\x00"),
     "acme-tls/1", false, "an empty name after it (RFC 7301 forbids one)"},
    {B("\x00\x0c\x00\x0a"
       "acme-tls/1"),
     "acme-tls/1", false, "an empty name before it"},
    {B("\x00\x0c\x0a"
       "acme-tls/1\x05"),
     "acme-tls/1", false, "a name that runs past the end after it"},
    {B("\x00\x0b\x0b"
       "acme-tls/1"),
     "acme-tls/1", false, "its own length runs past the end"},
    {B("\x00\x08\x02h2\x05http"), "h2", false,
     "after it, a name one byte longer than what is left"},
    {B("\x01\x0b\x0a"
       "acme-tls/1"),
     "acme-tls/1", false, "the high byte of the list length"},
    {B(""), "acme-tls/1", false, "no body"},
    {B("\x00"), "acme-tls/1", false, "one byte"},
    {B("\x00\x00"), "acme-tls/1", false, "an empty list (RFC 7301: at least one name)"},
    {B("\x00\x02\x01x"), "x", true, "a one-byte name"},
};

static void test_alpn(void)
{
    for (size_t i = 0; i < ARRAY_LEN(alpn_rows); i++) {
        const struct alpn_row *r = &alpn_rows[i];
        CHECK(offers(r->in, r->n, r->proto) == r->want, r->why);
    }
    /* The longest name: 255 bytes, offered last after 255 one-byte names. */
    static char big[2 + 255 * 2 + 256];
    size_t n = 2;
    for (int k = 0; k < 255; k++) {
        big[n++] = 1;
        big[n++] = (char)('a' + k % 26);
    }
    big[n++] = (char)255;
    memset(big + n, 'z', 255);
    n += 255;
    big[0] = (char)((n - 2) >> 8);
    big[1] = (char)(n - 2);
    char name[256];
    memset(name, 'z', 255);
    name[255] = '\0';
    CHECK(offers(big, n, name), "a 255-byte name after 255 others");
    CHECK(offers(big, n, "q"), "a one-byte name among many");
    name[254] = '\0';
    CHECK(!offers(big, n, name), "254 bytes of a 255-byte name");
    /* Every cut of a valid list is malformed: nothing is offered. */
    static const char whole[] = "\x00\x0e\x02h2\x0a"
                                "acme-tls/1";
    unit_gen_begin();
    for (size_t cut = 0; cut < sizeof whole - 1; cut++)
        CHECK(!offers(whole, cut, "acme-tls/1") && !offers(whole, cut, "h2"), "a cut list");
    unit_gen_end();
    CHECK(offers(whole, sizeof whole - 1, "acme-tls/1"), "the whole list");
}

static bool sni(const char *in, size_t n, struct span *name, size_t *at)
{
    unsigned char *p = guarded_copy(in, n);
    bool r = client_hello_sni(p, n, name);
    *at = r ? (size_t)((const unsigned char *)name->p - p) : 0;
    guarded_free(p, n);
    return r;
}

static const struct sni_row {
    const char *in;
    size_t n;
    long at; /* where the name starts; -1: none */
    size_t len;
    const char *why;
} sni_rows[] = {
    {B("\x00\x09\x00\x00\x06"
       "a.test"),
     5, 6, "one host_name"},
    {B("\x00\x10\x07\x00\x04zzzz\x00\x00\x06"
       "a.test"),
     12, 6, "after an entry of another type"},
    {B("\x00\x12\x00\x00\x06"
       "a.test\x00\x00\x06"
       "b.test"),
     5, 6, "the first of two host_names"},
    {B("\x00\x03\x00\x00\x00"), -1, 0, "an empty host_name"},
    {B("\x00\x09\x00\x00\x07"
       "a.test"),
     -1, 0, "a name that runs past the end"},
    {B("\x00\x08\x00\x00\x06"
       "a.test"),
     -1, 0, "the list length claims less"},
    {B("\x00\x0a\x00\x00\x06"
       "a.test"),
     -1, 0, "the list length claims more"},
    {B("\x00\x09\x07\x00\x09zzzz\x00\x00"), -1, 0, "another type that overruns"},
    {B("\x00\x07\x07\x00\x04zzzz"), -1, 0, "no host_name"},
    {B("\x00"), -1, 0, "one byte"},
    {B(""), -1, 0, "no body"},
};

static void test_sni(void)
{
    for (size_t i = 0; i < ARRAY_LEN(sni_rows); i++) {
        const struct sni_row *r = &sni_rows[i];
        struct span name = {0};
        size_t at;
        bool ok = sni(r->in, r->n, &name, &at);
        CHECK_LONG(ok ? (long)at : -1, r->at, r->why);
        if (ok)
            CHECK_LONG((long)name.n, (long)r->len, r->why);
    }
    static const char whole[] = "\x00\x09\x00\x00\x06"
                                "a.test";
    unit_gen_begin();
    for (size_t cut = 0; cut < sizeof whole - 1; cut++) {
        struct span name;
        size_t at;
        CHECK(!sni(whole, cut, &name, &at), "a cut list names nothing");
    }
    unit_gen_end();
}

int main(void)
{
    test_alpn();
    test_sni();
    return unit_done();
}

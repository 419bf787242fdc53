/* SPDX-License-Identifier: MIT */
/*
 * test_vhost.c - the key of an authority (case, port, one trailing dot,
 * IPv6 literals, what does not fit), the names a site may have, duplicates
 * across sites, and lookups: exact names, one-label wildcards, an exact
 * name over a wildcard, and everything that must match nothing. Inputs lie
 * against guard pages.
 */
#include "core/vhost.h"
#include "unit.h"

static const struct key_row {
    const char *in;
    const char *want; /* NULL: no key */
} key_rows[] = {
    {"example.com", "example.com"},
    {"Example.COM", "example.com"},
    {"example.com:8080", "example.com"},
    {"example.com.", "example.com"},
    {"example.com.:443", "example.com"},
    {"example.com..", "example.com."}, /* one dot only */
    {"127.0.0.1:80", "127.0.0.1"},
    {"[::1]", "[::1]"},
    {"[::1]:8443", "[::1]"},
    {"[2001:DB8::A]", "[2001:db8::a]"},
    {"[::1", NULL},
    {"", NULL},
    {":80", NULL},
    {".", "."},
    {"a", "a"},
};

static void test_keys(void)
{
    for (size_t i = 0; i < ARRAY_LEN(key_rows); i++) {
        const struct key_row *r = &key_rows[i];
        size_t n = strlen(r->in);
        char *in = guarded_copy(r->in, n);
        char out[300];
        long got = vhost_host_key(span_make(in, n), out, sizeof out);
        if (r->want)
            CHECK_MEM(out, got < 0 ? 0 : (size_t)got, r->want, strlen(r->want), r->in);
        else
            CHECK_LONG(got, -1, r->in);
        guarded_free(in, n);
    }
    /* 253 bytes fit, a longer host has no key; cap bounds what is written. */
    char big[400], out[300];
    memset(big, 'a', sizeof big);
    CHECK_LONG(vhost_host_key(span_make(big, 253), out, sizeof out), 253, "253 bytes");
    CHECK_LONG(vhost_host_key(span_make(big, 256), out, sizeof out), -1, "256 bytes");
    CHECK_LONG(vhost_host_key(span_make(big, 20), out, 10), -1, "does not fit cap");
}

static const struct name_row {
    const char *name;
    bool ok;
} name_rows[] = {
    {"example.com", true},
    {"EXAMPLE.com.", true},
    {"a-b.c0", true},
    {"localhost", true},
    {"192.0.2.1", true},
    {"[::1]", true},
    {"[2001:db8::1]", true},
    {"*.example.com", true},
    {"*.com", true},
    {"", false},
    {".", false},
    {"*", false},
    {"*.", false},
    {"a..b", false},
    {".a", false},
    {"a_b.test", false},
    {"a b", false},
    {"*.*.example.com", false},
    {"a.*.example.com", false},
    {"x*.example.com", false},
    {"[::1", false},
    {"[::g]", false},
    {"[]", false},
    {"example.com:80", false},
    {"exa%6dple.com", false},
};

static void test_names(void)
{
    static struct vhost_table t;
    for (size_t i = 0; i < ARRAY_LEN(name_rows); i++) {
        memset(&t, 0, sizeof t);
        size_t n = strlen(name_rows[i].name);
        char *in = guarded_copy(name_rows[i].name, n);
        vhost_error e = vhost_add(&t, span_make(in, n), 0);
        CHECK((e == NULL) == name_rows[i].ok, name_rows[i].name);
        CHECK_LONG(t.n, name_rows[i].ok ? 1 : 0, name_rows[i].name);
        guarded_free(in, n);
    }
    /* A label of 63 bytes is a name, one of 64 is not. */
    char label[70];
    memset(&t, 0, sizeof t);
    memset(label, 'x', sizeof label);
    CHECK(vhost_add(&t, span_make(label, 63), 0) == NULL, "63-byte label");
    CHECK(vhost_add(&t, span_make(label, 64), 0) != NULL, "64-byte label");
}

static int lookup(const struct vhost_table *t, const char *host)
{
    char key[300];
    size_t n = strlen(host);
    char *in = guarded_copy(host, n);
    long k = vhost_host_key(span_make(in, n), key, sizeof key);
    guarded_free(in, n);
    if (k < 0)
        return -2;
    char *g = guarded_copy(key, (size_t)k);
    int site = vhost_lookup(t, span_make(g, (size_t)k));
    guarded_free(g, (size_t)k);
    return site;
}

static void add(struct vhost_table *t, const char *name, unsigned site)
{
    CHECK(vhost_add(t, span_make(name, strlen(name)), site) == NULL, name);
}

static void test_lookups(void)
{
    static struct vhost_table t;
    memset(&t, 0, sizeof t);
    add(&t, "a.test", 0);
    add(&t, "www.a.test", 0);
    add(&t, "*.b.test", 1);
    add(&t, "special.b.test", 2);
    add(&t, "B.test", 3);
    add(&t, "[::1]", 4);
    add(&t, "127.0.0.1", 5);
    add(&t, "x", 6);
    unsigned dup = 99, other = 99;
    CHECK(vhost_sort(&t, &dup, &other), "no duplicates");
    CHECK_LONG(lookup(&t, "a.test"), 0, "exact");
    CHECK_LONG(lookup(&t, "A.TEST:8080"), 0, "case and port");
    CHECK_LONG(lookup(&t, "www.a.test."), 0, "trailing dot");
    CHECK_LONG(lookup(&t, "other.a.test"), -1, "no wildcard for a.test");
    CHECK_LONG(lookup(&t, "one.b.test"), 1, "wildcard");
    CHECK_LONG(lookup(&t, "special.b.test"), 2, "an exact name wins over the wildcard");
    CHECK_LONG(lookup(&t, "b.test"), 3, "the wildcard does not match the name itself");
    CHECK_LONG(lookup(&t, "two.one.b.test"), -1, "the wildcard matches one label only");
    CHECK_LONG(lookup(&t, ".b.test"), -1, "an empty first label");
    CHECK_LONG(lookup(&t, "[::1]:443"), 4, "IPv6 literal");
    CHECK_LONG(lookup(&t, "127.0.0.1"), 5, "IPv4");
    CHECK_LONG(lookup(&t, "x"), 6, "one label");
    CHECK_LONG(lookup(&t, "y"), -1, "unknown");
    CHECK_LONG(lookup(&t, "a.tes"), -1, "a prefix");
    CHECK_LONG(lookup(&t, "a.testx"), -1, "longer");
    CHECK_LONG(lookup(&t, "*.b.test"), 1, "the wildcard's own text");
    CHECK_LONG(vhost_lookup(&t, span_make("", 0)), -1, "empty key");

    /* Two sites claiming one name (case and trailing dot aside). */
    add(&t, "WWW.A.TEST.", 7);
    CHECK(!vhost_sort(&t, &dup, &other), "duplicate found");
    CHECK_SPAN(vhost_name_text(&t, dup), "www.a.test", "which name");
    CHECK(other == 0 || other == 7, "the other site");
}

/* Every name the table holds is found again, whatever the insertion order. */
static void test_generated(void)
{
    static struct vhost_table t;
    memset(&t, 0, sizeof t);
    char names[200][16];
    unit_gen_begin();
    for (unsigned i = 0; i < 200; i++) {
        unsigned v = (i * 7919u) % 200u;
        snprintf(names[i], sizeof names[i], "h%u.t%u", v, v % 7);
        CHECK(vhost_add(&t, span_make(names[i], strlen(names[i])), i % 64) == NULL, names[i]);
    }
    unsigned dup, other;
    CHECK(vhost_sort(&t, &dup, &other), "distinct");
    for (unsigned i = 0; i < 200; i++)
        CHECK_LONG(lookup(&t, names[i]), (long)(i % 64), names[i]);
    unit_gen_end();
}

int main(void)
{
    test_keys();
    test_names();
    test_lookups();
    test_generated();
    return unit_done();
}

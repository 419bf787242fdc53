/* SPDX-License-Identifier: MIT */
/*
 * test_target.c - target_split(), target_host_valid() and target_normalize()
 * against one row per rule of target.h and DESIGN.md §2: each request-target
 * form, each decoding error, climbing, the dotfile rule and its .well-known
 * exception, the verdict order, and the output limit at cap and cap - 1.
 * Every input is placed against a guard page.
 */
#include "core/target.h"
#include "unit.h"

#define NONE NULL /* the span is empty / absent */

static const struct split_row {
    const char *in;
    int want;
    enum target_form form;
    const char *authority, *path, *query; /* query NULL: no '?' */
    const char *why;
} split_rows[] = {
    {"/", 0, TARGET_ORIGIN, NONE, "/", NONE, "origin-form root"},
    {"/a/b", 0, TARGET_ORIGIN, NONE, "/a/b", NONE, "origin-form path"},
    {"/a?b=c", 0, TARGET_ORIGIN, NONE, "/a", "b=c", "origin-form with query"},
    {"/a?", 0, TARGET_ORIGIN, NONE, "/a", "", "empty query"},
    {"/?x?y", 0, TARGET_ORIGIN, NONE, "/", "x?y", "query up to the end, '?' kept"},
    {"//a", 0, TARGET_ORIGIN, NONE, "//a", NONE, "'//' is a path here, not an authority"},
    {"/%2e%2e/x", 0, TARGET_ORIGIN, NONE, "/%2e%2e/x", NONE, "split does not decode"},
    {"*", 0, TARGET_ASTERISK, NONE, "*", NONE, "asterisk-form"},
    {"http://h/x", 0, TARGET_ABSOLUTE, "h", "/x", NONE, "absolute-form"},
    {"HTTPS://h:443/x?q", 0, TARGET_ABSOLUTE, "h:443", "/x", "q", "https, upper-case scheme"},
    {"HtTp://h", 0, TARGET_ABSOLUTE, "h", "/", NONE, "empty path is '/'"},
    {"http://h?q", 0, TARGET_ABSOLUTE, "h", "/", "q", "empty path with query"},
    {"http://[::1]:8080/", 0, TARGET_ABSOLUTE, "[::1]:8080", "/", NONE, "IPv6 literal"},
    {"http://h:/", 0, TARGET_ABSOLUTE, "h:", "/", NONE, "empty port"},
    {"http://a.b%41c/", 0, TARGET_ABSOLUTE, "a.b%41c", "/", NONE, "pct-encoded reg-name"},

    {"", -400, 0, NONE, NONE, NONE, "empty target"},
    {"/a#b", -400, 0, NONE, NONE, NONE, "fragment"},
    {"/a?b#", -400, 0, NONE, NONE, NONE, "fragment after the query"},
    {"#", -400, 0, NONE, NONE, NONE, "only a fragment"},
    {"http://h/#x", -400, 0, NONE, NONE, NONE, "fragment in absolute-form"},
    {"a", -400, 0, NONE, NONE, NONE, "relative path"},
    {"../x", -400, 0, NONE, NONE, NONE, "relative climb"},
    {"**", -400, 0, NONE, NONE, NONE, "two asterisks"},
    {"*/", -400, 0, NONE, NONE, NONE, "asterisk then path"},
    {"ftp://h/x", -400, 0, NONE, NONE, NONE, "other scheme"},
    {"httpx://h/x", -400, 0, NONE, NONE, NONE, "scheme prefix"},
    {"http:/h/x", -400, 0, NONE, NONE, NONE, "one slash"},
    {"http:h", -400, 0, NONE, NONE, NONE, "no slashes"},
    {"http://", -400, 0, NONE, NONE, NONE, "no authority"},
    {"http:///x", -400, 0, NONE, NONE, NONE, "empty host"},
    {"http://:80/x", -400, 0, NONE, NONE, NONE, "empty host with port"},
    {"http://u@h/x", -400, 0, NONE, NONE, NONE, "userinfo"},
    {"http://u:p@h/x", -400, 0, NONE, NONE, NONE, "userinfo with password"},
    {"http://@h/x", -400, 0, NONE, NONE, NONE, "empty userinfo"},
    {"http://h:x/", -400, 0, NONE, NONE, NONE, "non-digit port"},
    {"http://h\\x/", -400, 0, NONE, NONE, NONE, "backslash in host"},
    {"http://[::1/", -400, 0, NONE, NONE, NONE, "unclosed IP-literal"},
    {"http://h%zz/", -400, 0, NONE, NONE, NONE, "bad escape in host"},
};

static void check_split_span(struct span got, const char *want, const char *why)
{
    if (want)
        CHECK_SPAN(got, want, why);
    else
        CHECK_LONG(got.n, 0, why);
}

static void test_split(void)
{
    for (size_t i = 0; i < ARRAY_LEN(split_rows); i++) {
        const struct split_row *r = &split_rows[i];
        size_t n = strlen(r->in);
        char *p = guarded_copy(r->in, n);
        struct target t;
        CHECK_LONG(target_split(span_make(p, n), &t), r->want, r->why);
        if (r->want == 0) {
            CHECK_LONG(t.form, r->form, r->why);
            check_split_span(t.authority, r->authority, r->why);
            check_split_span(t.path, r->path, r->why);
            CHECK_LONG(t.has_query, r->query != NULL, r->why);
            check_split_span(t.query, r->query, r->why);
        }
        guarded_free(p, n);
    }
}

static const struct host_row {
    const char *in;
    bool want;
    const char *why;
} host_rows[] = {
    {"example.com", true, "reg-name"},
    {"example.com:8080", true, "reg-name and port"},
    {"example.com:", true, "empty port"},
    {"", true, "empty host"},
    {":80", true, "empty host with port"},
    {"127.0.0.1", true, "IPv4 (as reg-name)"},
    {"a_b~c-d.e!$&'()*+,;=", true, "unreserved and sub-delims"},
    {"ex%41mple", true, "pct-encoded"},
    {"[::1]", true, "IPv6 loopback"},
    {"[::1]:80", true, "IPv6 and port"},
    {"[::]", true, "IPv6 all zeros"},
    {"[1:2:3:4:5:6:7:8]", true, "IPv6 eight groups"},
    {"[1::8]", true, "IPv6 elision in the middle"},
    {"[1:2:3:4:5:6:7::]", true, "IPv6 elision at the end"},
    {"[::2:3:4:5:6:7:8]", true, "IPv6 elision at the start"},
    {"[::ffff:1.2.3.4]", true, "IPv4-mapped IPv6"},
    {"[1:2:3:4:5:6:1.2.3.4]", true, "IPv6 with IPv4 tail, no elision"},
    {"[fe80::ABCD]", true, "upper-case hex"},
    {"[v1.x]", true, "IPvFuture"},
    {"[vF.a:b!]", true, "IPvFuture with ':' and sub-delims"},

    {"a b", false, "SP"},
    {"a@b", false, "userinfo"},
    {"a/b", false, "slash"},
    {"a:b", false, "non-digit port"},
    {"a:1:2", false, "two colons"},
    {"ex%4", false, "short escape"},
    {"ex%zz", false, "non-hex escape"},
    {"\x80", false, "obs-text"},
    {"a\"b", false, "DQUOTE"},
    {"[::1", false, "unclosed bracket"},
    {"[]", false, "empty IP-literal"},
    {"[::1]x", false, "junk after the literal"},
    {"[::1]:x", false, "non-digit port after literal"},
    {"[1:2:3:4:5:6:7:8:9]", false, "nine groups"},
    {"[1:2:3:4:5:6:7]", false, "seven groups without elision"},
    {"[1::2::3]", false, "two elisions"},
    {"[12345::]", false, "five hex digits"},
    {"[:1]", false, "leading single colon"},
    {"[1:]", false, "trailing single colon"},
    {"[1:2:3:4:5:6:7:8::]", false, "elision with eight groups"},
    {"[::ffff:1.2.3.256]", false, "IPv4 octet above 255"},
    {"[::ffff:1.2.3]", false, "IPv4 with three parts"},
    {"[::ffff:01.2.3.4]", false, "IPv4 octet with leading zero"},
    {"[::1.2.3.4:1]", false, "IPv4 not last"},
    {"[::1%25eth0]", false, "zone id"},
    {"[vz.x]", false, "IPvFuture without hex version"},
    {"[v1.]", false, "IPvFuture without address"},
    {"[v1x]", false, "IPvFuture without dot"},
    {"[v1.a/b]", false, "IPvFuture with slash"},
    {"[example.com]", false, "reg-name in brackets"},
};

static void test_host(void)
{
    for (size_t i = 0; i < ARRAY_LEN(host_rows); i++) {
        size_t n = strlen(host_rows[i].in);
        char *p = guarded_copy(host_rows[i].in, n);
        CHECK_LONG(target_host_valid(span_make(p, n)), host_rows[i].want, host_rows[i].why);
        guarded_free(p, n);
    }
}

#define TS  TARGET_TRAILING_SLASH
#define BIG 4096

static const struct norm_row {
    const char *in;
    size_t n; /* 0: strlen(in) */
    size_t cap;
    long want;
    const char *out;
    unsigned flags;
    const char *why;
} norm_rows[] = {
    {"/", 0, BIG, 0, "", TS, "root"},
    {"/a", 0, BIG, 1, "a", 0, "one segment"},
    {"/a/", 0, BIG, 1, "a", TS, "trailing slash"},
    {"/a/b", 0, BIG, 3, "a/b", 0, "two segments"},
    {"//a", 0, BIG, 1, "a", 0, "leading empty segment dropped"},
    {"/a//b", 0, BIG, 3, "a/b", 0, "empty segment dropped"},
    {"/a//", 0, BIG, 1, "a", TS, "two trailing slashes"},
    {"/./a", 0, BIG, 1, "a", 0, "leading '.' dropped"},
    {"/./", 0, BIG, 0, "", TS, "'/./' is the root"},
    {"/a/./b", 0, BIG, 3, "a/b", 0, "'.' dropped"},
    {"/a/.", 0, BIG, 1, "a", TS, "trailing '/.' is a directory form"},
    {"/a/b/..", 0, BIG, 1, "a", TS, "trailing '/..' is a directory form"},
    {"/a/..", 0, BIG, 0, "", TS, "back to the root"},
    {"/a/../b", 0, BIG, 1, "b", 0, "'..' pops"},
    {"/a/b/../../c", 0, BIG, 1, "c", 0, "'..' pops twice"},
    {"/%2e", 0, BIG, 0, "", TS, "decoded '.' at the end"},
    {"/a/%2e%2E", 0, BIG, 0, "", TS, "decoded '..' at the end"},
    {"/%41%62", 0, BIG, 2, "Ab", 0, "decoding"},
    {"/%25", 0, BIG, 1, "%", 0, "%25 decodes to '%'"},
    {"/%2525", 0, BIG, 3, "%25", 0, "decoded once only"},
    {"/%252e%252e/", 0, BIG, 6, "%2e%2e", TS, "double-encoded dots stay literal"},
    {"/%20%ff", 0, BIG, 2, " \xff", 0, "SP and high byte"},
    {"/a%2Cb", 0, BIG, 3, "a,b", 0, "encoded comma"},
    {"/a.b/c.", 0, BIG, 6, "a.b/c.", 0, "dots inside or at the end of a name"},
    {"/.well-known/acme-challenge/x", 0, BIG, 28, ".well-known/acme-challenge/x", 0,
     ".well-known exception"},
    {"/.well-known", 0, BIG, 11, ".well-known", 0, ".well-known alone"},
    {"/.well-known/", 0, BIG, 11, ".well-known", TS, ".well-known directory"},
    {"/%2ewell-known/x", 0, BIG, 13, ".well-known/x", 0, "encoded .well-known"},
    {"//.well-known/x", 0, BIG, 13, ".well-known/x", 0, "first remaining segment"},
    {"/a/../.well-known/x", 0, BIG, 13, ".well-known/x", 0, "first after a pop"},
    {"/.x/../y", 0, BIG, 1, "y", 0, "a popped dot segment is no longer there"},
    {"/a/.x/..", 0, BIG, 1, "a", TS, "popped dot segment at the end"},

    /* 400: decoding */
    {"a", 0, BIG, -400, NULL, 0, "no leading '/'"},
    {"", 0, BIG, -400, NULL, 0, "empty path"},
    {"*", 0, BIG, -400, NULL, 0, "asterisk"},
    {"/%00", 0, BIG, -400, NULL, 0, "%00"},
    {"/a\0b", 4, BIG, -400, NULL, 0, "raw NUL"},
    {"/a%2Fb", 0, BIG, -400, NULL, 0, "%2F"},
    {"/a%2fb", 0, BIG, -400, NULL, 0, "%2f"},
    {"/..%2fx", 0, BIG, -400, NULL, 0, "encoded slash after dots"},
    {"/a%", 0, BIG, -400, NULL, 0, "'%' at the end"},
    {"/a%0", 0, BIG, -400, NULL, 0, "'%' and one digit at the end"},
    {"/a%0/", 0, BIG, -400, NULL, 0, "'%' and one digit before '/'"},
    {"/a%g0", 0, BIG, -400, NULL, 0, "non-hex first digit"},
    {"/a%0g", 0, BIG, -400, NULL, 0, "non-hex second digit"},
    {"/a% 1", 0, BIG, -400, NULL, 0, "SP after '%'"},
    {"/%%30", 0, BIG, -400, NULL, 0, "'%' is not decoded twice"},

    /* 400: climbing */
    {"/..", 0, BIG, -400, NULL, 0, "'..' at the root"},
    {"/../x", 0, BIG, -400, NULL, 0, "climb first"},
    {"/a/../../x", 0, BIG, -400, NULL, 0, "climb after a pop"},
    {"/%2e%2e/x", 0, BIG, -400, NULL, 0, "encoded '..'"},
    {"/.%2e/x", 0, BIG, -400, NULL, 0, "half-encoded '..'"},
    {"/%2E./x", 0, BIG, -400, NULL, 0, "upper-case half-encoded '..'"},
    {"//../x", 0, BIG, -400, NULL, 0, "'//..'"},
    {"/./../x", 0, BIG, -400, NULL, 0, "'.' then '..'"},
    {"/a/b/../../../", 0, BIG, -400, NULL, 0, "climb at the end"},

    /* 403: dotfiles */
    {"/.git", 0, BIG, -403, NULL, 0, "dotfile"},
    {"/.git/config", 0, BIG, -403, NULL, 0, "dot directory"},
    {"/a/.git", 0, BIG, -403, NULL, 0, "nested dotfile"},
    {"/%2egit", 0, BIG, -403, NULL, 0, "encoded dotfile"},
    {"/...", 0, BIG, -403, NULL, 0, "three dots"},
    {"/a/...", 0, BIG, -403, NULL, 0, "three dots nested"},
    {"/.well-known/.x", 0, BIG, -403, NULL, 0, "dotfile under .well-known"},
    {"/a/.well-known", 0, BIG, -403, NULL, 0, ".well-known not first"},
    {"/.well-knowN", 0, BIG, -403, NULL, 0, ".well-known is case-sensitive"},
    {"/.well-known-x", 0, BIG, -403, NULL, 0, "longer than .well-known"},
    {"/.well-known/../.git", 0, BIG, -403, NULL, 0, "pop then dotfile"},
    {"/.well-known/.well-known", 0, BIG, -403, NULL, 0, "second .well-known"},

    /* order: 400 before 414 before 403 */
    {"/.git/../../x", 0, BIG, -400, NULL, 0, "climbing beats the dotfile"},
    {"/.git/%zz", 0, BIG, -400, NULL, 0, "bad escape beats the dotfile"},
    {"/.git/x/../..", 0, BIG, 0, "", TS, "popped dotfile, no verdict"},
    {"/aaaaaa/../../x", 0, 3, -400, NULL, 0, "climbing beats 414"},
    {"/aaaaaa/%", 0, 3, -400, NULL, 0, "bad escape beats 414"},
    {"/.git/aaaaaa", 0, 4, -414, NULL, 0, "414 beats the dotfile"},

    /* cap */
    {"/abc", 0, 3, 3, "abc", 0, "exactly cap"},
    {"/abc", 0, 2, -414, NULL, 0, "cap - 1"},
    {"/a/b", 0, 3, 3, "a/b", 0, "two segments at cap"},
    {"/a/b", 0, 2, -414, NULL, 0, "separator does not fit"},
    {"/%41%42", 0, 2, 2, "AB", 0, "cap counts decoded bytes"},
    {"/", 0, 0, 0, "", TS, "root with cap 0"},
    {"/a", 0, 0, -414, NULL, 0, "one byte, cap 0"},
    {"/aaaa/../b", 0, 1, 1, "b", 0, "too long only on the way"},
    {"/a/bbbb/../c", 0, 3, 3, "a/c", 0, "too long only on the way, nested"},
    {"/a/bbbb/cc/../../c", 0, 3, 3, "a/c", 0, "two segments over, both popped"},
    {"/bbbb/.git/../..", 0, 2, 0, "", TS, "dotfile over the cap, popped"},
};

static void test_normalize(void)
{
    for (size_t i = 0; i < ARRAY_LEN(norm_rows); i++) {
        const struct norm_row *r = &norm_rows[i];
        size_t n = r->n ? r->n : strlen(r->in);
        char *p = guarded_copy(r->in, n);
        /* The output lies against a guard page too: a write past cap faults. */
        char *out = guarded_copy("", 0);
        if (r->cap) {
            guarded_free(out, 0);
            char *z = calloc(1, r->cap);
            out = guarded_copy(z, r->cap);
            free(z);
        }
        unsigned flags = 99;
        long got = target_normalize(span_make(p, n), out, r->cap, &flags);
        CHECK_LONG(got, r->want, r->why);
        if (r->want >= 0 && got >= 0) {
            CHECK_MEM(out, (size_t)got, r->out, strlen(r->out), r->why);
            CHECK_LONG(flags, r->flags, r->why);
        } else {
            CHECK_LONG(flags, 0, r->why);
        }
        guarded_free(out, r->cap);
        guarded_free(p, n);
    }
}

/* target_dir_location(): the Location of a directory's 301, from the raw
 * target and the normalized path, for the full build and the router. */
static const struct loc_row {
    const char *target, *normalized, *want;
    size_t cap; /* 0: TARGET_LOCATION_MAX */
    const char *why;
} loc_rows[] = {
    {"/d", "d", "/d/", 0, "the raw path, a slash added"},
    {"/a/b?x=1&y", "a/b", "/a/b/?x=1&y", 0, "the query kept"},
    {"/d?", "d", "/d/?", 0, "an empty query kept as such"},
    {"/%64ir", "dir", "/%64ir/", 0, "escapes kept as sent"},
    {"/a/./b/../c", "a/c", "/a/./b/../c/", 0, "dot-segments kept as sent"},
    {"//evil.example/x", "evil.example/x", "/evil.example/x/", 0,
     "'//' would read as another host: the normalized path"},
    {"/a\\b", "a\\b", "/a%5Cb/", 0, "a backslash reads as '/' in browsers: encoded"},
    {"/\\evil", "\\evil", "/%5Cevil/", 0, "'/\\' would read as another host"},
    {"//x y", "x y", "/x%20y/", 0, "rebuilt: every unsafe byte percent-encoded"},
    {"//a?q", "a", "/a/?q", 0, "rebuilt, with the query"},
    {"/abc", "abc", "/abc/", 5, "exactly cap bytes"},
    {"/abcd", "abcd", NULL, 5, "one byte more than cap: full (414)"},
};

static void test_dir_location(void)
{
    char *big = malloc(TARGET_LOCATION_MAX + 2);
    for (size_t i = 0; i < ARRAY_LEN(loc_rows); i++) {
        const struct loc_row *r = &loc_rows[i];
        struct target t;
        size_t n = strlen(r->target);
        char *p = guarded_copy(r->target, n);
        CHECK_LONG(target_split(span_make(p, n), &t), 0, r->why);
        size_t cap = r->cap ? r->cap : TARGET_LOCATION_MAX;
        char *out = guarded_copy(big, cap); /* the output against a guard page */
        struct buf b = buf_make(out, cap);
        target_dir_location(&b, &t, span_make(r->normalized, strlen(r->normalized)));
        if (r->want)
            CHECK_MEM(b.p, b.full ? 0 : b.len, r->want, strlen(r->want), r->why);
        else
            CHECK(b.full, r->why);
        guarded_free(out, cap);
        guarded_free(p, n);
    }
    /* A raw path of a whole request line fits; its encoded form may not. */
    memset(big, 'a', TARGET_LOCATION_MAX + 1);
    big[0] = '/';
    unit_gen_begin();
    for (size_t n = TARGET_LOCATION_MAX - 4; n <= TARGET_LOCATION_MAX; n++) {
        struct target t;
        CHECK_LONG(target_split(span_make(big, n), &t), 0, "a long path");
        char *out = guarded_copy(big, TARGET_LOCATION_MAX);
        struct buf b = buf_make(out, TARGET_LOCATION_MAX);
        target_dir_location(&b, &t, span_make(big + 1, n - 1));
        CHECK_LONG(b.full, n + 1 > TARGET_LOCATION_MAX, "the limit is TARGET_LOCATION_MAX");
        guarded_free(out, TARGET_LOCATION_MAX);
    }
    unit_gen_end();
    free(big);
}

int main(void)
{
    test_split();
    test_host();
    test_normalize();
    test_dir_location();
    return unit_done();
}

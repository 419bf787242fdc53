/* SPDX-License-Identifier: MIT */
/*
 * test_glob.c - glob_valid() and glob_match() against glob.h: '*', '?',
 * sets with ranges, '!' and a leading ']', '\' escapes, the {n} repeat
 * extension for hashed asset names and its limits (1..32, GLOB_MAX_TOKENS),
 * invalid patterns matching nothing, bytes >= 0x80, and the classic
 * pathological patterns ("*a*a*a*a*b" against a long run of 'a') finishing
 * in linear-ish time. Patterns and names lie against guard pages.
 */
#include <time.h>

#include "core/glob.h"
#include "unit.h"

static const struct match_row {
    const char *pattern, *name;
    bool want;
    const char *why;
} match_rows[] = {
    /* the hashed-asset example of glob.h */
    {"*.[0-9a-f]{8}.*", "app.3f9a0c1e.js", true, "8 hex digits"},
    {"*.[0-9a-f]{8}.*", "app.3f9a0c1.js", false, "7 hex digits"},
    {"*.[0-9a-f]{8}.*", "app.3f9a0c1e0.js", false, "9 hex digits"},
    {"*.[0-9a-f]{8}.*", "app.3F9A0C1E.js", false, "upper-case hex is not in [0-9a-f]"},
    {"*.[0-9a-f]{8}.*", "vendor.min.0123abcd.css", true, "dots before the hash"},
    {"*.[0-9a-f]{8}.*", ".3f9a0c1e.", true, "'*' matches empty runs"},
    {"*.[0-9a-f]{8}.*", "app.3f9a0c1g.js", false, "'g' is not hex"},
    {"*-[0-9A-Za-z_]{20}.js", "chunk-abcdefghij0123456789.js", true, "20-character id"},

    /* '*' */
    {"*", "", true, "'*' matches the empty name"},
    {"*", "anything at all", true, "'*' matches anything"},
    {"*", "a/b", true, "'*' crosses '/' (names, not paths)"},
    {"a*", "a", true, "trailing '*' matches nothing"},
    {"a*", "abc", true, "trailing '*'"},
    {"a*", "ba", false, "anchored at the start"},
    {"*a", "ba", true, "leading '*'"},
    {"*a", "ab", false, "anchored at the end"},
    {"a*b*c", "aXXbYYc", true, "two stars"},
    {"a*b*c", "abc", true, "two empty stars"},
    {"a*b*c", "acb", false, "order matters"},
    {"**", "x", true, "'**' is '*'"},
    {"*.js", "app.js", true, "extension"},
    {"*.js", "app.json", false, "longer extension"},
    {"*.js", "app.js.map", false, "not the last extension"},

    /* '?' */
    {"?", "a", true, "'?' one byte"},
    {"?", "", false, "'?' needs a byte"},
    {"?", "ab", false, "'?' only one byte"},
    {"??", "\xc3\xa9", true, "'?' is a byte, not a character (UTF-8 e-acute is two)"},
    {"a?c", "abc", true, "'?' in the middle"},
    {"a?c", "a/c", true, "'?' matches '/'"},
    {"?{3}", "abc", true, "'?{3}'"},
    {"?{3}", "ab", false, "'?{3}' short"},

    /* sets */
    {"[abc]", "b", true, "set member"},
    {"[abc]", "d", false, "not a member"},
    {"[abc]", "", false, "a set needs a byte"},
    {"[a-c]", "b", true, "range"},
    {"[a-c]", "c", true, "range end inclusive"},
    {"[a-c]", "d", false, "past the range"},
    {"[!.]*", "app", true, "'[!.]' first byte not a dot"},
    {"[!.]*", ".hidden", false, "'[!.]' refuses a dot"},
    {"[!a-z]", "A", true, "negated range"},
    {"[!a-z]", "q", false, "negated range, member"},
    {"[]a]", "]", true, "leading ']' is a member"},
    {"[]a]", "a", true, "leading ']', other member"},
    {"[]a]", "b", false, "leading ']', not a member"},
    {"[!]a]", "]", false, "negated leading ']'"},
    {"[!]a]", "b", true, "negated leading ']', other byte"},
    {"[a-]", "-", true, "trailing '-' is a member"},
    {"[a-]", "a", true, "trailing '-', other member"},
    {"[-a]", "-", true, "leading '-' is a member"},
    {"[*?]", "*", true, "'*' is literal in a set"},
    {"[*?]", "x", false, "'*' in a set is not a wildcard"},
    {"[\x80-\xff]", "\xe9", true, "bytes >= 0x80 compare unsigned"},
    {"[\x80-\xff]", "e", false, "ASCII outside a high range"},
    {"[z-a]", "m", false, "reversed range matches nothing"},
    {"[0-9]{3}", "123", true, "set repeated"},
    {"[0-9]{3}", "12a", false, "set repeated, one fails"},

    /* '\' escapes */
    {"\\*", "*", true, "'\\*' is a literal star"},
    {"\\*", "a", false, "'\\*' is not a wildcard"},
    {"\\?", "?", true, "'\\?' literal"},
    {"\\?", "a", false, "'\\?' not a wildcard"},
    {"\\[a]", "[a]", true, "'\\[' literal bracket"},
    {"\\\\", "\\", true, "escaped backslash"},
    {"a\\{2}", "aa", false, "an escaped '{' does not start a repeat"},
    {"a\\{2}", "a{2}", true, "an escaped '{' is literal"},
    {"\\a{2}", "aa", true, "an escaped literal can repeat"},
    {"\\*{2}", "**", true, "escaped star repeated"},
    {"a\\", "a\\", true, "trailing backslash is itself"},

    /* literals and {n} */
    {"abc", "abc", true, "literal"},
    {"abc", "ABC", false, "case-sensitive"},
    {"abc", "ab", false, "shorter"},
    {"abc", "abcd", false, "longer"},
    {"a{3}", "aaa", true, "literal repeated"},
    {"a{3}", "aa", false, "literal repeated, short"},
    {"a{3}", "aaaa", false, "literal repeated, long"},
    {"a{1}", "a", true, "{1}"},
    {"a{32}", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", true, "{32}"},
    {"a{03}", "aaa", true, "leading zero in {n}"},
    {"{8}", "{8}", true, "'{8}' with nothing before is literal"},
    {"*{2}", "{2}", true, "'*' cannot repeat: '{2}' is literal after it"},
    {"*{2}", "x{2}", true, "'*' then literal '{2}'"},
    {"a{2}{2}", "aa{2}", true, "a second {n} is literal"},
    {"a}", "a}", true, "lone '}' is literal"},
    {".", ".", true, "dot"},

    /* invalid patterns match nothing */
    {"[abc", "a", false, "unclosed set"},
    {"[abc", "[abc", false, "unclosed set, literally"},
    {"a{0}", "", false, "{0}"},
    {"a{33}", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false, "{33}"},
    {"a{", "a{", false, "unclosed {"},
    {"a{2", "aa", false, "unclosed {2"},
    {"a{x}", "a{x}", false, "non-digit in {}"},
    {"a{}", "a{}", false, "empty {}"},
    {"[]", "]", false, "'[]' is an unclosed set"},
    {"", "", false, "the empty pattern is invalid: it matches not even the empty name"},
    {"", "a", false, "the empty pattern matches nothing"},
};

static const struct valid_row {
    const char *pattern;
    bool want;
    const char *why;
} valid_rows[] = {
    {"*.[0-9a-f]{8}.*", true, "the example"},
    {"*", true, "'*'"},
    {"a", true, "literal"},
    {"[!.]", true, "negated set"},
    {"[]a]", true, "leading ']'"},
    {"\\*", true, "escaped star"},
    {"a\\", true, "trailing backslash"},
    {"a{1}", true, "{1}"},
    {"a{32}", true, "{32}"},
    {"{8}", true, "'{8}' alone is three literals"},
    {"", false, "empty pattern"},
    {"[abc", false, "unclosed set"},
    {"[", false, "'['"},
    {"[!", false, "'[!'"},
    {"[!]", false, "'[!]': ']' is a member, set unclosed"},
    {"[]", false, "'[]'"},
    {"a{0}", false, "{0}"},
    {"a{33}", false, "{33}"},
    {"a{99999999999999999999}", false, "{n} that overflows"},
    {"a{", false, "'{' at the end"},
    {"a{1", false, "unclosed {1"},
    {"a{-1}", false, "negative"},
    {"a{ 2}", false, "space in {}"},
};

static bool match(const char *pattern, size_t pn, const char *name, size_t nn)
{
    char *p = guarded_copy(pattern, pn), *q = guarded_copy(name, nn);
    bool r = glob_match(span_make(p, pn), span_make(q, nn));
    guarded_free(p, pn);
    guarded_free(q, nn);
    return r;
}

static bool valid(const char *pattern, size_t n)
{
    char *p = guarded_copy(pattern, n);
    bool r = glob_valid(span_make(p, n));
    guarded_free(p, n);
    return r;
}

static void test_rows(void)
{
    for (size_t i = 0; i < ARRAY_LEN(match_rows); i++) {
        const struct match_row *r = &match_rows[i];
        CHECK_LONG(match(r->pattern, strlen(r->pattern), r->name, strlen(r->name)), r->want,
                   r->why);
    }
    for (size_t i = 0; i < ARRAY_LEN(valid_rows); i++) {
        const struct valid_row *r = &valid_rows[i];
        CHECK_LONG(valid(r->pattern, strlen(r->pattern)), r->want, r->why);
    }
    /* Every invalid pattern of valid_rows matches nothing, not even itself. */
    for (size_t i = 0; i < ARRAY_LEN(valid_rows); i++) {
        const struct valid_row *r = &valid_rows[i];
        if (!r->want && r->pattern[0])
            CHECK_LONG(match(r->pattern, strlen(r->pattern), r->pattern, strlen(r->pattern)), false,
                       r->why);
    }
    /* A NUL is an ordinary byte. */
    CHECK_LONG(match("a?b", 3, "a\0b", 3), true, "'?' matches NUL");
    CHECK_LONG(match("a\0b", 3, "a\0b", 3), true, "literal NUL");
    CHECK_LONG(match("a\0b", 3, "a", 1), false, "NUL does not end the pattern");
}

static void test_limits(void)
{
    char p[512], name[512];

    /* GLOB_MAX_TOKENS tokens, {n} counted expanded */
    memset(p, 'a', GLOB_MAX_TOKENS);
    memset(name, 'a', GLOB_MAX_TOKENS);
    CHECK_LONG(valid(p, GLOB_MAX_TOKENS), true, "GLOB_MAX_TOKENS literals");
    CHECK_LONG(match(p, GLOB_MAX_TOKENS, name, GLOB_MAX_TOKENS), true,
               "GLOB_MAX_TOKENS literals match");
    CHECK_LONG(valid(p, GLOB_MAX_TOKENS + 1), false, "GLOB_MAX_TOKENS + 1 literals");
    CHECK_LONG(match(p, GLOB_MAX_TOKENS + 1, name, GLOB_MAX_TOKENS + 1), false,
               "too long: matches nothing");
    memset(p, '*', GLOB_MAX_TOKENS + 1);
    CHECK_LONG(valid(p, GLOB_MAX_TOKENS), true, "GLOB_MAX_TOKENS stars");
    CHECK_LONG(valid(p, GLOB_MAX_TOKENS + 1), false, "GLOB_MAX_TOKENS + 1 stars");

    /* 4 x "?{32}" = 128 tokens; one more byte is one too many */
    strcpy(p, "?{32}?{32}?{32}?{32}");
    CHECK_LONG(valid(p, strlen(p)), true, "4 x {32} = GLOB_MAX_TOKENS");
    CHECK_LONG(match(p, strlen(p), name, 128), true, "4 x {32} matches 128 bytes");
    CHECK_LONG(match(p, strlen(p), name, 127), false, "4 x {32} needs 128 bytes");
    strcat(p, "x");
    CHECK_LONG(valid(p, strlen(p)), false, "4 x {32} + 1 literal");
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_pathological(void)
{
    size_t n = 100000;
    char *a = malloc(n + 1);
    memset(a, 'a', n);
    static const char *const patterns[] = {
        "*a*a*a*a*b",
        "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b",
        "a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*c",
        "*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*b",
        "*[a]*[a]*[a]*[a]*[!a]",
        "*a{32}*a{32}*a{32}*b",
    };
    double start = seconds();
    for (size_t i = 0; i < ARRAY_LEN(patterns); i++)
        CHECK_LONG(match(patterns[i], strlen(patterns[i]), a, n), false,
                   "pathological pattern against 100000 x 'a'");
    /* and the matching case still matches */
    CHECK_LONG(match("*a*a*a*a*a", 10, a, n), true, "*a*a*a*a*a matches 100000 x 'a'");
    a[n - 1] = 'b';
    CHECK_LONG(match("*a*a*a*a*b", 10, a, n), true, "*a*a*a*a*b matches when it ends in b");
    double took = seconds() - start;
    /* Linear per token: well under a second even under ASan; exponential
     * backtracking would not finish. */
    CHECK(took < 5.0, "pathological patterns finish fast");
    free(a);
}

int main(void)
{
    test_rows();
    test_limits();
    test_pathological();
    return unit_done();
}

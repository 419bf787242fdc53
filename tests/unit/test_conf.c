/* SPDX-License-Identifier: MIT */
/*
 * test_conf.c - the configuration file's lines (core/conf.c): options with
 * and without values, quotes, comments, blanks, CRLF, site blocks and every
 * malformed line, each with its error, and the reading going on after one.
 * The text lies against a guard page, so a read past its end faults.
 */
#include "core/conf.h"
#include "unit.h"

struct want {
    enum conf_kind kind;
    unsigned line;
    const char *name, *value, *error;
};

static void run(const char *why, const char *text, const struct want *w, size_t n)
{
    size_t len = strlen(text);
    char *t = guarded_copy(text, len);
    struct conf_reader r = conf_reader_make(span_make(t, len));
    struct conf_item it;
    size_t i = 0;
    while (conf_next(&r, &it)) {
        if (i >= n) {
            CHECK(false, why); /* more items than expected */
            break;
        }
        CHECK_LONG(it.kind, w[i].kind, why);
        CHECK_LONG(it.line, w[i].line, why);
        if (w[i].name)
            CHECK_SPAN(it.name, w[i].name, why);
        if (w[i].value)
            CHECK_SPAN(it.value, w[i].value, why);
        if (w[i].error)
            CHECK(it.error && strcmp(it.error, w[i].error) == 0, w[i].error);
        i++;
    }
    CHECK_LONG(i, n, why);
    guarded_free(t, len);
}

#define RUN(why, text, ...)                                                                        \
    do {                                                                                           \
        static const struct want w_[] = {__VA_ARGS__};                                             \
        run((why), (text), w_, ARRAY_LEN(w_));                                                     \
    } while (0)

static void test_options(void)
{
    RUN("option and value", "port 8080", {CONF_OPTION, 1, "port", "8080", NULL});
    RUN("a flag", "cors\n", {CONF_OPTION, 1, "cors", "", NULL});
    RUN("blanks and tabs", " \t max-age \t 60 \t \n", {CONF_OPTION, 1, "max-age", "60", NULL});
    RUN("the value is the rest of the line", "header X-A: b c",
        {CONF_OPTION, 1, "header", "X-A: b c", NULL});
    RUN("CRLF", "a 1\r\nb 2\r\n", {CONF_OPTION, 1, "a", "1", NULL},
        {CONF_OPTION, 2, "b", "2", NULL});
    RUN("comments and blank lines", "# c\n\n   \n  # c2\nport 1 # trailing\n",
        {CONF_OPTION, 5, "port", "1", NULL});
    RUN("a '#' inside a word is not a comment", "immutable *[#]x",
        {CONF_OPTION, 1, "immutable", "*[#]x", NULL});
    RUN("double quotes", "header \"X: a # b\"", {CONF_OPTION, 1, "header", "X: a # b", NULL});
    RUN("single quotes", "root '/srv/my www' # c", {CONF_OPTION, 1, "root", "/srv/my www", NULL});
    RUN("a quote inside the other kind", "header 'X: say \"hi\"'",
        {CONF_OPTION, 1, "header", "X: say \"hi\"", NULL});
    RUN("empty quotes", "index \"\"", {CONF_OPTION, 1, "index", "", NULL});
    RUN("a quote inside a value", "header X: it's", {CONF_OPTION, 1, "header", "X: it's", NULL});
    RUN("no newline at the end", "a 1\nb", {CONF_OPTION, 1, "a", "1", NULL},
        {CONF_OPTION, 2, "b", "", NULL});
}

static void test_blocks(void)
{
    RUN("a block", "site a.test, b.test {\n  root /x\n}\n",
        {CONF_SITE_BEGIN, 1, NULL, "a.test, b.test", NULL}, {CONF_OPTION, 2, "root", "/x", NULL},
        {CONF_SITE_END, 3, NULL, NULL, NULL});
    RUN("brace without a blank", "site a.test{\n}", {CONF_SITE_BEGIN, 1, NULL, "a.test", NULL},
        {CONF_SITE_END, 2, NULL, NULL, NULL});
    RUN("site without a brace is an option", "site a.test=/x",
        {CONF_OPTION, 1, "site", "a.test=/x", NULL});
    RUN("no names", "site {",
        {CONF_ERROR, 1, NULL, NULL, "a site block needs its names: 'site example.com {'"});
    RUN("a brace in the names", "site a{b {",
        {CONF_ERROR, 1, NULL, NULL, "a brace inside a site's names"});
    RUN("a closing brace and more", "} x",
        {CONF_ERROR, 1, NULL, NULL,
         "expected an option name (lowercase letters, digits and '-') and its value"});
}

static void test_errors(void)
{
    static const char *const expected =
        "expected an option name (lowercase letters, digits and '-') and its value";
    RUN("uppercase", "Port 80", {CONF_ERROR, 1, NULL, NULL, expected});
    RUN("a colon after the name", "port: 80", {CONF_ERROR, 1, NULL, NULL, expected});
    RUN("a lone brace", "{", {CONF_ERROR, 1, NULL, NULL, expected});
    RUN("NUL", "port 8\0", {CONF_OPTION, 1, "port", "8", NULL}); /* strlen stops: see below */
    RUN("a control byte", "port 8\x01\n",
        {CONF_ERROR, 1, NULL, NULL, "a control character (only tab is allowed)"});
    RUN("DEL", "port \x7f",
        {CONF_ERROR, 1, NULL, NULL, "a control character (only tab is allowed)"});
    RUN("an open quote", "root \"/x",
        {CONF_ERROR, 1, NULL, NULL, "a quote is not closed at the end of the value"});
    RUN("after the quotes", "root \"/x\" y",
        {CONF_ERROR, 1, NULL, NULL,
         "text after a quoted value (a value is one quoted string, or none)"});
    RUN("reading goes on after an error", "Bad\nport 1\n", {CONF_ERROR, 1, NULL, NULL, expected},
        {CONF_OPTION, 2, "port", "1", NULL});
    /* A NUL byte inside the text (not through strlen). */
    char nul[] = {'p', 'o', 'r', 't', ' ', '1', '\0', '2', '\n', 'a', ' ', 'b'};
    char *t = guarded_copy(nul, sizeof nul);
    struct conf_reader r = conf_reader_make(span_make(t, sizeof nul));
    struct conf_item it;
    CHECK(conf_next(&r, &it) && it.kind == CONF_ERROR && it.line == 1, "NUL refused");
    CHECK(conf_next(&r, &it) && it.kind == CONF_OPTION && it.line == 2, "the next line read");
    CHECK(!conf_next(&r, &it), "the end");
    guarded_free(t, sizeof nul);
    /* A line of CONF_LINE_MAX bytes is read, one more is refused. */
    static char big[CONF_LINE_MAX + 8];
    memset(big, 'x', sizeof big);
    memcpy(big, "header ", 7);
    r = conf_reader_make(span_make(big, CONF_LINE_MAX));
    CHECK(conf_next(&r, &it) && it.kind == CONF_OPTION, "4096 bytes");
    r = conf_reader_make(span_make(big, CONF_LINE_MAX + 1));
    CHECK(conf_next(&r, &it) && it.kind == CONF_ERROR, "4097 bytes");
}

int main(void)
{
    test_options();
    test_blocks();
    test_errors();
    return unit_done();
}

/* SPDX-License-Identifier: MIT */
/*
 * test_cond.c - cond_evaluate(), cond_etag_list_match() and cond_if_range()
 * against cond.h and RFC 9110 §13: each of the four steps of §13.2.2 in
 * turn and the precedence between them (If-Match over If-Unmodified-Since,
 * 412 before 304, If-None-Match over If-Modified-Since), strong and weak
 * comparison (§8.8.3.2), lists with OWS and empty elements across several
 * field lines, malformed lists, dates equal/older/newer/in the future/
 * invalid, and If-Range with tags and dates. The struct http_info is filled
 * by hand; every field line lies against its own guard page.
 */
#include "core/cond.h"
#include "unit.h"

#define ETAG "\"abc\""
#define LM   INT64_C(784111777) /* Sun, 06 Nov 1994 08:49:37 GMT */
#define NOW  (LM + 365 * 86400)

#define D_LM       "Sun, 06 Nov 1994 08:49:37 GMT"
#define D_BEFORE   "Sun, 06 Nov 1994 08:49:36 GMT"
#define D_AFTER    "Sun, 06 Nov 1994 08:49:38 GMT"
#define D_NOW      "Mon, 06 Nov 1995 08:49:37 GMT" /* == NOW */
#define D_FUTURE   "Mon, 06 Nov 1995 08:49:38 GMT" /* NOW + 1 */
#define D_LM_850   "Sunday, 06-Nov-94 08:49:37 GMT"
#define D_LM_ASCTM "Sun Nov  6 08:49:37 1994"

enum { GET, POST }; /* get_or_head */
enum { LM_YES, LM_NO };

static const struct row {
    const char *im[HTTP_LIST_MAX + 1];  /* If-Match lines, NULL-terminated */
    const char *inm[HTTP_LIST_MAX + 1]; /* If-None-Match lines */
    const char *ius, *ims;              /* NULL: absent */
    int method, lm;
    int64_t now; /* 0: NOW */
    enum cond_verdict want;
    const char *why;
} rows[] = {
    /* no preconditions */
    {{0}, {0}, NULL, NULL, GET, LM_YES, 0, COND_PROCEED, "nothing to evaluate"},
    {{0}, {0}, NULL, NULL, POST, LM_NO, 0, COND_PROCEED, "nothing, POST, no Last-Modified"},

    /* (1) If-Match: strong comparison, "*" matches */
    {{"*"}, {0}, NULL, NULL, GET, LM_YES, 0, COND_PROCEED, "If-Match: *"},
    {{"*"}, {0}, NULL, NULL, POST, LM_YES, 0, COND_PROCEED, "If-Match: *, POST"},
    {{ETAG}, {0}, NULL, NULL, GET, LM_YES, 0, COND_PROCEED, "If-Match: our tag"},
    {{ETAG}, {0}, NULL, NULL, POST, LM_YES, 0, COND_PROCEED, "If-Match: our tag, POST"},
    {{"\"xyz\""}, {0}, NULL, NULL, GET, LM_YES, 0, COND_FAILED, "If-Match: another tag"},
    {{"\"xyz\""}, {0}, NULL, NULL, POST, LM_YES, 0, COND_FAILED, "If-Match: another tag, POST"},
    {{"\"xyz\", \"abc\""}, {0}, NULL, NULL, GET, LM_YES, 0, COND_PROCEED, "If-Match: list"},
    {{"\"xyz\"", "\"abc\""},
     {0},
     NULL,
     NULL,
     GET,
     LM_YES,
     0,
     COND_PROCEED,
     "If-Match: across two lines"},
    {{"\"x\"", "\"y\"", "\"z\"", "\"abc\""},
     {0},
     NULL,
     NULL,
     GET,
     LM_YES,
     0,
     COND_PROCEED,
     "If-Match: our tag on the 4th line"},
    {{"W/\"abc\""},
     {0},
     NULL,
     NULL,
     GET,
     LM_YES,
     0,
     COND_FAILED,
     "If-Match: a weak tag never matches (strong comparison)"},
    {{"W/\"abc\", \"xyz\""},
     {0},
     NULL,
     NULL,
     GET,
     LM_YES,
     0,
     COND_FAILED,
     "If-Match: weak ours + strong other"},
    {{"W/\"abc\", \"abc\""},
     {0},
     NULL,
     NULL,
     GET,
     LM_YES,
     0,
     COND_PROCEED,
     "If-Match: weak and strong ours"},
    {{"\"ABC\""}, {0}, NULL, NULL, GET, LM_YES, 0, COND_FAILED, "If-Match: opaque-tag is exact"},
    {{"\"\""}, {0}, NULL, NULL, GET, LM_YES, 0, COND_FAILED, "If-Match: empty tag"},
    {{" , \"abc\" ,, "},
     {0},
     NULL,
     NULL,
     GET,
     LM_YES,
     0,
     COND_PROCEED,
     "If-Match: OWS and empty elements"},
    {{"\t\"abc\"\t"}, {0}, NULL, NULL, GET, LM_YES, 0, COND_PROCEED, "If-Match: HTAB"},
    {{"abc"}, {0}, NULL, NULL, GET, LM_YES, 0, COND_FAILED, "If-Match: unquoted (malformed)"},
    {{"\"abc"}, {0}, NULL, NULL, GET, LM_YES, 0, COND_FAILED, "If-Match: unterminated"},
    {{"\"abc\"x"}, {0}, NULL, NULL, GET, LM_YES, 0, COND_FAILED, "If-Match: junk after the tag"},
    {{"\"abc\" \"abc\""},
     {0},
     NULL,
     NULL,
     GET,
     LM_YES,
     0,
     COND_FAILED,
     "If-Match: two tags without a comma"},
    {{"\"abc\", *"}, {0}, NULL, NULL, GET, LM_YES, 0, COND_FAILED, "If-Match: '*' inside a list"},
    {{"**"}, {0}, NULL, NULL, GET, LM_YES, 0, COND_FAILED, "If-Match: '**'"},
    {{"\"abc\"", "x"},
     {0},
     NULL,
     NULL,
     GET,
     LM_YES,
     0,
     COND_FAILED,
     "If-Match: our tag, but another line is malformed"},
    {{"\"a c\""}, {0}, NULL, NULL, GET, LM_YES, 0, COND_FAILED, "If-Match: SP inside a tag"},

    /* (2) If-Unmodified-Since, only without If-Match */
    {{0}, {0}, D_BEFORE, NULL, GET, LM_YES, 0, COND_FAILED, "IUS older than Last-Modified"},
    {{0}, {0}, D_BEFORE, NULL, POST, LM_YES, 0, COND_FAILED, "IUS older, POST"},
    {{0}, {0}, D_LM, NULL, GET, LM_YES, 0, COND_PROCEED, "IUS equal to Last-Modified"},
    {{0}, {0}, D_AFTER, NULL, GET, LM_YES, 0, COND_PROCEED, "IUS newer"},
    {{0}, {0}, D_FUTURE, NULL, GET, LM_YES, 0, COND_PROCEED, "IUS in the future"},
    {{0},
     {0},
     "Sunday, 06-Nov-94 08:49:36 GMT",
     NULL,
     GET,
     LM_YES,
     0,
     COND_FAILED,
     "IUS older, RFC 850"},
    {{0}, {0}, "Sun Nov  6 08:49:36 1994", NULL, GET, LM_YES, 0, COND_FAILED, "IUS older, asctime"},
    {{0}, {0}, "yesterday", NULL, GET, LM_YES, 0, COND_PROCEED, "IUS invalid: ignored"},
    {{0}, {0}, "", NULL, GET, LM_YES, 0, COND_PROCEED, "IUS empty: ignored"},
    {{0},
     {0},
     "Sun, 30 Feb 1994 08:49:37 GMT",
     NULL,
     GET,
     LM_YES,
     0,
     COND_PROCEED,
     "IUS impossible date: ignored"},
    {{0},
     {0},
     "Wed, 31 Dec 1969 23:59:59 GMT",
     NULL,
     GET,
     LM_YES,
     0,
     COND_PROCEED,
     "IUS before 1970: ignored"},
    {{0}, {0}, D_BEFORE, NULL, GET, LM_NO, 0, COND_PROCEED, "IUS without a Last-Modified"},
    {{"\"abc\""},
     {0},
     D_BEFORE,
     NULL,
     GET,
     LM_YES,
     0,
     COND_PROCEED,
     "If-Match matches: IUS not evaluated"},
    {{"\"xyz\""},
     {0},
     D_AFTER,
     NULL,
     GET,
     LM_YES,
     0,
     COND_FAILED,
     "If-Match fails whatever IUS says"},

    /* (3) If-None-Match: weak comparison; 304 for GET/HEAD, else 412 */
    {{0}, {ETAG}, NULL, NULL, GET, LM_YES, 0, COND_NOT_MODIFIED, "INM: our tag"},
    {{0}, {ETAG}, NULL, NULL, POST, LM_YES, 0, COND_FAILED, "INM: our tag, POST"},
    {{0},
     {"W/\"abc\""},
     NULL,
     NULL,
     GET,
     LM_YES,
     0,
     COND_NOT_MODIFIED,
     "INM: weak tag matches (weak comparison)"},
    {{0}, {"W/\"abc\""}, NULL, NULL, POST, LM_YES, 0, COND_FAILED, "INM: weak tag, POST"},
    {{0}, {"*"}, NULL, NULL, GET, LM_YES, 0, COND_NOT_MODIFIED, "INM: *"},
    {{0}, {"*"}, NULL, NULL, POST, LM_YES, 0, COND_FAILED, "INM: *, POST"},
    {{0}, {" * "}, NULL, NULL, GET, LM_YES, 0, COND_NOT_MODIFIED, "INM: * with OWS"},
    {{0}, {"\"xyz\""}, NULL, NULL, GET, LM_YES, 0, COND_PROCEED, "INM: another tag"},
    {{0}, {"\"xyz\""}, NULL, NULL, POST, LM_YES, 0, COND_PROCEED, "INM: another tag, POST"},
    {{0},
     {"\"xyz\" , W/\"abc\""},
     NULL,
     NULL,
     GET,
     LM_YES,
     0,
     COND_NOT_MODIFIED,
     "INM: list with OWS"},
    {{0}, {",,\"abc\",,"}, NULL, NULL, GET, LM_YES, 0, COND_NOT_MODIFIED, "INM: empty elements"},
    {{0},
     {"\t,\t\"xyz\"\t,\t\"abc\"\t"},
     NULL,
     NULL,
     GET,
     LM_YES,
     0,
     COND_NOT_MODIFIED,
     "INM: HTAB everywhere"},
    {{0},
     {"\"xyz\"", "W/\"abc\""},
     NULL,
     NULL,
     GET,
     LM_YES,
     0,
     COND_NOT_MODIFIED,
     "INM: across two lines"},
    {{0},
     {"\"x\"", "\"y\"", "\"z\"", "\"abc\""},
     NULL,
     NULL,
     GET,
     LM_YES,
     0,
     COND_NOT_MODIFIED,
     "INM: our tag on the 4th line"},
    {{0},
     {"\"abc\" \"xyz\""},
     NULL,
     NULL,
     GET,
     LM_YES,
     0,
     COND_PROCEED,
     "INM: no comma between tags (malformed)"},
    {{0}, {"abc"}, NULL, NULL, GET, LM_YES, 0, COND_PROCEED, "INM: unquoted (malformed)"},
    {{0}, {"w/\"abc\""}, NULL, NULL, GET, LM_YES, 0, COND_PROCEED, "INM: lower-case w/"},
    {{0}, {"W/ \"abc\""}, NULL, NULL, GET, LM_YES, 0, COND_PROCEED, "INM: space after W/"},
    {{0}, {"W\"abc\""}, NULL, NULL, GET, LM_YES, 0, COND_PROCEED, "INM: W without '/'"},
    {{0}, {"\"abc\";q=1"}, NULL, NULL, GET, LM_YES, 0, COND_PROCEED, "INM: parameter"},
    {{0},
     {"\"x", "\"abc\""},
     NULL,
     NULL,
     GET,
     LM_YES,
     0,
     COND_PROCEED,
     "INM: a malformed line makes the list match nothing"},
    {{0},
     {"\"abc\"", "*, \"x\""},
     NULL,
     NULL,
     GET,
     LM_YES,
     0,
     COND_PROCEED,
     "INM: '*' in a list on another line"},
    {{0}, {"\"\x80\x81\""}, NULL, NULL, GET, LM_YES, 0, COND_PROCEED, "INM: obs-text tag"},
    {{0}, {"\"a\x7f\""}, NULL, NULL, GET, LM_YES, 0, COND_PROCEED, "INM: DEL in a tag"},
    {{"\"xyz\""},
     {ETAG},
     NULL,
     NULL,
     GET,
     LM_YES,
     0,
     COND_FAILED,
     "If-Match fails before If-None-Match is looked at (412 before 304)"},
    {{ETAG}, {ETAG}, NULL, NULL, GET, LM_YES, 0, COND_NOT_MODIFIED, "If-Match passes, INM 304"},
    {{0}, {ETAG}, D_BEFORE, NULL, GET, LM_YES, 0, COND_FAILED, "IUS fails before INM"},
    {{0}, {ETAG}, D_AFTER, NULL, GET, LM_YES, 0, COND_NOT_MODIFIED, "IUS passes, INM 304"},

    /* (4) If-Modified-Since: GET/HEAD only, not with If-None-Match */
    {{0}, {0}, NULL, D_LM, GET, LM_YES, 0, COND_NOT_MODIFIED, "IMS equal to Last-Modified"},
    {{0}, {0}, NULL, D_AFTER, GET, LM_YES, 0, COND_NOT_MODIFIED, "IMS newer"},
    {{0}, {0}, NULL, D_NOW, GET, LM_YES, 0, COND_NOT_MODIFIED, "IMS equal to now"},
    {{0}, {0}, NULL, D_BEFORE, GET, LM_YES, 0, COND_PROCEED, "IMS older: modified since"},
    {{0}, {0}, NULL, D_FUTURE, GET, LM_YES, 0, COND_PROCEED, "IMS in the future: ignored"},
    {{0},
     {0},
     NULL,
     "Fri, 31 Dec 9999 23:59:59 GMT",
     GET,
     LM_YES,
     0,
     COND_PROCEED,
     "IMS far in the future: ignored"},
    {{0},
     {0},
     NULL,
     D_LM,
     GET,
     LM_YES,
     LM - 1,
     COND_PROCEED,
     "IMS == Last-Modified but both after now: ignored"},
    {{0}, {0}, NULL, D_LM, GET, LM_YES, LM, COND_NOT_MODIFIED, "IMS == Last-Modified == now"},
    {{0}, {0}, NULL, D_LM_850, GET, LM_YES, 0, COND_NOT_MODIFIED, "IMS equal, RFC 850"},
    {{0}, {0}, NULL, D_LM_ASCTM, GET, LM_YES, 0, COND_NOT_MODIFIED, "IMS equal, asctime"},
    {{0}, {0}, NULL, "garbage", GET, LM_YES, 0, COND_PROCEED, "IMS garbage: ignored"},
    {{0}, {0}, NULL, "", GET, LM_YES, 0, COND_PROCEED, "IMS empty: ignored"},
    {{0},
     {0},
     NULL,
     "Sun, 06 Nov 1994 08:49:37 GMT; length=10",
     GET,
     LM_YES,
     0,
     COND_PROCEED,
     "IMS with IE's length parameter: ignored"},
    {{0}, {0}, NULL, "784111777", GET, LM_YES, 0, COND_PROCEED, "IMS as seconds: ignored"},
    {{0}, {0}, NULL, D_LM, POST, LM_YES, 0, COND_PROCEED, "IMS on POST: not evaluated"},
    {{0}, {0}, NULL, D_LM, GET, LM_NO, 0, COND_PROCEED, "IMS without a Last-Modified"},
    {{0},
     {"\"xyz\""},
     NULL,
     D_LM,
     GET,
     LM_YES,
     0,
     COND_PROCEED,
     "INM present (no match): IMS ignored"},
    {{0},
     {"garbage"},
     NULL,
     D_LM,
     GET,
     LM_YES,
     0,
     COND_PROCEED,
     "INM present (malformed): IMS ignored"},
    {{0},
     {ETAG},
     NULL,
     D_BEFORE,
     GET,
     LM_YES,
     0,
     COND_NOT_MODIFIED,
     "INM matches: IMS older does not matter"},
    {{"*"}, {0}, D_AFTER, D_LM, GET, LM_YES, 0, COND_NOT_MODIFIED, "all pass through to IMS"},
};

/* Fills a span_list from NULL-terminated lines, each on its own guard page. */
static void fill_list(struct span_list *l, const char *const *lines)
{
    l->n = 0;
    for (unsigned i = 0; i < HTTP_LIST_MAX && lines[i]; i++) {
        size_t n = strlen(lines[i]);
        l->v[l->n++] = span_make(guarded_copy(lines[i], n), n);
    }
}

static void free_list(struct span_list *l)
{
    for (unsigned i = 0; i < l->n; i++)
        guarded_free((void *)l->v[i].p, l->v[i].n);
}

static struct span single(const char *s)
{
    if (!s)
        return (struct span){NULL, 0};
    size_t n = strlen(s);
    return span_make(guarded_copy(s, n), n);
}

static void free_single(struct span s)
{
    if (s.p)
        guarded_free((void *)s.p, s.n);
}

static void test_evaluate(void)
{
    char *etag = guarded_copy(ETAG, strlen(ETAG));
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        const struct row *r = &rows[i];
        struct http_info info;
        memset(&info, 0, sizeof info);
        fill_list(&info.if_match, r->im);
        fill_list(&info.if_none_match, r->inm);
        info.if_unmodified_since = single(r->ius);
        info.if_modified_since = single(r->ims);
        struct cond_input in = {
            .info = &info,
            .get_or_head = r->method == GET,
            .etag = span_make(etag, strlen(ETAG)),
            .last_modified = r->lm == LM_YES ? LM : 0,
            .has_last_modified = r->lm == LM_YES,
            .now = r->now ? r->now : NOW,
        };
        CHECK_LONG(cond_evaluate(&in), r->want, r->why);
        free_list(&info.if_match);
        free_list(&info.if_none_match);
        free_single(info.if_unmodified_since);
        free_single(info.if_modified_since);
    }
    guarded_free(etag, strlen(ETAG));
}

static const struct list_row {
    const char *lines[HTTP_LIST_MAX + 1];
    bool strong, weak; /* the answer under each comparison */
    const char *why;
} list_rows[] = {
    {{ETAG}, true, true, "our tag"},
    {{"W/\"abc\""}, false, true, "weak form of our tag"},
    {{"*"}, true, true, "*"},
    {{"\"xyz\""}, false, false, "another tag"},
    {{""}, false, false, "an empty line"},
    {{","}, false, false, "only a comma"},
    {{"\"xyz\",W/\"abc\""}, false, true, "no OWS"},
    {{"\"xyz\"", ETAG}, true, true, "second line"},
    {{ETAG, "\"unterminated"}, false, false, "malformed second line"},
    {{"\"abc\"\"abc\""}, false, false, "two tags run together"},
    {{"W/W/\"abc\""}, false, false, "W/ twice"},
    {{"\"ab\"c\""}, false, false, "a quote inside the tag"},
    {{"\"abc\\\""}, false, false, "backslash is not an escape: \"abc\\\" is another tag"},
};

static void test_list(void)
{
    char *etag = guarded_copy(ETAG, strlen(ETAG));
    struct span e = span_make(etag, strlen(ETAG));
    for (size_t i = 0; i < ARRAY_LEN(list_rows); i++) {
        const struct list_row *r = &list_rows[i];
        struct span_list l;
        fill_list(&l, r->lines);
        CHECK_LONG(cond_etag_list_match(&l, e, false), r->strong, r->why);
        CHECK_LONG(cond_etag_list_match(&l, e, true), r->weak, r->why);
        free_list(&l);
    }
    struct span_list empty = {.n = 0};
    CHECK_LONG(cond_etag_list_match(&empty, e, true), false, "no lines: nothing matches");
    guarded_free(etag, strlen(ETAG));
}

static const struct if_range_row {
    const char *value;
    int lm;
    bool want;
    const char *why;
} if_range_rows[] = {
    {ETAG, LM_YES, true, "strong tag, equal"},
    {ETAG, LM_NO, true, "strong tag, no Last-Modified needed"},
    {"\"xyz\"", LM_YES, false, "another tag"},
    {"W/\"abc\"", LM_YES, false, "weak tag (strong comparison only)"},
    {"\"ABC\"", LM_YES, false, "tag differs in case"},
    {" \"abc\" ", LM_YES, true, "OWS around the tag"},
    {"\"abc\", \"xyz\"", LM_YES, false, "a list is not an entity-tag"},
    {"\"abc\"x", LM_YES, false, "junk after the tag"},
    {"\"abc", LM_YES, false, "unterminated tag"},
    {"*", LM_YES, false, "'*' is not allowed in If-Range"},
    {D_LM, LM_YES, true, "date exactly equal"},
    {D_LM_850, LM_YES, true, "date exactly equal, RFC 850"},
    {D_LM_ASCTM, LM_YES, true, "date exactly equal, asctime"},
    {D_BEFORE, LM_YES, false, "date one second before"},
    {D_AFTER, LM_YES, false, "date one second after"},
    {D_LM, LM_NO, false, "date without a Last-Modified"},
    {"Sun, 06 Nov 1994 08:49:37 UTC", LM_YES, false, "not an HTTP-date"},
    {"garbage", LM_YES, false, "garbage"},
    {"", LM_YES, false, "empty"},
    {"W/", LM_YES, false, "W/ alone"},
    {"W", LM_YES, false, "W alone"},
};

static void test_if_range(void)
{
    char *etag = guarded_copy(ETAG, strlen(ETAG));
    struct span e = span_make(etag, strlen(ETAG));
    for (size_t i = 0; i < ARRAY_LEN(if_range_rows); i++) {
        const struct if_range_row *r = &if_range_rows[i];
        struct span v = single(r->value);
        CHECK_LONG(cond_if_range(v, e, LM, r->lm == LM_YES, LM + 3600), r->want, r->why);
        free_single(v);
    }
    guarded_free(etag, strlen(ETAG));
}

/* If-Range dates on a Wednesday: "Wed, ..." starts with 'W' like a weak
 * tag "W/..." and must still be read as a date. */
#define LM_WED (LM + 3 * 86400) /* Wed, 09 Nov 1994 08:49:37 GMT */
static const struct {
    const char *value;
    bool want;
    const char *why;
} if_range_wed[] = {
    {"Wed, 09 Nov 1994 08:49:37 GMT", true, "If-Range IMF-fixdate on a Wednesday"},
    {"Wednesday, 09-Nov-94 08:49:37 GMT", true, "If-Range RFC 850 date on a Wednesday"},
    {"Wed Nov  9 08:49:37 1994", true, "If-Range asctime date on a Wednesday"},
    {"Wed, 09 Nov 1994 08:49:38 GMT", false, "If-Range Wednesday, one second off"},
    {"W/\"abc\"", false, "If-Range weak tag next to a Wednesday Last-Modified"},
    {"Thu, 10 Nov 1994 08:49:37 GMT", false, "If-Range Thursday, a day off"},
};

static void test_if_range_wednesday(void)
{
    char *etag = guarded_copy(ETAG, strlen(ETAG));
    struct span e = span_make(etag, strlen(ETAG));
    for (size_t i = 0; i < ARRAY_LEN(if_range_wed); i++) {
        struct span v = single(if_range_wed[i].value);
        CHECK_LONG(cond_if_range(v, e, LM_WED, true, LM_WED + 1), if_range_wed[i].want,
                   if_range_wed[i].why);
        free_single(v);
    }
    guarded_free(etag, strlen(ETAG));
}

/* §8.8.2.2: a date is a strong validator only when Last-Modified is at
 * least one second before now; one clamped to now never is. */
static void test_if_range_weak_date(void)
{
    char *etag = guarded_copy(ETAG, strlen(ETAG));
    struct span e = span_make(etag, strlen(ETAG));
    struct span v = single(D_LM);
    CHECK_LONG(cond_if_range(v, e, LM, true, LM), false, "If-Range date: modified this second");
    CHECK_LONG(cond_if_range(v, e, LM, true, LM + 1), true, "If-Range date: one second before");
    CHECK_LONG(cond_if_range(v, e, LM, true, LM - 5), false, "If-Range date: now before it");
    free_single(v);
    v = single(ETAG);
    CHECK_LONG(cond_if_range(v, e, LM, true, LM), true, "If-Range tag: strong whatever the time");
    free_single(v);
    guarded_free(etag, strlen(ETAG));
}

/* DEL (0x7f) is no etagc (RFC 9110 §8.8.3): a tag holding it is malformed,
 * and a malformed list matches nothing. */
static void test_del_in_tag(void)
{
    char *etag = guarded_copy(ETAG, strlen(ETAG));
    struct span e = span_make(etag, strlen(ETAG));
    static const char *const lines[HTTP_LIST_MAX] = {"\"x\x7f\", " ETAG};
    struct span_list l;
    fill_list(&l, lines);
    CHECK_LONG(cond_etag_list_match(&l, e, false), false, "DEL in an entity-tag: no match");
    free_list(&l);
    guarded_free(etag, strlen(ETAG));
}

int main(void)
{
    test_del_in_tag();
    test_if_range_weak_date();
    test_evaluate();
    test_list();
    test_if_range();
    test_if_range_wednesday();
    return unit_done();
}

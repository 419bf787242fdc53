/* SPDX-License-Identifier: MIT */
/*
 * test_date.c - date_format_imf/clf/iso() and date_parse_http() against
 * date.h: fixed instants (the epoch, RFC 9110's example, leap days, the
 * 2100 non-leap year, the ends of the range), one row per rule of the three
 * accepted formats and per rejection, and 10,000 pseudo-random instants
 * checked against glibc's gmtime_r()/strftime() and round-tripped through
 * all three formats. Inputs and outputs lie against a guard page.
 */
#include <time.h>

#include "core/date.h"
#include "unit.h"

/* ---- formatting ---------------------------------------------------------- */

static const struct format_row {
    int64_t t;
    const char *imf, *clf, *iso; /* NULL: the formatters return 0 */
    const char *why;
} format_rows[] = {
    {0, "Thu, 01 Jan 1970 00:00:00 GMT", "01/Jan/1970:00:00:00 +0000", "1970-01-01T00:00:00Z",
     "the epoch"},
    {784111777, "Sun, 06 Nov 1994 08:49:37 GMT", "06/Nov/1994:08:49:37 +0000",
     "1994-11-06T08:49:37Z", "RFC 9110's example"},
    {68169600, "Tue, 29 Feb 1972 00:00:00 GMT", "29/Feb/1972:00:00:00 +0000",
     "1972-02-29T00:00:00Z", "first leap day after the epoch"},
    {951782400, "Tue, 29 Feb 2000 00:00:00 GMT", "29/Feb/2000:00:00:00 +0000",
     "2000-02-29T00:00:00Z", "2000 is a leap year (divisible by 400)"},
    {951868800, "Wed, 01 Mar 2000 00:00:00 GMT", "01/Mar/2000:00:00:00 +0000",
     "2000-03-01T00:00:00Z", "the day after 2000-02-29"},
    {4107542399, "Sun, 28 Feb 2100 23:59:59 GMT", "28/Feb/2100:23:59:59 +0000",
     "2100-02-28T23:59:59Z", "last second of February 2100"},
    {4107542400, "Mon, 01 Mar 2100 00:00:00 GMT", "01/Mar/2100:00:00:00 +0000",
     "2100-03-01T00:00:00Z", "2100 is not a leap year: 02-28 -> 03-01"},
    {1709208000, "Thu, 29 Feb 2024 12:00:00 GMT", "29/Feb/2024:12:00:00 +0000",
     "2024-02-29T12:00:00Z", "a recent leap day"},
    {2147483647, "Tue, 19 Jan 2038 03:14:07 GMT", "19/Jan/2038:03:14:07 +0000",
     "2038-01-19T03:14:07Z", "INT32_MAX"},
    {2147483648, "Tue, 19 Jan 2038 03:14:08 GMT", "19/Jan/2038:03:14:08 +0000",
     "2038-01-19T03:14:08Z", "INT32_MAX + 1 (no 2038 problem)"},
    {DATE_MAX, "Fri, 31 Dec 9999 23:59:59 GMT", "31/Dec/9999:23:59:59 +0000",
     "9999-12-31T23:59:59Z", "DATE_MAX is the last second of 9999"},
    {DATE_MAX + 1, NULL, NULL, NULL, "DATE_MAX + 1: year 10000"},
    {-1, NULL, NULL, NULL, "one second before the epoch"},
    {INT64_MIN, NULL, NULL, NULL, "INT64_MIN"},
    {INT64_MAX, NULL, NULL, NULL, "INT64_MAX (darkhttpd CVE-2020-25691)"},
};

/* Calls one formatter into a buffer of exactly `len` bytes against a guard
 * page, and compares with want (NULL: must return 0). */
static void check_format(size_t (*fmt)(int64_t, char *), int64_t t, size_t len, const char *want,
                         const char *why)
{
    char *out = guarded_copy("????????????????????????????????", len);
    size_t got = fmt(t, out);
    if (want) {
        CHECK_LONG(got, len, why);
        CHECK_MEM(out, got == len ? len : 0, want, strlen(want), why);
    } else {
        CHECK_LONG(got, 0, why);
    }
    guarded_free(out, len);
}

static void test_format(void)
{
    for (size_t i = 0; i < ARRAY_LEN(format_rows); i++) {
        const struct format_row *r = &format_rows[i];
        check_format(date_format_imf, r->t, DATE_IMF_LEN, r->imf, r->why);
        check_format(date_format_clf, r->t, DATE_CLF_LEN, r->clf, r->why);
        check_format(date_format_iso, r->t, DATE_ISO_LEN, r->iso, r->why);
    }
}

/* ---- parsing ------------------------------------------------------------- */

#define REJECT (-1)

static const struct parse_row {
    const char *in;
    int64_t want; /* REJECT: false */
    const char *why;
} parse_rows[] = {
    /* the three formats of the same instant (RFC 9110 §5.6.7) */
    {"Sun, 06 Nov 1994 08:49:37 GMT", 784111777, "IMF-fixdate"},
    {"Sunday, 06-Nov-94 08:49:37 GMT", 784111777, "RFC 850"},
    {"Sun Nov  6 08:49:37 1994", 784111777, "asctime, day padded with a space"},
    {"Sun Nov 06 08:49:37 1994", 784111777, "asctime, date3 = month SP 2DIGIT"},
    {"Thu, 01 Jan 1970 00:00:00 GMT", 0, "the epoch"},
    {"Thursday, 01-Jan-70 00:00:00 GMT", 0, "the epoch, RFC 850"},
    {"Thu Jan  1 00:00:00 1970", 0, "the epoch, asctime"},
    {"Fri, 31 Dec 9999 23:59:59 GMT", DATE_MAX, "DATE_MAX"},
    {"Fri Dec 31 23:59:59 9999", DATE_MAX, "DATE_MAX, asctime"},
    {"Wednesday, 01-Mar-00 00:00:00 GMT", 951868800, "RFC 850 longest day name, 00 -> 2000"},

    /* calendar */
    {"Tue, 29 Feb 2000 00:00:00 GMT", 951782400, "leap day of 2000"},
    {"Tue, 29 Feb 1972 00:00:00 GMT", 68169600, "leap day of 1972"},
    {"Mon, 01 Mar 2100 00:00:00 GMT", 4107542400, "2100-03-01"},
    {"Mon, 29 Feb 2100 00:00:00 GMT", REJECT, "2100 is not a leap year"},
    {"Tue, 29 Feb 1994 00:00:00 GMT", REJECT, "1994 is not a leap year"},
    {"Sun, 30 Feb 2000 00:00:00 GMT", REJECT, "Feb 30"},
    {"Sun, 31 Apr 1994 00:00:00 GMT", REJECT, "Apr 31"},
    {"Sun, 31 Nov 1994 00:00:00 GMT", REJECT, "Nov 31"},
    {"Sun, 00 Nov 1994 00:00:00 GMT", REJECT, "day 00"},
    {"Sun, 32 Jan 1994 00:00:00 GMT", REJECT, "day 32"},
    {"Sat, 31 Dec 1994 00:00:00 GMT", 788832000, "Dec 31"},
    {"Sun, 06 Nov 1994 24:00:00 GMT", REJECT, "hour 24"},
    {"Sun, 06 Nov 1994 08:60:00 GMT", REJECT, "minute 60"},
    {"Sun, 06 Nov 1994 08:49:61 GMT", REJECT, "second 61"},
    {"Sun, 06 Nov 1994 23:59:59 GMT", 784166399, "last second of a day"},
    {"Sun, 06 Nov 1994 08:49:60 GMT", 784111799,
     "second 60 (a leap second in the ABNF) is folded into :59"},

    /* the weekday: date.h validates the format and the calendar only, so a
     * well-formed but wrong day name is accepted (as nginx and Apache do) */
    {"Mon, 06 Nov 1994 08:49:37 GMT", 784111777, "wrong weekday accepted (not checked)"},
    {"Monday, 06-Nov-94 08:49:37 GMT", 784111777, "wrong weekday accepted, RFC 850"},
    {"Xyz, 06 Nov 1994 08:49:37 GMT", REJECT, "not a day name"},
    {"sun, 06 Nov 1994 08:49:37 GMT", REJECT, "lower-case day name"},
    {"SUN, 06 Nov 1994 08:49:37 GMT", REJECT, "upper-case day name"},
    {"Sunday, 06 Nov 1994 08:49:37 GMT", REJECT, "long day name in IMF-fixdate"},
    {"Sun, 06-Nov-94 08:49:37 GMT", REJECT, "short day name in RFC 850"},
    {"Sunday Nov  6 08:49:37 1994", REJECT, "long day name in asctime"},

    /* the month */
    {"Sun, 06 nov 1994 08:49:37 GMT", REJECT, "lower-case month"},
    {"Sun, 06 NOV 1994 08:49:37 GMT", REJECT, "upper-case month"},
    {"Sun, 06 Nov. 1994 08:49:37 GMT", REJECT, "month with a dot"},
    {"Sun, 06 November 1994 08:49:37 GMT", REJECT, "long month"},
    {"Sun, 06 11 1994 08:49:37 GMT", REJECT, "numeric month"},

    /* the zone */
    {"Sun, 06 Nov 1994 08:49:37", REJECT, "GMT missing"},
    {"Sun, 06 Nov 1994 08:49:37 UTC", REJECT, "UTC instead of GMT"},
    {"Sun, 06 Nov 1994 08:49:37 gmt", REJECT, "lower-case gmt"},
    {"Sun, 06 Nov 1994 08:49:37 +0000", REJECT, "numeric zone"},
    {"Sunday, 06-Nov-94 08:49:37", REJECT, "RFC 850 without GMT"},
    {"Sun Nov  6 08:49:37 1994 GMT", REJECT, "asctime with GMT"},

    /* spacing (the caller trims OWS) */
    {" Sun, 06 Nov 1994 08:49:37 GMT", REJECT, "leading space"},
    {"Sun, 06 Nov 1994 08:49:37 GMT ", REJECT, "trailing space"},
    {"Sun, 06 Nov 1994 08:49:37 GMT\t", REJECT, "trailing tab"},
    {"Sun,  06 Nov 1994 08:49:37 GMT", REJECT, "two spaces after the comma"},
    {"Sun,06 Nov 1994 08:49:37 GMT", REJECT, "no space after the comma"},
    {"Sun, 06  Nov 1994 08:49:37 GMT", REJECT, "two spaces before the month"},
    {"Sun, 06 Nov 1994  08:49:37 GMT", REJECT, "two spaces before the time"},
    {"Sun, 06 Nov 1994 08:49:37  GMT", REJECT, "two spaces before GMT"},
    {"Sun, 06\tNov 1994 08:49:37 GMT", REJECT, "tab instead of space"},
    {"Sun Nov 6 08:49:37 1994", REJECT, "asctime single-digit day without padding"},
    {"Sun Nov   6 08:49:37 1994", REJECT, "asctime with three spaces"},

    /* digits */
    {"Sun, 6 Nov 1994 08:49:37 GMT", REJECT, "one-digit day in IMF-fixdate"},
    {"Sun, 06 Nov 94 08:49:37 GMT", REJECT, "two-digit year in IMF-fixdate"},
    {"Sun, 06 Nov 01994 08:49:37 GMT", REJECT, "five-digit year"},
    {"Sun, 06 Nov 1994 8:49:37 GMT", REJECT, "one-digit hour"},
    {"Sun, 06 Nov 1994 08:49:7 GMT", REJECT, "one-digit second"},
    {"Sun, 06 Nov 1994 08.49.37 GMT", REJECT, "dots in the time"},
    {"Sun, 06 Nov 1994 08:49 GMT", REJECT, "no seconds"},
    {"Sun, +6 Nov 1994 08:49:37 GMT", REJECT, "sign in the day"},
    {"Sun, 06 Nov 199a 08:49:37 GMT", REJECT, "letter in the year"},
    {"Sunday, 06-Nov-1994 08:49:37 GMT", REJECT, "four-digit year in RFC 850"},
    {"Sun Nov  6 08:49:37 94", REJECT, "two-digit year in asctime"},

    /* two-digit years (RFC 850): 70-99 are 19xx, 00-69 are 20xx */
    {"Friday, 06-Nov-70 08:49:37 GMT", 26729377, "70 -> 1970"},
    {"Wednesday, 06-Nov-69 08:49:37 GMT", 3150953377, "69 -> 2069"},
    {"Saturday, 31-Dec-99 23:59:59 GMT", 946684799, "99 -> 1999"},

    /* the year range */
    {"Wed, 31 Dec 1969 23:59:59 GMT", REJECT, "1969: before the epoch"},
    {"Sat, 01 Jan 0000 00:00:00 GMT", REJECT, "year 0000"},
    {"Mon, 01 Jan 1900 00:00:00 GMT", REJECT, "year 1900"},
    {"Wed Dec 31 23:59:59 1969", REJECT, "1969 in asctime"},

    /* other garbage */
    {"", REJECT, "empty"},
    {"0", REJECT, "a number"},
    {"784111777", REJECT, "seconds since the epoch"},
    {"1994-11-06T08:49:37Z", REJECT, "ISO 8601"},
    {"06/Nov/1994:08:49:37 +0000", REJECT, "common log format"},
    {"Sun, 06 Nov 1994 08:49:37 GMTx", REJECT, "trailing byte"},
    {"Sun, 06 Nov 1994 08:49:37 GM", REJECT, "truncated zone"},
    {"Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT", REJECT, "two dates"},
    {"Sun, 06 Nov 1994 08:49:37 GMT; length=123", REJECT, "IE's length parameter"},
};

/* Inputs with NUL bytes need an explicit length. */
static const struct parse_nul_row {
    const char *in;
    size_t n;
    const char *why;
} parse_nul_rows[] = {
    {"Sun, 06 Nov 1994 08:49:37 GMT\0", 30, "trailing NUL"},
    {"Sun, 06 Nov 1994\0008:49:37 GMT", 29, "NUL instead of a space"},
    {"\0un, 06 Nov 1994 08:49:37 GMT", 29, "leading NUL"},
};

static void test_parse(void)
{
    for (size_t i = 0; i < ARRAY_LEN(parse_rows); i++) {
        const struct parse_row *r = &parse_rows[i];
        size_t n = strlen(r->in);
        char *p = guarded_copy(r->in, n);
        int64_t t = 12345;
        bool ok = date_parse_http(span_make(p, n), &t);
        CHECK_LONG(ok, r->want != REJECT, r->why);
        if (ok && r->want != REJECT)
            CHECK_LONG(t, r->want, r->why);
        guarded_free(p, n);
    }
    for (size_t i = 0; i < ARRAY_LEN(parse_nul_rows); i++) {
        const struct parse_nul_row *r = &parse_nul_rows[i];
        char *p = guarded_copy(r->in, r->n);
        int64_t t;
        CHECK_LONG(date_parse_http(span_make(p, r->n), &t), false, r->why);
        guarded_free(p, r->n);
    }
    /* Every prefix of a valid date is rejected, and no read goes past it. */
    const char *full[] = {"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
                          "Sun Nov  6 08:49:37 1994"};
    unit_gen_begin();
    for (size_t k = 0; k < ARRAY_LEN(full); k++) {
        size_t n = strlen(full[k]);
        for (size_t len = 0; len < n; len++) {
            char *p = guarded_copy(full[k], len);
            int64_t t;
            CHECK_LONG(date_parse_http(span_make(p, len), &t), false, "a proper prefix");
            guarded_free(p, len);
        }
    }
    unit_gen_end();
}

/* ---- pseudo-random instants against glibc -------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng_next(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static void parse_string(const char *s, int64_t want, const char *why)
{
    size_t n = strlen(s);
    char *p = guarded_copy(s, n);
    int64_t t = -1;
    bool ok = date_parse_http(span_make(p, n), &t);
    CHECK(ok, why);
    if (ok)
        CHECK_LONG(t, want, why);
    guarded_free(p, n);
}

static void check_instant(int64_t t)
{
    time_t tt = (time_t)t;
    struct tm tm;
    char want[64], got[DATE_IMF_LEN];
    bool ok = gmtime_r(&tt, &tm) != NULL;
    CHECK(ok, "gmtime_r gives the instant a calendar date");
    if (!ok)
        return;

    strftime(want, sizeof want, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    CHECK_LONG(date_format_imf(t, got), DATE_IMF_LEN, "random: IMF length");
    CHECK_MEM(got, DATE_IMF_LEN, want, strlen(want), "random: IMF equals strftime");
    parse_string(want, t, "random: IMF-fixdate round trip");

    strftime(want, sizeof want, "%d/%b/%Y:%H:%M:%S +0000", &tm);
    CHECK_LONG(date_format_clf(t, got), DATE_CLF_LEN, "random: CLF length");
    CHECK_MEM(got, DATE_CLF_LEN, want, strlen(want), "random: CLF equals strftime");

    strftime(want, sizeof want, "%Y-%m-%dT%H:%M:%SZ", &tm);
    CHECK_LONG(date_format_iso(t, got), DATE_ISO_LEN, "random: ISO length");
    CHECK_MEM(got, DATE_ISO_LEN, want, strlen(want), "random: ISO equals strftime");

    /* asctime() pads the day with a space, as RFC 9110 §5.6.7 shows. */
    strftime(want, sizeof want, "%a %b %e %H:%M:%S %Y", &tm);
    parse_string(want, t, "random: asctime round trip");

    if (tm.tm_year + 1900 <= 2069) { /* RFC 850 years reach 1970..2069 */
        /* built in pieces: gcc's -Wformat-y2k refuses a literal %y */
        size_t k = strftime(want, sizeof want, "%A, %d-%b-", &tm);
        k += (size_t)snprintf(want + k, sizeof want - k, "%02d", tm.tm_year % 100);
        strftime(want + k, sizeof want - k, " %H:%M:%S GMT", &tm);
        parse_string(want, t, "random: RFC 850 round trip");
    }
}

static void test_random(void)
{
    unit_gen_begin();
    for (int i = 0; i < 10000; i++) {
        int64_t t;
        switch (i % 4) {
        case 0: t = (int64_t)(rng_next() % (uint64_t)(DATE_MAX + 1)); break;
        case 1: t = (int64_t)(rng_next() % UINT64_C(3155760000)); break; /* 1970..2069 */
        case 2: t = (int64_t)(rng_next() % 86400) + (int64_t)(rng_next() % 10) * 86400; break;
        default: t = DATE_MAX - (int64_t)(rng_next() % UINT64_C(100000000)); break;
        }
        check_instant(t);
    }
    unit_gen_end();
    /* the ends, exactly */
    check_instant(0);
    check_instant(DATE_MAX);
}

int main(void)
{
    setenv("TZ", "UTC", 1); /* strftime's %a etc. are locale-free in "C" anyway */
    tzset();
    test_format();
    test_parse();
    test_random();
    return unit_done();
}

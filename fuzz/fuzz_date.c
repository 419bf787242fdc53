/* SPDX-License-Identifier: MIT */
/*
 * fuzz_date.c - date_parse_http() on arbitrary bytes, against an oracle
 * written here from RFC 9110 §5.6.7 and date.h (the three formats matched
 * against templates, the calendar checked by glibc's timegm()/gmtime_r()).
 * It traps when the parser and the oracle disagree on acceptance or on the
 * time, when an accepted time lies outside [DATE_MIN, DATE_MAX], when
 * date_format_imf() of it does not re-parse to the same time or differs
 * from strftime(), and when an accepted IMF-fixdate with the right weekday
 * does not format back to the very same bytes. The input's first 8 bytes,
 * read as a time, also go through all three formatters (0 outside the
 * range, glibc's text inside it). Outputs are heap buffers of exactly the
 * documented length, so a write past them is an ASan report.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/date.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_date: %s\n", what);
        __builtin_trap();
    }
}

/* ---- the oracle ---------------------------------------------------------- */

static const char *const short_days[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
static const char *const long_days[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                        "Friday", "Saturday", "Sunday"};
static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

struct cursor {
    const char *p;
    size_t n, at;
};

struct fields {
    int year, mon, day, hour, min, sec;
};

static bool lit(struct cursor *c, const char *s)
{
    size_t k = strlen(s);
    if (c->n - c->at < k || memcmp(c->p + c->at, s, k) != 0)
        return false;
    c->at += k;
    return true;
}

/* Index of the name at the cursor, or -1 (exact case, whole name). */
static int name(struct cursor *c, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (lit(c, names[i]))
            return i;
    return -1;
}

static bool digits(struct cursor *c, int width, int *out)
{
    if (c->n - c->at < (size_t)width)
        return false;
    int v = 0;
    for (int i = 0; i < width; i++) {
        char d = c->p[c->at + (size_t)i];
        if (d < '0' || d > '9')
            return false;
        v = v * 10 + (d - '0');
    }
    c->at += (size_t)width;
    *out = v;
    return true;
}

static bool clock_of(struct cursor *c, struct fields *f)
{
    return digits(c, 2, &f->hour) && lit(c, ":") && digits(c, 2, &f->min) && lit(c, ":") &&
           digits(c, 2, &f->sec);
}

/* IMF-fixdate: day-name "," SP 2DIGIT SP month SP 4DIGIT SP time SP "GMT" */
static bool match_imf(const char *p, size_t n, struct fields *f)
{
    struct cursor c = {p, n, 0};
    return name(&c, short_days, 7) >= 0 && lit(&c, ", ") && digits(&c, 2, &f->day) &&
           lit(&c, " ") && (f->mon = name(&c, months, 12) + 1) > 0 && lit(&c, " ") &&
           digits(&c, 4, &f->year) && lit(&c, " ") && clock_of(&c, f) && lit(&c, " GMT") &&
           c.at == n;
}

/* rfc850-date: day-name-l "," SP 2DIGIT "-" month "-" 2DIGIT SP time SP "GMT" */
static bool match_rfc850(const char *p, size_t n, struct fields *f)
{
    struct cursor c = {p, n, 0};
    int yy = 0;
    bool ok = name(&c, long_days, 7) >= 0 && lit(&c, ", ") && digits(&c, 2, &f->day) &&
              lit(&c, "-") && (f->mon = name(&c, months, 12) + 1) > 0 && lit(&c, "-") &&
              digits(&c, 2, &yy) && lit(&c, " ") && clock_of(&c, f) && lit(&c, " GMT") && c.at == n;
    f->year = yy < 70 ? 2000 + yy : 1900 + yy; /* date.h's mapping */
    return ok;
}

/* asctime-date: day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time SP 4DIGIT */
static bool match_asctime(const char *p, size_t n, struct fields *f)
{
    struct cursor c = {p, n, 0};
    if (!(name(&c, short_days, 7) >= 0 && lit(&c, " ") && (f->mon = name(&c, months, 12) + 1) > 0 &&
          lit(&c, " ")))
        return false;
    bool day = lit(&c, " ") ? digits(&c, 1, &f->day) : digits(&c, 2, &f->day);
    return day && lit(&c, " ") && clock_of(&c, f) && lit(&c, " ") && digits(&c, 4, &f->year) &&
           c.at == n;
}

/* The calendar by glibc: the date must survive timegm() -> gmtime_r(). */
static bool calendar(const struct fields *f, int64_t *t)
{
    if (f->year < 1970 || f->year > 9999 || f->mon < 1 || f->mon > 12 || f->day < 1 ||
        f->hour > 23 || f->min > 59 || f->sec > 60)
        return false;
    struct tm tm = {0};
    tm.tm_year = f->year - 1900;
    tm.tm_mon = f->mon - 1;
    tm.tm_mday = f->day;
    tm.tm_hour = f->hour;
    tm.tm_min = f->min;
    tm.tm_sec = f->sec > 59 ? 59 : f->sec; /* date.h folds a leap second */
    time_t tt = timegm(&tm);
    struct tm back;
    if (!gmtime_r(&tt, &back) || back.tm_mday != f->day || back.tm_mon != f->mon - 1)
        return false; /* Feb 30 and friends normalize into another month */
    *t = (int64_t)tt;
    return true;
}

static bool oracle(const char *p, size_t n, int64_t *t)
{
    struct fields f = {0};
    if (match_imf(p, n, &f) || match_rfc850(p, n, &f) || match_asctime(p, n, &f))
        return calendar(&f, t);
    return false;
}

/* ---- checks -------------------------------------------------------------- */

static void check_format(int64_t t)
{
    char *imf = malloc(DATE_IMF_LEN), *clf = malloc(DATE_CLF_LEN), *iso = malloc(DATE_ISO_LEN);
    size_t a = date_format_imf(t, imf), b = date_format_clf(t, clf), c = date_format_iso(t, iso);
    if (t < DATE_MIN || t > DATE_MAX) {
        require(a == 0 && b == 0 && c == 0, "formatted a time outside the range");
    } else {
        require(a == DATE_IMF_LEN && b == DATE_CLF_LEN && c == DATE_ISO_LEN, "format length");
        time_t tt = (time_t)t;
        struct tm tm;
        char want[64];
        require(gmtime_r(&tt, &tm) != NULL, "gmtime_r");
        strftime(want, sizeof want, "%a, %d %b %Y %H:%M:%S GMT", &tm);
        require(memcmp(imf, want, DATE_IMF_LEN) == 0, "IMF differs from strftime");
        strftime(want, sizeof want, "%d/%b/%Y:%H:%M:%S +0000", &tm);
        require(memcmp(clf, want, DATE_CLF_LEN) == 0, "CLF differs from strftime");
        strftime(want, sizeof want, "%Y-%m-%dT%H:%M:%SZ", &tm);
        require(memcmp(iso, want, DATE_ISO_LEN) == 0, "ISO differs from strftime");
        int64_t back = -1;
        require(date_parse_http(span_make(imf, DATE_IMF_LEN), &back) && back == t,
                "format -> parse is not the identity");
    }
    free(imf);
    free(clf);
    free(iso);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    int64_t t = -1, want = -1;
    bool ok = date_parse_http(span_make(p, size), &t);
    bool ref = oracle(p, size, &want);
    require(ok == ref, ok ? "accepted, the oracle refuses" : "refused, the oracle accepts");
    if (ok) {
        require(t == want, "time differs from the oracle");
        require(t >= DATE_MIN && t <= DATE_MAX, "accepted a time outside the range");
        check_format(t);
        /* An accepted IMF-fixdate formats back to itself, the weekday aside
         * (not checked on input) and a leap second aside (folded). */
        char out[DATE_IMF_LEN];
        if (size == DATE_IMF_LEN && p[3] == ',' && memcmp(p + 23, "60", 2) != 0) {
            require(date_format_imf(t, out) == DATE_IMF_LEN, "format length");
            require(memcmp(out + 3, p + 3, DATE_IMF_LEN - 3) == 0, "IMF does not round-trip");
            if (memcmp(out, p, 3) == 0)
                require(memcmp(out, p, DATE_IMF_LEN) == 0, "IMF does not round-trip");
        }
    }
    if (size >= 8) {
        int64_t raw;
        memcpy(&raw, data, 8);
        check_format(raw);
        check_format((int64_t)((uint64_t)raw % (uint64_t)(DATE_MAX + 1)));
    }
    return 0;
}

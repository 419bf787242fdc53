/* SPDX-License-Identifier: MIT */
/*
 * date.c - HTTP date formatting and parsing by calendar arithmetic
 * (Howard Hinnant's days_from_civil/civil_from_days algorithms, proleptic
 * Gregorian calendar). Strict on input: a date that is not exactly one of the
 * RFC 9110 §5.6.7 formats is rejected, and callers treat it as absent.
 */
#include "date.h"

#include "bytes.h"

static const char day_names[7][4] = {"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"};
static const char month_names[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* Every date here lies in 1970..9999 (DATE_MIN..DATE_MAX, and what
 * civil_to_time accepts), so the arithmetic is unsigned and, but for
 * splitting a time into days, 32-bit: on 32-bit ABIs a signed 64-bit
 * division is a libgcc call that pith-tiny would otherwise link for it. */
struct civil {
    unsigned year;
    unsigned month; /* 1..12 */
    unsigned day;   /* 1..31 */
    unsigned hour, min, sec;
    unsigned wday; /* index into day_names: 0 = Thursday (the epoch's day) */
};

/* Days since 1970-01-01 of a date in 1970..9999 (under 3 million). */
static unsigned days_from_civil(unsigned y, unsigned m, unsigned d)
{
    y -= m <= 2;
    unsigned era = y / 400;
    unsigned yoe = y - era * 400;
    unsigned doy = (153 * (m + (m > 2 ? (unsigned)-3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Only called for t in [DATE_MIN, DATE_MAX]. */
static struct civil civil_from_time(int64_t t)
{
    struct civil c;
    /* t / 86400 as (t / 128) / 675: t < 2^38 (DATE_MAX), so the second
     * division is a 32-bit one; no 64-bit division helper on 32-bit ABIs. */
    unsigned days = (uint32_t)((uint64_t)t >> 7) / 675;
    unsigned rem = (unsigned)((uint64_t)t - (uint64_t)days * 86400);
    c.hour = rem / 3600;
    c.min = rem % 3600 / 60;
    c.sec = rem % 60;
    c.wday = days % 7;
    unsigned z = days + 719468;
    unsigned era = z / 146097;
    unsigned doe = z - era * 146097;
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    c.day = doy - (153 * mp + 2) / 5 + 1;
    c.month = mp < 10 ? mp + 3 : mp - 9;
    c.year = yoe + era * 400 + (c.month <= 2);
    return c;
}

static void put2(char *out, unsigned v)
{
    out[0] = (char)('0' + v / 10 % 10);
    out[1] = (char)('0' + v % 10);
}

static void put4(char *out, unsigned v)
{
    put2(out, v / 100);
    put2(out + 2, v % 100);
}

static void put_time(char *out, const struct civil *c)
{
    put2(out, c->hour);
    out[2] = ':';
    put2(out + 3, c->min);
    out[5] = ':';
    put2(out + 6, c->sec);
}

size_t date_format_imf(int64_t t, char *out)
{
    if (t < DATE_MIN || t > DATE_MAX)
        return 0;
    struct civil c = civil_from_time(t);
    mem_copy(out, day_names[c.wday], 3);
    out[3] = ',';
    out[4] = ' ';
    put2(out + 5, c.day);
    out[7] = ' ';
    mem_copy(out + 8, month_names[c.month - 1], 3);
    out[11] = ' ';
    put4(out + 12, c.year);
    out[16] = ' ';
    put_time(out + 17, &c);
    mem_copy(out + 25, " GMT", 4);
    return DATE_IMF_LEN;
}

size_t date_format_clf(int64_t t, char *out)
{
    if (t < DATE_MIN || t > DATE_MAX)
        return 0;
    struct civil c = civil_from_time(t);
    put2(out, c.day);
    out[2] = '/';
    mem_copy(out + 3, month_names[c.month - 1], 3);
    out[6] = '/';
    put4(out + 7, c.year);
    out[11] = ':';
    put_time(out + 12, &c);
    mem_copy(out + 20, " +0000", 6);
    return DATE_CLF_LEN;
}

size_t date_format_iso(int64_t t, char *out)
{
    if (t < DATE_MIN || t > DATE_MAX)
        return 0;
    struct civil c = civil_from_time(t);
    put4(out, c.year);
    out[4] = '-';
    put2(out + 5, c.month);
    out[7] = '-';
    put2(out + 8, c.day);
    out[10] = 'T';
    put_time(out + 11, &c);
    out[19] = 'Z';
    return DATE_ISO_LEN;
}

/* ---- parsing ---------------------------------------------------------------- */

/* The long day names are the short ones with these tails ("Thu" "rsday"). */
static const char long_day_tails[7][7] = {"rsday", "day", "urday", "day", "day", "sday", "nesday"};

/* Reads exactly `width` digits at s.p[*at] into *out; advances *at. */
static bool read_digits(struct span s, size_t *at, unsigned width, unsigned *out)
{
    unsigned v = 0;
    if (s.n - *at < width)
        return false;
    for (unsigned i = 0; i < width; i++) {
        char c = s.p[*at + i];
        if (!ascii_is_digit(c))
            return false;
        v = v * 10 + (unsigned)(c - '0');
    }
    *at += width;
    *out = v;
    return true;
}

static bool read_lit(struct span s, size_t *at, const char *lit, size_t n)
{
    if (s.n - *at < n || !mem_eq(s.p + *at, lit, n))
        return false;
    *at += n;
    return true;
}

/* The index of the 3-letter name of names[0..count) at *at, or -1. */
static int read_name(struct span s, size_t *at, const char (*names)[4], int count)
{
    for (int i = 0; i < count; i++)
        if (read_lit(s, at, names[i], 3))
            return i;
    return -1;
}

static bool is_leap(unsigned y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static bool civil_to_time(const struct civil *c, int64_t *t)
{
    static const unsigned char mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (c->year < 1970 || c->year > 9999 || c->month < 1 || c->month > 12 || c->day < 1)
        return false;
    unsigned limit = mdays[c->month - 1] + (c->month == 2 && is_leap(c->year));
    /* RFC 9110 §5.6.7 allows a leap second (60) in the syntax; fold it. */
    if (c->day > limit || c->hour > 23 || c->min > 59 || c->sec > 60)
        return false;
    *t = (int64_t)days_from_civil(c->year, c->month, c->day) * 86400 + c->hour * 3600 +
         c->min * 60 + (c->sec > 59 ? 59 : c->sec);
    return true;
}

/* The three formats as strftime templates, matched by one interpreter:
 * IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT", RFC 850 "Sunday, 06-Nov-94
 * 08:49:37 GMT" and asctime "Sun Nov  6 08:49:37 1994" (%e: the day padded
 * with a space, or two digits). Anything not a conversion is literal. */
static const char *const formats[3] = {"%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT",
                                       "%a %b %e %H:%M:%S %Y"};

static bool parse_format(struct span s, const char *f, struct civil *c)
{
    size_t at = 0;
    for (; *f; f++) {
        if (*f != '%') {
            if (!read_lit(s, &at, f, 1))
                return false;
            continue;
        }
        unsigned width = 2, *field = &c->day;
        int i;
        switch (*++f) {
        case 'a':
        case 'A':
            i = read_name(s, &at, day_names, 7);
            if (i < 0 ||
                (*f == 'A' && !read_lit(s, &at, long_day_tails[i], cstr_len(long_day_tails[i]))))
                return false;
            continue;
        case 'b':
            i = read_name(s, &at, month_names, 12);
            if (i < 0)
                return false;
            c->month = (unsigned)i + 1;
            continue;
        case 'e':
            if (read_lit(s, &at, " ", 1))
                width = 1;
            break;
        case 'Y':
            width = 4;
            /* fall through */
        case 'y': field = &c->year; break;
        case 'H': field = &c->hour; break;
        case 'M': field = &c->min; break;
        case 'S': field = &c->sec; break;
        }
        if (!read_digits(s, &at, width, field))
            return false;
        /* RFC 9110 §5.6.7: a two-digit year of 70-99 is 19xx, else 20xx. */
        if (*f == 'y')
            *field += *field < 70 ? 2000 : 1900;
    }
    return at == s.n;
}

bool date_parse_http(struct span s, int64_t *t)
{
    if (s.n < 24 || s.n > 40)
        return false;
    for (unsigned i = 0; i < 3; i++) {
        struct civil c = {0};
        if (parse_format(s, formats[i], &c))
            return civil_to_time(&c, t);
    }
    return false;
}

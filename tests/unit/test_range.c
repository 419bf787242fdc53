/* SPDX-License-Identifier: MIT */
/*
 * test_range.c - range_parse() against range.h: single, open and suffix
 * ranges, clamping, numbers of 20 and 25 digits, every syntax error that
 * makes the field ignored, unsatisfiable sets, empty list elements and OWS,
 * coalescing in any order, and the amplification limits (RANGE_MAX ranges,
 * total requested bytes, Apache CVE-2011-3192, nginx CVE-2017-7529). Inputs
 * lie against a guard page and the output array is exactly `max` long, so
 * a read past the value or a write past max faults.
 */
#include "core/range.h"
#include "unit.h"

#define IGN   RANGE_IGNORE
#define UNSAT RANGE_UNSATISFIABLE
#define MANY  RANGE_TOO_MANY
#define U64   UINT64_MAX

static const struct row {
    const char *in;
    uint64_t size;
    unsigned max;            /* 0: RANGE_MAX */
    int want;                /* n >= 1, or one of the codes */
    const char *want_ranges; /* "first-last first-last ..." when want >= 1 */
    const char *why;
} rows[] = {
    /* the three forms */
    {"bytes=0-9", 100, 0, 1, "0-9", "first-last"},
    {"bytes=10-", 100, 0, 1, "10-99", "open range"},
    {"bytes=-10", 100, 0, 1, "90-99", "suffix range"},
    {"bytes=0-0", 1, 0, 1, "0-0", "one byte of one"},
    {"bytes=0-", 1, 0, 1, "0-0", "open range of a one-byte file"},
    {"bytes=-1", 1, 0, 1, "0-0", "suffix of a one-byte file"},
    {"bytes=99-", 100, 0, 1, "99-99", "open range at the last byte"},
    {"bytes=99-99", 100, 0, 1, "99-99", "the last byte"},
    {"bytes=0-99", 100, 0, 1, "0-99", "the whole file"},
    {"bytes=00005-0009", 100, 0, 1, "5-9", "leading zeros"},

    /* clamping */
    {"bytes=0-100", 100, 0, 1, "0-99", "last-pos == size is clamped"},
    {"bytes=50-1000", 100, 0, 1, "50-99", "last-pos beyond the end is clamped"},
    {"bytes=-100", 100, 0, 1, "0-99", "suffix == size"},
    {"bytes=-1000", 100, 0, 1, "0-99", "suffix longer than the file"},

    /* big numbers: no overflow anywhere */
    {"bytes=0-18446744073709551615", 100, 0, 1, "0-99", "last-pos UINT64_MAX"},
    {"bytes=0-18446744073709551616", 100, 0, 1, "0-99", "last-pos UINT64_MAX + 1 is clamped"},
    {"bytes=0-99999999999999999999", 100, 0, 1, "0-99", "20-digit last-pos above UINT64_MAX"},
    {"bytes=0-1234567890123456789012345", 100, 0, 1, "0-99", "25-digit last-pos"},
    {"bytes=-1234567890123456789012345", 100, 0, 1, "0-99", "25-digit suffix"},
    {"bytes=-18446744073709551616", 100, 0, 1, "0-99", "suffix UINT64_MAX + 1"},
    {"bytes=18446744073709551615-", 100, 0, UNSAT, NULL, "first-pos UINT64_MAX"},
    {"bytes=18446744073709551616-", 100, 0, UNSAT, NULL, "first-pos UINT64_MAX + 1"},
    {"bytes=1234567890123456789012345-", 100, 0, UNSAT, NULL, "25-digit first-pos"},
    {"bytes=1234567890123456789012345-1234567890123456789012345", 100, 0, UNSAT, NULL,
     "25-digit first == last"},
    {"bytes=99999999999999999999-1", 100, 0, IGN, NULL, "huge first-pos, small last-pos: 5-4"},
    {"bytes=18446744073709551615-18446744073709551614", 100, 0, IGN, NULL,
     "first UINT64_MAX, last UINT64_MAX - 1: 5-4"},
    {"bytes=0-", U64, 0, 1, "0-18446744073709551614", "size UINT64_MAX"},
    {"bytes=-18446744073709551615", U64, 0, 1, "0-18446744073709551614",
     "suffix UINT64_MAX of size UINT64_MAX"},
    {"bytes=-1", U64, 0, 1, "18446744073709551614-18446744073709551614", "last byte of UINT64_MAX"},
    {"bytes=18446744073709551614-", U64, 0, 1, "18446744073709551614-18446744073709551614",
     "first-pos UINT64_MAX - 1 of size UINT64_MAX"},

    /* syntax errors: the field is ignored (RFC 9110 §14.2) */
    {"bytes=5-4", 100, 0, IGN, NULL, "last < first"},
    {"bytes=0-1,5-4", 100, 0, IGN, NULL, "one invalid spec invalidates the field"},
    {"bytes=5-4,0-1", 100, 0, IGN, NULL, "invalid spec first"},
    {"bytes=500-400", 100, 0, IGN, NULL, "last < first, both beyond the size"},
    {"items=0-1", 100, 0, IGN, NULL, "other unit"},
    {"byte=0-1", 100, 0, IGN, NULL, "'byte'"},
    {"bytesx=0-1", 100, 0, IGN, NULL, "unit with a suffix"},
    {"bytes", 100, 0, IGN, NULL, "no '='"},
    {"bytes=", 100, 0, IGN, NULL, "empty range-set"},
    {"bytes= ", 100, 0, IGN, NULL, "only OWS"},
    {"bytes=,", 100, 0, IGN, NULL, "only an empty element"},
    {"bytes=, ,\t,", 100, 0, IGN, NULL, "only empty elements"},
    {"", 100, 0, IGN, NULL, "empty value"},
    {"bytes =0-1", 100, 0, IGN, NULL, "space before '='"},
    {"bytes:0-1", 100, 0, IGN, NULL, "':' instead of '='"},
    {"bytes=-", 100, 0, IGN, NULL, "'-' alone"},
    {"bytes=--1", 100, 0, IGN, NULL, "double dash"},
    {"bytes=0--1", 100, 0, IGN, NULL, "negative last-pos"},
    {"bytes=1", 100, 0, IGN, NULL, "no dash"},
    {"bytes=1-2x", 100, 0, IGN, NULL, "trailing byte"},
    {"bytes=1-2;", 100, 0, IGN, NULL, "trailing ';'"},
    {"bytes=1-2-3", 100, 0, IGN, NULL, "two dashes"},
    {"bytes=a-b", 100, 0, IGN, NULL, "letters"},
    {"bytes=0x10-0x20", 100, 0, IGN, NULL, "hex"},
    {"bytes=+1-2", 100, 0, IGN, NULL, "plus sign"},
    {"bytes=1 -2", 100, 0, IGN, NULL, "space before '-'"},
    {"bytes=1- 2", 100, 0, IGN, NULL, "space after '-'"},
    {"bytes=- 2", 100, 0, IGN, NULL, "space inside a suffix"},
    {"bytes=0-1 2-3", 100, 0, IGN, NULL, "space instead of a comma"},
    {"bytes=0-1;2-3", 100, 0, IGN, NULL, "';' instead of a comma"},
    {"bytes=0-1,,x", 100, 0, IGN, NULL, "garbage after empty elements"},
    {"bytes=\r0-1", 100, 0, IGN, NULL, "CR is not OWS"},
    {"bytes=0-1\n", 100, 0, IGN, NULL, "LF is not OWS"},
    {"bytes=0-1\v", 100, 0, IGN, NULL, "VT is not OWS"},
    {"bytes=1.5-2", 100, 0, IGN, NULL, "decimal point"},
    {"bytes=0-,5-0,5-1,5-2,5-3,5-4,5-5", 100, 0, IGN, NULL, "Apache CVE-2011-3192 pattern"},

    /* unsatisfiable */
    {"bytes=-0", 100, 0, UNSAT, NULL, "suffix of zero bytes"},
    {"bytes=100-", 100, 0, UNSAT, NULL, "first-pos == size"},
    {"bytes=100-200", 100, 0, UNSAT, NULL, "range beyond the end"},
    {"bytes=100-,200-300,-0", 100, 0, UNSAT, NULL, "several, none satisfiable"},
    {"bytes=0-0", 0, 0, UNSAT, NULL, "empty file, first-last"},
    {"bytes=0-", 0, 0, UNSAT, NULL, "empty file, open"},
    {"bytes=-1", 0, 0, UNSAT, NULL, "empty file, suffix"},
    {"bytes=-0", 0, 0, UNSAT, NULL, "empty file, suffix 0"},
    {"bytes=0-0,-5,3-", 0, 0, UNSAT, NULL, "empty file, several"},
    {"bytes=0-0,100-", 100, 0, 1, "0-0", "one satisfiable is enough (§14.1.1)"},
    {"bytes=-0,5-5", 100, 0, 1, "5-5", "'-0' next to a satisfiable range"},
    {"bytes=5-4", 0, 0, IGN, NULL, "syntax beats the empty file"},

    /* empty list elements and OWS (§5.6.1.2) */
    {"bytes=0-9,", 100, 0, 1, "0-9", "trailing empty element"},
    {"bytes=,0-9", 100, 0, 1, "0-9", "leading empty element"},
    {"bytes=,,0-9,,", 100, 0, 1, "0-9", "several empty elements"},
    {"bytes=0-1 , 3-4", 100, 0, 2, "0-1 3-4", "SP around the comma"},
    {"bytes=0-1\t,\t3-4", 100, 0, 2, "0-1 3-4", "HTAB around the comma"},
    {"bytes=0-1 , , 3-4", 100, 0, 2, "0-1 3-4", "empty element between OWS"},
    {"bytes= 0-1", 100, 0, 1, "0-1", "OWS after '='"},
    {" bytes=0-1 ", 100, 0, 1, "0-1", "OWS around the value"},
    {"\tbytes=0-1\t", 100, 0, 1, "0-1", "HTAB around the value"},

    /* the unit is case-insensitive (§14.1) */
    {"Bytes=0-1", 100, 0, 1, "0-1", "'Bytes'"},
    {"BYTES=0-1", 100, 0, 1, "0-1", "'BYTES'"},
    {"bYtEs=0-1", 100, 0, 1, "0-1", "mixed case"},

    /* coalescing and sorting */
    {"bytes=0-9,10-19", 100, 0, 1, "0-19", "adjacent ranges merge"},
    {"bytes=10-19,0-9", 100, 0, 1, "0-19", "adjacent, reversed"},
    {"bytes=5-9,0-4", 100, 0, 1, "0-9", "adjacent, unsorted"},
    {"bytes=0-10,5-15", 100, 0, 1, "0-15", "overlapping"},
    {"bytes=0-50,10-20", 100, 0, 1, "0-50", "contained range"},
    {"bytes=0-9,11-19", 100, 0, 2, "0-9 11-19", "a gap of one byte stays"},
    {"bytes=20-29,0-9", 100, 0, 2, "0-9 20-29", "unsorted input is sorted"},
    {"bytes=50-59,0-9,30-39,10-29", 100, 0, 2, "0-39 50-59", "merge in the middle"},
    {"bytes=0-0,2-2,4-4,1-3", 100, 0, 1, "0-4", "one range joins three"},
    {"bytes=90-,-5,0-0", 100, 0, 2, "0-0 90-99", "open, suffix and first-last"},
    {"bytes=-10,0-9", 20, 0, 1, "0-19", "suffix adjacent to a first-last"},
    {"bytes=0-4,5-9", 10, 0, 1, "0-9", "two halves: total == size"},
    {"bytes=-5,0-4", 10, 0, 1, "0-9", "two halves, suffix first"},

    /* the total as requested (each range clamped, overlaps counted twice) */
    {"bytes=0-,0-", 10, 0, MANY, NULL, "'0-' twice asks for twice the size"},
    {"bytes=0-5,5-9", 10, 0, MANY, NULL, "11 bytes requested of 10"},
    {"bytes=0-,-1", 10, 0, MANY, NULL, "the whole file and its last byte"},
    {"bytes=0-999,0-0", 1000, 0, MANY, NULL, "the whole file and one byte"},
    {"bytes=0-,-65535", 100000, 0, MANY, NULL, "whole file plus a suffix"},
    {"bytes=0-100,0-100", 1000, 0, 1, "0-100", "202 of 1000 is fine"},
    {"bytes=0-,0-", U64 - 1, 0, MANY, NULL, "twice UINT64_MAX - 1: no wrap of the total"},
    {"bytes=-18446744073709551615,-18446744073709551615", INT64_MAX, 0, MANY, NULL,
     "two huge suffixes: the total saturates"},
    {"bytes=0-,0-,0-,0-,0-", 5, 0, MANY, NULL, "five times the whole file"},

    /* nginx CVE-2017-7529: a suffix chosen to overflow a signed total */
    {"bytes=-65535,-9223372036854710273", 10, 0, MANY, NULL, "CVE-2017-7529, small file"},
    {"bytes=-65535,-9223372036854710273", 100000, 0, MANY, NULL, "CVE-2017-7529, 100 kB"},
    {"bytes=-65535,-9223372036854710273", INT64_MAX, 0, MANY, NULL,
     "CVE-2017-7529, size INT64_MAX"},
    {"bytes=-65535,-9223372036854710273", U64, 0, 1, "9223372036854841342-18446744073709551614",
     "CVE-2017-7529, size UINT64_MAX: 2^63 bytes requested, one range"},

    /* numbers above UINT64_MAX are compared exactly (§14.1.1) */
    {"bytes=99999999999999999999999-99999999999999999999998", 100, 0, IGN, NULL,
     "23-digit last < first: a syntax error, not two saturated equal numbers"},
    {"bytes=000000000000000000000000005-4", 100, 0, IGN, NULL, "leading zeros do not count"},
    {"bytes=5-000000000000000000000000005", 100, 0, 1, "5-5", "long last-pos equal to first"},

    /* the total of a UINT64_MAX-byte representation cannot wrap */
    {"bytes=0-,0-", U64, 0, MANY, NULL, "'0-' twice of UINT64_MAX bytes: 2^65 - 2 requested"},
    {"bytes=-18446744073709551615,-1", U64, 0, MANY, NULL, "UINT64_MAX bytes, and one more"},

    /* max: ranges merge in the order received into max slots, and one that
     * finds no room ends the count (range.h) */
    {"bytes=0-0,2-2", 100, 1, MANY, NULL, "two disjoint with max 1"},
    {"bytes=0-0,2-2,0-2", 10, 1, MANY, NULL, "max 1: a later range joining them is too late"},
    {"bytes=0-2,0-0,2-2", 10, 1, 1, "0-2", "max 1: the covering range first"},
    {"bytes=0-0,2-2,0-0,2-2", 100, 2, 2, "0-0 2-2", "max 2: repeats find their slot"},
    {"bytes=0-0,1-1", 100, 1, 1, "0-1", "two adjacent with max 1"},
    {"bytes=0-0,2-2", 100, 2, 2, "0-0 2-2", "two disjoint with max 2"},
    {"bytes=0-0,2-2,4-4", 100, 2, MANY, NULL, "three disjoint with max 2"},
};

/* Parses "a-b c-d" into ranges; returns the count. */
static unsigned parse_want(const char *s, struct range *r, unsigned cap)
{
    unsigned n = 0;
    while (s && *s && n < cap) {
        char *end;
        r[n].first = strtoull(s, &end, 10);
        r[n].last = strtoull(end + 1, &end, 10);
        n++;
        s = end;
        while (*s == ' ')
            s++;
    }
    return n;
}

static struct range *guarded_ranges(unsigned max)
{
    struct range *z = calloc(max, sizeof *z);
    struct range *out = guarded_copy(z, max * sizeof *z);
    free(z);
    return out;
}

/* Runs one case; reports with `why`. want_ranges as in the rows. */
static void run(const char *in, size_t n, uint64_t size, unsigned max, int want,
                const char *want_ranges, const char *why)
{
    char *p = guarded_copy(in, n);
    struct range *out = guarded_ranges(max);
    int got = range_parse(span_make(p, n), size, out, max);
    CHECK_LONG(got, want, why);
    if (got == want && want >= 1) {
        struct range w[RANGE_MAX];
        unsigned wn = parse_want(want_ranges, w, RANGE_MAX);
        CHECK_LONG(wn, want, why);
        for (unsigned i = 0; i < wn && i < (unsigned)got; i++) {
            bool same = out[i].first == w[i].first && out[i].last == w[i].last;
            CHECK(same, why);
            if (!same)
                fprintf(stderr, "range %u: got %llu-%llu, want %llu-%llu\n", i,
                        (unsigned long long)out[i].first, (unsigned long long)out[i].last,
                        (unsigned long long)w[i].first, (unsigned long long)w[i].last);
        }
    }
    guarded_free(out, max * sizeof *out);
    guarded_free(p, n);
}

static void test_rows(void)
{
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        const struct row *r = &rows[i];
        run(r->in, strlen(r->in), r->size, r->max ? r->max : RANGE_MAX, r->want, r->want_ranges,
            r->why);
    }
}

/* Appends "sep" + s to a growing string. */
static void append(char **s, size_t *n, const char *add)
{
    size_t k = strlen(add);
    *s = realloc(*s, *n + k + 1);
    memcpy(*s + *n, add, k + 1);
    *n += k;
}

/* "bytes=" followed by count specs printed from fmt with i*step. */
static char *many(unsigned count, unsigned step, const char *tail, size_t *n)
{
    char *s = NULL, spec[64];
    *n = 0;
    append(&s, n, "bytes=");
    for (unsigned i = 0; i < count; i++) {
        snprintf(spec, sizeof spec, "%s%u-%u", i ? "," : "", i * step, i * step);
        append(&s, n, spec);
    }
    append(&s, n, tail);
    return s;
}

static void test_limits(void)
{
    size_t n;
    char *s;

    s = many(16, 2, "", &n);
    run(s, n, 1000, RANGE_MAX, 16,
        "0-0 2-2 4-4 6-6 8-8 10-10 12-12 14-14 16-16 18-18 20-20 22-22 24-24 26-26 28-28 30-30",
        "16 disjoint ranges: RANGE_MAX is allowed");
    free(s);

    s = many(17, 2, "", &n);
    run(s, n, 1000, RANGE_MAX, MANY, NULL, "17 disjoint ranges: more than RANGE_MAX");
    free(s);

    s = many(17, 1, "", &n);
    run(s, n, 1000, RANGE_MAX, 1, "0-16", "17 adjacent ranges coalesce into one");
    free(s);

    s = many(16, 2, ",40-", &n);
    run(s, n, 1000, RANGE_MAX, MANY, NULL, "16 disjoint + an open range = 17");
    free(s);

    s = many(17, 2, ",0-40", &n);
    run(s, n, 100, RANGE_MAX, MANY, NULL, "17 disjoint, then one covering all: too many");
    free(s);

    s = many(16, 2, ",0-40", &n);
    run(s, n, 100, RANGE_MAX, 1, "0-40", "16 disjoint, then one covering all: one range");
    free(s);

    s = many(1000, 0, "", &n); /* 1000 x "0-0" */
    run(s, n, 10, RANGE_MAX, MANY, NULL, "1000 x '0-0' on 10 bytes: 1000 bytes requested");
    run(s, n, 5000, RANGE_MAX, 1, "0-0", "1000 x '0-0' on 5000 bytes: one range");
    run(s, n, 1000, RANGE_MAX, 1, "0-0", "1000 x '0-0' on 1000 bytes: total == size");
    run(s, n, 999, RANGE_MAX, MANY, NULL, "1000 x '0-0' on 999 bytes: total > size");
    free(s);

    /* 20000 one-byte ranges in reverse order: linear in the input. */
    s = NULL;
    n = 0;
    append(&s, &n, "bytes=");
    for (int i = 19999; i >= 0; i--) {
        char spec[32];
        snprintf(spec, sizeof spec, "%s%d-%d", i == 19999 ? "" : ",", i % 8, i % 8);
        append(&s, &n, spec);
    }
    run(s, n, 1u << 20, RANGE_MAX, 1, "0-7", "20000 tiny overlapping ranges");
    free(s);

    /* Every proper prefix of a valid field is read within its bounds. */
    const char *full = "bytes=0-9,20-,-5";
    unit_gen_begin();
    for (size_t len = 0; len <= strlen(full); len++) {
        char *p = guarded_copy(full, len);
        struct range *out = guarded_ranges(RANGE_MAX);
        int got = range_parse(span_make(p, len), 100, out, RANGE_MAX);
        CHECK(got >= RANGE_TOO_MANY || got == RANGE_UNSATISFIABLE, "prefix: a known verdict");
        guarded_free(out, RANGE_MAX * sizeof *out);
        guarded_free(p, len);
    }
    unit_gen_end();
}

/* range_content_range(): the value of a 206's, a part's and a 416's
 * Content-Range, written into exactly RANGE_CONTENT_RANGE_MAX bytes against
 * a guard page. */
static void test_content_range(void)
{
    static const struct {
        uint64_t first, last, size;
        bool unsatisfied;
        const char *want;
    } cr_rows[] = {
        {0, 9, 100, false, "bytes 0-9/100"},
        {99, 99, 100, false, "bytes 99-99/100"},
        {0, 0, 1, false, "bytes 0-0/1"},
        {0, 0, 100, true, "bytes */100"},
        {0, 0, 0, true, "bytes */0"},
        {U64 - 1, U64 - 1, U64, false,
         "bytes 18446744073709551614-18446744073709551614/"
         "18446744073709551615"},
        {(3ull << 30) - 5, (3ull << 30) - 1, 3ull << 30, false,
         "bytes 3221225467-3221225471/3221225472"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cr_rows); i++) {
        static const char zeros[RANGE_CONTENT_RANGE_MAX];
        char *out = guarded_copy(zeros, sizeof zeros);
        struct buf b = buf_make(out, RANGE_CONTENT_RANGE_MAX);
        struct range r = {cr_rows[i].first, cr_rows[i].last};
        range_content_range(&b, cr_rows[i].unsatisfied ? NULL : &r, cr_rows[i].size);
        CHECK(!b.full, "the longest value fits RANGE_CONTENT_RANGE_MAX");
        CHECK_MEM(b.p, b.len, cr_rows[i].want, strlen(cr_rows[i].want), "the Content-Range value");
        guarded_free(out, RANGE_CONTENT_RANGE_MAX);
    }
}

int main(void)
{
    test_rows();
    test_limits();
    test_content_range();
    return unit_done();
}

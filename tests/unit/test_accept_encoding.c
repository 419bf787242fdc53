/* SPDX-License-Identifier: MIT */
/*
 * test_accept_encoding.c - accept_encoding_parse() and _choose() against
 * accept_encoding.h: q-values and their strict grammar, ties by size, "*",
 * identity excluded by name or by "*", x-gzip, case, OWS, empty elements,
 * several field lines read as one list, malformed fields (identity), and a
 * 406 only when identity is excluded and nothing fits. Each line lies
 * against a guard page, so a read past a value faults.
 */
#include "core/accept_encoding.h"
#include "unit.h"

#define BR   AE_BR
#define ZSTD AE_ZSTD
#define GZ   AE_GZIP
#define ID   AE_IDENTITY
#define NA   AE_NOT_ACCEPTABLE

/* The offer most rows use: all three, br smallest, then zstd, then gzip. */
static const struct ae_offer all3 = {{true, true, true}, {100, 110, 120}, 1000};
/* gzip only. */
static const struct ae_offer gz_only = {{false, false, true}, {0, 0, 120}, 1000};
/* equal sizes for br and zstd: the order breaks the tie. */
static const struct ae_offer equal = {{true, true, true}, {100, 100, 100}, 1000};
/* zstd smaller than br. */
static const struct ae_offer zsmall = {{true, true, true}, {100, 90, 120}, 1000};

static const struct row {
    const char *lines[3]; /* NULL-terminated field lines; {NULL}: no field */
    const struct ae_offer *offer;
    int want;
    const char *why;
} rows[] = {
    {{NULL}, &all3, ID, "no Accept-Encoding: identity"},
    {{""}, &all3, ID, "an empty field: no coding wanted"},
    {{" , ,"}, &all3, ID, "only empty elements"},
    {{"br"}, &all3, BR, "br alone"},
    {{"gzip"}, &all3, GZ, "gzip alone"},
    {{"zstd"}, &all3, ZSTD, "zstd alone"},
    {{"gzip, deflate, br, zstd"}, &all3, BR, "all at q=1: the smallest file"},
    {{"gzip, deflate, br, zstd"}, &zsmall, ZSTD, "all at q=1: zstd when it is smallest"},
    {{"gzip, br, zstd"}, &equal, BR, "equal q, equal size: br before zstd before gzip"},
    {{"br;q=0.5, gzip"}, &all3, GZ, "higher q beats smaller size"},
    {{"br;q=0.5, gzip;q=0.5"}, &all3, BR, "equal q below 1: smallest"},
    {{"br;q=0.501, gzip;q=0.5"}, &all3, BR, "three decimals count"},
    {{"br;q=0.5, gzip;q=0.501"}, &all3, GZ, "three decimals count (other way)"},
    {{"br;q=0, gzip"}, &all3, GZ, "q=0 excludes"},
    {{"br;q=0.000, gzip"}, &all3, GZ, "q=0.000 excludes"},
    {{"br;q=0.001"}, &all3, BR, "the smallest non-zero q"},
    {{"br;q=1.000, gzip"}, &all3, BR, "q=1.000"},
    {{"br;q=1."}, &all3, BR, "q=1. is a qvalue"},
    {{"br;q=0."}, &all3, ID, "q=0. excludes br; identity is the fallback"},
    {{"BR"}, &all3, BR, "codings are case-insensitive"},
    {{"Br;Q=1"}, &all3, BR, "the q is case-insensitive"},
    {{"GZip"}, &all3, GZ, "GZip"},
    {{"x-gzip"}, &all3, GZ, "x-gzip is gzip"},
    {{"X-GZIP;q=0.7, br;q=0.6"}, &all3, GZ, "x-gzip's q is gzip's"},
    {{"gzip;q=0, x-gzip"}, &all3, ID, "gzip named first: its q=0 stands"},
    {{"br;q=0.1, br;q=1, gzip;q=0.5"}, &all3, GZ, "a coding named twice keeps its first q"},
    {{"deflate, compress"}, &all3, ID, "unknown codings only: identity"},
    {{"foo, gzip;q=0.2"}, &all3, GZ, "unknown coding ignored"},
    {{"*"}, &all3, BR, "* covers all: smallest"},
    {{"*;q=0.5, gzip"}, &all3, GZ, "named gzip at 1 beats * at 0.5"},
    {{"*, br;q=0"}, &all3, ZSTD, "* covers the others, br excluded"},
    {{"*;q=0"}, &all3, NA, "*;q=0 without identity: 406"},
    {{"*;q=0, identity"}, &all3, ID, "*;q=0 with identity named"},
    {{"*;q=0, gzip"}, &all3, GZ, "*;q=0, gzip: gzip"},
    {{"identity;q=0"}, &all3, NA, "identity excluded, nothing else named: 406"},
    {{"identity;q=0, gzip"}, &all3, GZ, "identity excluded, gzip fits"},
    {{"identity;q=0, br"}, &gz_only, NA, "identity excluded, br not offered: 406"},
    {{"identity;q=0, *"}, &gz_only, GZ, "identity excluded, * takes gzip"},
    {{"br"}, &gz_only, ID, "br not offered: identity"},
    {{"identity"}, &all3, ID, "identity alone"},
    {{"identity, br;q=0.9"}, &all3, ID, "identity named at q=1 beats br at 0.9"},
    {{"identity;q=0.5, br"}, &all3, BR, "br at 1 beats identity at 0.5"},
    {{"identity, br"}, &all3, BR, "equal q: the smaller file"},
    {{"*"},
     &(struct ae_offer){{true, false, false}, {1000, 0, 0}, 1000},
     ID,
     "equal q, equal size: identity first"},
    {{"  br  ;  q=0.5  ,gzip;q=0.4"}, &all3, BR, "OWS around ; and elements"},
    {{"\tbr\t;\tq=0.5"}, &all3, BR, "HTAB is OWS"},
    {{"br", "gzip;q=0.9"}, &all3, BR, "two lines: one list"},
    {{"br;q=0.1", "gzip"}, &all3, GZ, "two lines: q compared across them"},
    {{"identity;q=0", "br"}, &gz_only, NA, "two lines: identity excluded on the first"},
    {{"br", "br;q=0"}, &all3, BR, "two lines: first mention kept"},
    {{"br", "gzip;q=2"}, &all3, ID, "a malformed second line: the whole field, identity"},
    /* malformed: identity, even when identity is excluded elsewhere */
    {{"br;q=2"}, &all3, ID, "q above 1"},
    {{"br;q=1.1"}, &all3, ID, "1.1"},
    {{"br;q=1.0001"}, &all3, ID, "four decimals"},
    {{"br;q=0.1234"}, &all3, ID, "four decimals under 1"},
    {{"br;q=.5"}, &all3, ID, "no leading digit"},
    {{"br;q=-0"}, &all3, ID, "a sign"},
    {{"br;q=00.5"}, &all3, ID, "two leading digits"},
    {{"br;q="}, &all3, ID, "empty q"},
    {{"br;q"}, &all3, ID, "q without ="},
    {{"br;q = 0.5"}, &all3, ID, "spaces around ="},
    {{"br;level=1"}, &all3, ID, "another parameter"},
    {{"br;q=0.5;q=0.6"}, &all3, ID, "two weights"},
    {{"br;"}, &all3, ID, "an empty parameter"},
    {{"br gzip"}, &all3, ID, "two tokens without a comma"},
    {{"\"br\""}, &all3, ID, "a quoted coding"},
    {{";q=1"}, &all3, ID, "no coding"},
    {{"identity;q=0, br;q=x"}, &gz_only, ID, "malformed wins over identity;q=0"},
    {{"br\x01"}, &all3, ID, "a control byte"},
    {{"br;q=0.5 x"}, &all3, ID, "garbage after the q"},
};

static int choose(const struct row *r)
{
    struct span_list l = {0};
    void *copies[3] = {0};
    for (unsigned i = 0; i < 3 && r->lines[i]; i++) {
        size_t n = strlen(r->lines[i]);
        copies[i] = guarded_copy(r->lines[i], n);
        l.v[l.n++] = span_make(copies[i], n);
    }
    int got = accept_encoding_choose(&l, r->offer);
    for (unsigned i = 0; i < l.n; i++)
        guarded_free(copies[i], l.v[i].n);
    return got;
}

static void test_rows(void)
{
    for (size_t i = 0; i < ARRAY_LEN(rows); i++)
        CHECK_LONG(choose(&rows[i]), rows[i].want, rows[i].why);
}

static void test_parse_values(void)
{
    struct span_list l = {{SPAN_LIT("gzip;q=0.25, *;q=0.125, identity;q=0")}, 1};
    struct ae_prefs p;
    CHECK_LONG(accept_encoding_parse(&l, &p), 0, "parses");
    CHECK_LONG(p.c[AE_GZIP].q, 250, "gzip q in thousandths");
    CHECK(p.c[AE_GZIP].named, "gzip named");
    CHECK(!p.c[AE_BR].named, "br not named");
    CHECK_LONG(p.star.q, 125, "* q");
    CHECK(p.c[AE_IDENTITY].named && p.c[AE_IDENTITY].q == 0, "identity;q=0");
    struct span_list bad = {{SPAN_LIT("gzip;q=0.25, br;q=5")}, 1};
    CHECK_LONG(accept_encoding_parse(&bad, &p), -1, "malformed: -1");
}

static void test_names(void)
{
    CHECK_SPAN(ae_coding_name(AE_BR), "br", "br");
    CHECK_SPAN(ae_coding_name(AE_ZSTD), "zstd", "zstd");
    CHECK_SPAN(ae_coding_name(AE_GZIP), "gzip", "gzip");
    CHECK_SPAN(ae_coding_suffix(AE_BR), ".br", ".br");
    CHECK_SPAN(ae_coding_suffix(AE_ZSTD), ".zst", ".zst");
    CHECK_SPAN(ae_coding_suffix(AE_GZIP), ".gz", ".gz");
}

/* Every cut of a valid field parses or is refused, never read past. */
static void test_every_cut(void)
{
    static const char v[] = "gzip;q=0.5, BR ; Q=1.000,\t*;q=0, identity;q=0.001";
    unit_gen_begin();
    for (size_t n = 0; n <= sizeof v - 1; n++) {
        char *c = guarded_copy(v, n);
        struct span_list l = {{span_make(c, n)}, 1};
        int got = accept_encoding_choose(&l, &all3);
        CHECK(got == NA || got == ID || (got >= 0 && got < AE_CODINGS), "a known verdict");
        guarded_free(c, n);
    }
    unit_gen_end();
}

/* Every byte value as a one-byte coding: a token exactly when it is a
 * tchar (RFC 9110 §5.6.2); a token that names nothing leaves identity. */
static void test_every_byte(void)
{
    static const char tchars[] = "!#$%&'*+-.^_`|~0123456789"
                                 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    unit_gen_begin();
    for (int b = 0; b < 256; b++) {
        char in[1] = {(char)b};
        char *c = guarded_copy(in, 1);
        struct span_list l = {{span_make(c, 1)}, 1};
        struct ae_prefs p;
        bool tchar = b != 0 && memchr(tchars, b, sizeof tchars - 1) != NULL;
        bool ows = b == ' ' || b == '\t' || b == ',';
        CHECK_LONG(accept_encoding_parse(&l, &p), tchar || ows ? 0 : -1, "a one-byte element");
        guarded_free(c, 1);
    }
    unit_gen_end();
}

int main(void)
{
    unit_file = __FILE__;
    test_rows();
    test_parse_values();
    test_names();
    test_every_cut();
    test_every_byte();
    return unit_done();
}

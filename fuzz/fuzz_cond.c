/* SPDX-License-Identifier: MIT */
/*
 * fuzz_cond.c - cond_evaluate(), cond_etag_list_match() and cond_if_range()
 * against an oracle written here from RFC 9110 §13.1-13.2 and cond.h, and
 * against properties that hold whatever the values: no 304 without
 * If-None-Match or If-Modified-Since, none for a method other than GET/HEAD,
 * a failed If-Match is 412 whatever else the request says, no 412 without
 * If-Match, If-Unmodified-Since or (for other methods) If-None-Match, no
 * precondition fields means proceed, If-None-Match makes If-Modified-Since
 * irrelevant, and an If-Range that lets the Range through names our very
 * tag or our very date. The oracle parses entity-tag lists in two phases
 * unlike cond.c's: the line is cut into lexemes (OWS, ',', '*', a tag, or
 * an error), then the lexeme sequence is judged against "*" / #entity-tag.
 *
 * Input: 13 control bytes, then the field values separated by LF (If-Match
 * lines, If-None-Match lines, If-Modified-Since, If-Unmodified-Since,
 * If-Range). A 0x01 byte in a value stands for our tag's opaque part without
 * its quotes, so "\x01" is our tag and W/"\x01" its weak twin. The dates of
 * Last-Modified and now are set a few seconds around the parsed
 * If-Modified-Since or If-Unmodified-Since, so "equal", "one second older"
 * and "in the future" are all reached. Every value lies in a heap buffer of
 * exactly its length, so a read past one is an ASan report.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cond.h"
#include "core/date.h"
#include "core/etag.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_cond: %s\n", what);
        __builtin_trap();
    }
}

/* ---- the oracle: entity-tag lists (RFC 9110 §8.8.3, §5.6.1) ---------------- */

enum lexeme_kind { LX_OWS, LX_COMMA, LX_STAR, LX_TAG, LX_ERROR };

struct lexeme {
    enum lexeme_kind kind;
    bool weak;          /* LX_TAG: "W/" before it */
    const char *opaque; /* LX_TAG: from its opening to its closing quote */
    size_t n;
};

/* etagc = %x21 / %x23-7E / obs-text */
static bool etagc(unsigned char c)
{
    return c == 0x21 || (c >= 0x23 && c <= 0x7e) || c >= 0x80;
}

/* The lexeme at v[i]; *len is its length (at least 1 unless LX_ERROR). */
static struct lexeme lex_one(const char *v, size_t n, size_t i, size_t *len)
{
    struct lexeme l = {LX_ERROR, false, NULL, 0};
    size_t j = i;
    *len = 0;
    if (v[i] == ' ' || v[i] == '\t') {
        while (j < n && (v[j] == ' ' || v[j] == '\t'))
            j++;
        l.kind = LX_OWS;
    } else if (v[i] == ',' || v[i] == '*') {
        l.kind = v[i] == ',' ? LX_COMMA : LX_STAR;
        j++;
    } else {
        if (n - j >= 2 && v[j] == 'W' && v[j + 1] == '/') {
            l.weak = true;
            j += 2;
        }
        if (j >= n || v[j] != '"')
            return l;
        const char *close = memchr(v + j + 1, '"', n - j - 1);
        if (!close)
            return l;
        for (const char *c = v + j + 1; c < close; c++)
            if (!etagc((unsigned char)*c))
                return l;
        l.kind = LX_TAG;
        l.opaque = v + j;
        l.n = (size_t)(close + 1 - (v + j));
        j = (size_t)(close + 1 - v);
    }
    *len = j - i;
    return l;
}

/* One field line: 1 when it contains etag (or is "*"), 0 when it does not,
 * -1 when it is not "*" / #entity-tag. */
static int oracle_line(struct span line, struct span etag, bool weak)
{
    struct lexeme *lx = malloc((line.n + 1) * sizeof *lx);
    size_t k = 0;
    for (size_t i = 0, len; i < line.n; i += len) {
        struct lexeme l = lex_one(line.p, line.n, i, &len);
        if (l.kind == LX_ERROR) {
            free(lx);
            return -1;
        }
        if (l.kind != LX_OWS)
            lx[k++] = l;
    }
    int verdict = 0;
    if (k == 1 && lx[0].kind == LX_STAR) {
        verdict = 1;
    } else {
        for (size_t i = 0; i < k && verdict >= 0; i++) {
            if (lx[i].kind == LX_STAR ||
                (lx[i].kind == LX_TAG && i > 0 && lx[i - 1].kind == LX_TAG))
                verdict = -1; /* '*' in a list, or two tags without a comma */
        }
        for (size_t i = 0; i < k && verdict == 0; i++)
            if (lx[i].kind == LX_TAG && lx[i].n == etag.n &&
                memcmp(lx[i].opaque, etag.p, etag.n) == 0 && (weak || !lx[i].weak))
                verdict = 1;
    }
    free(lx);
    return verdict;
}

/* cond.h: any malformed line makes the whole list match nothing. */
static bool oracle_list(const struct span_list *l, struct span etag, bool weak)
{
    bool found = false;
    for (unsigned i = 0; i < l->n; i++) {
        int r = oracle_line(l->v[i], etag, weak);
        if (r < 0)
            return false;
        found = found || r == 1;
    }
    return found;
}

static bool date_of(struct span v, int64_t *t)
{
    while (v.n && (v.p[0] == ' ' || v.p[0] == '\t')) {
        v.p++;
        v.n--;
    }
    while (v.n && (v.p[v.n - 1] == ' ' || v.p[v.n - 1] == '\t'))
        v.n--;
    return v.p && date_parse_http(v, t);
}

/* RFC 9110 §13.2.2, steps 1 to 5, as cond.h words them. */
static enum cond_verdict oracle(const struct cond_input *in)
{
    const struct http_info *f = in->info;
    int64_t d;
    if (f->if_match.n > 0 && !oracle_list(&f->if_match, in->etag, false))
        return COND_FAILED; /* step 1 */
    if (f->if_match.n == 0 && f->if_unmodified_since.p && in->has_last_modified &&
        date_of(f->if_unmodified_since, &d) && in->last_modified > d)
        return COND_FAILED; /* step 2 */
    if (f->if_none_match.n > 0) {
        if (oracle_list(&f->if_none_match, in->etag, true))
            return in->get_or_head ? COND_NOT_MODIFIED : COND_FAILED; /* step 3 */
        return COND_PROCEED;
    }
    if (in->get_or_head && f->if_modified_since.p && in->has_last_modified &&
        date_of(f->if_modified_since, &d) && d <= in->now && in->last_modified <= d)
        return COND_NOT_MODIFIED; /* step 4 */
    return COND_PROCEED;          /* step 5 */
}

/* ---- the input ------------------------------------------------------------ */

struct fields {
    struct http_info info;
    char *owned[2 * HTTP_LIST_MAX + 3];
    size_t nowned;
};

/* The next LF-separated value from *at, with 0x01 replaced by our opaque
 * tag, in a heap buffer of exactly its length. */
static struct span take(struct fields *f, const uint8_t *d, size_t size, size_t *at,
                        struct span opaque)
{
    size_t start = *at, end = start;
    while (end < size && d[end] != '\n')
        end++;
    *at = end < size ? end + 1 : end;
    size_t n = 0;
    for (size_t i = start; i < end; i++)
        n += d[i] == 1 ? opaque.n : 1;
    char *v = malloc(n ? n : 1);
    for (size_t i = start, k = 0; i < end; i++) {
        if (d[i] == 1) {
            memcpy(v + k, opaque.p, opaque.n);
            k += opaque.n;
        } else {
            v[k++] = (char)d[i];
        }
    }
    f->owned[f->nowned++] = v;
    return span_make(v, n);
}

static void check_properties(const struct cond_input *in, enum cond_verdict got)
{
    const struct http_info *f = in->info;
    bool im = f->if_match.n > 0, inm = f->if_none_match.n > 0;
    bool ims = f->if_modified_since.p != NULL, ius = f->if_unmodified_since.p != NULL;
    require(got == COND_PROCEED || got == COND_NOT_MODIFIED || got == COND_FAILED, "verdict");
    if (got == COND_NOT_MODIFIED)
        require(in->get_or_head && (inm || ims), "304 without If-None-Match/If-Modified-Since");
    if (got == COND_FAILED)
        require(im || ius || (inm && !in->get_or_head), "412 without a precondition that can fail");
    if (!im && !inm && !ims && !ius)
        require(got == COND_PROCEED, "no precondition fields, yet not PROCEED");
    if (im && !cond_etag_list_match(&f->if_match, in->etag, false))
        require(got == COND_FAILED, "a failed If-Match does not dominate");

    /* If-None-Match present: If-Modified-Since is not looked at (§13.2.2 step 4). */
    if (inm) {
        struct http_info other = *f;
        other.if_modified_since =
            ims ? (struct span){0} : SPAN_LIT("Thu, 01 Jan 1970 00:00:00 GMT");
        struct cond_input in2 = *in;
        in2.info = &other;
        require(cond_evaluate(&in2) == got, "If-Modified-Since mattered beside If-None-Match");
    }
    /* If-Match present: If-Unmodified-Since is not looked at (step 2). */
    if (im) {
        struct http_info other = *f;
        other.if_unmodified_since =
            ius ? (struct span){0} : SPAN_LIT("Thu, 01 Jan 1970 00:00:00 GMT");
        struct cond_input in2 = *in;
        in2.info = &other;
        require(cond_evaluate(&in2) == got, "If-Unmodified-Since mattered beside If-Match");
    }
}

static void check_if_range(struct span v, const struct cond_input *in)
{
    bool got = cond_if_range(v, in->etag, in->last_modified, in->has_last_modified, in->now);
    int64_t d;
    struct span t = v;
    while (t.n && (t.p[0] == ' ' || t.p[0] == '\t')) {
        t.p++;
        t.n--;
    }
    while (t.n && (t.p[t.n - 1] == ' ' || t.p[t.n - 1] == '\t'))
        t.n--;
    /* §13.1.5: a strong tag equal to ours (ours is strong, so byte-equal),
     * or an HTTP-date exactly equal to Last-Modified when that is a strong
     * validator: at least one second before now (§8.8.2.2). */
    bool want = (t.n == in->etag.n && memcmp(t.p, in->etag.p, t.n) == 0) ||
                (in->has_last_modified && in->last_modified + 1 <= in->now &&
                 date_parse_http(t, &d) && d == in->last_modified);
    if (got != want) {
        fprintf(stderr, "fuzz_cond: If-Range \"%.*s\" etag %.*s lm %lld/%d: %d, oracle %d\n",
                (int)v.n, v.p, (int)in->etag.n, in->etag.p, (long long)in->last_modified,
                in->has_last_modified, got, want);
        require(0, "cond_if_range differs from the oracle");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t c[13] = {0};
    size_t head = size < sizeof c ? size : sizeof c;
    memcpy(c, data, head);

    char tag[ETAG_MAX];
    uint64_t ino = c[5] | (uint64_t)c[6] << 8, fsize = c[7] | (uint64_t)c[8] << 40;
    size_t tn = etag_make(ino, fsize, (int64_t)c[9] << 24 | c[10], (uint32_t)c[11] * 1000003u, tag);
    struct span etag = span_make(tag, tn);
    struct span opaque = span_make(tag + 1, tn - 2);

    struct fields f = {0};
    size_t at = head;
    unsigned nim = (c[1] & 7) % (HTTP_LIST_MAX + 1), ninm = (c[1] >> 4 & 7) % (HTTP_LIST_MAX + 1);
    for (unsigned i = 0; i < nim; i++)
        f.info.if_match.v[f.info.if_match.n++] = take(&f, data, size, &at, opaque);
    for (unsigned i = 0; i < ninm; i++)
        f.info.if_none_match.v[f.info.if_none_match.n++] = take(&f, data, size, &at, opaque);
    struct span ims = take(&f, data, size, &at, opaque);
    struct span ius = take(&f, data, size, &at, opaque);
    struct span ir = take(&f, data, size, &at, opaque);
    if (c[0] & 4)
        f.info.if_modified_since = ims;
    if (c[0] & 8)
        f.info.if_unmodified_since = ius;

    /* Last-Modified and now: a few seconds around the dates sent. */
    int64_t d_ims = 0, d_ius = 0, base = (int64_t)c[12] * 86400 * 97;
    bool has_ims = date_of(ims, &d_ims), has_ius = date_of(ius, &d_ius);
    if (has_ims)
        base = d_ims;
    else if (has_ius)
        base = d_ius;
    struct cond_input in = {
        .info = &f.info,
        .get_or_head = c[0] & 1,
        .etag = etag,
        .last_modified = (has_ius && !has_ims && (c[0] & 0x40) ? d_ius : base) + (int8_t)c[2] % 3,
        .has_last_modified = c[0] & 2,
        .now = base + (int8_t)c[3] % 3,
    };

    enum cond_verdict got = cond_evaluate(&in), want = oracle(&in);
    if (got != want) {
        fprintf(stderr, "fuzz_cond: cond_evaluate %d, oracle %d (lm %lld now %lld)\n", (int)got,
                (int)want, (long long)in.last_modified, (long long)in.now);
        require(0, "cond_evaluate differs from the oracle");
    }
    check_properties(&in, got);
    for (int weak = 0; weak < 2; weak++) {
        require(cond_etag_list_match(&f.info.if_match, etag, weak) ==
                    oracle_list(&f.info.if_match, etag, weak),
                "cond_etag_list_match (If-Match lines) differs from the oracle");
        require(cond_etag_list_match(&f.info.if_none_match, etag, weak) ==
                    oracle_list(&f.info.if_none_match, etag, weak),
                "cond_etag_list_match (If-None-Match lines) differs from the oracle");
    }
    check_if_range(ir, &in);
    check_if_range(etag, &in); /* our own tag always lets the Range through */
    require(cond_if_range(etag, etag, in.last_modified, in.has_last_modified, in.now),
            "If-Range: own tag");

    for (size_t i = 0; i < f.nowned; i++)
        free(f.owned[i]);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * accept_encoding.c - see accept_encoding.h. One pass over the elements of
 * every line records each coding's q; the choice is a comparison over at
 * most four candidates, one pass over each byte. No state outside the
 * caller's structs.
 */
#include "accept_encoding.h"

#include "bytes.h"

static const struct span names[AE_CODINGS] = {SPAN_LIT("br"), SPAN_LIT("zstd"), SPAN_LIT("gzip")};
static const struct span suffixes[AE_CODINGS] = {SPAN_LIT(".br"), SPAN_LIT(".zst"),
                                                 SPAN_LIT(".gz")};

struct span ae_coding_name(int c)
{
    PITH_ASSERT(c >= 0 && c < AE_CODINGS);
    return names[c];
}

struct span ae_coding_suffix(int c)
{
    PITH_ASSERT(c >= 0 && c < AE_CODINGS);
    return suffixes[c];
}

/* tchar (RFC 9110 §5.6.2) as a bitmap of the 128 ASCII codes: ALPHA,
 * DIGIT and !#$%&'*+-.^_`|~. One test per byte on the hot path. */
static const uint32_t tchar_bits[4] = {0x00000000u, 0x03ff6cfau, 0xc7fffffeu, 0x57ffffffu};

static bool is_tchar(char c)
{
    unsigned char u = (unsigned char)c;
    return u < 128 && (tchar_bits[u >> 5] >> (u & 31) & 1u);
}

static bool is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ), exactly
 * the whole of s. Returns thousandths, or -1. */
static int qvalue(struct span s)
{
    if (s.n == 0 || s.n > 5 || (s.p[0] != '0' && s.p[0] != '1'))
        return -1;
    if (s.n > 1 && s.p[1] != '.')
        return -1;
    int q = (s.p[0] - '0') * 1000, scale = 100;
    for (size_t i = 2; i < s.n; i++, scale /= 10) {
        if (!ascii_is_digit(s.p[i]) || (s.p[0] == '1' && s.p[i] != '0'))
            return -1;
        q += (s.p[i] - '0') * scale;
    }
    return q;
}

/* True when s equals the lower-case constant lower[0..s.n), in any case. */
static bool is_name(struct span s, const char *lower)
{
    for (size_t i = 0; i < s.n; i++)
        if (ascii_lower(s.p[i]) != lower[i])
            return false;
    return true;
}

/* The slot a coding's name fills, or NULL for a coding offered nowhere.
 * By length first: this runs for every element of every request for a
 * file with variants. */
static struct ae_pref *slot_of(struct ae_prefs *p, struct span coding)
{
    switch (coding.n) {
    case 1: return coding.p[0] == '*' ? &p->star : NULL;
    case 2: return is_name(coding, "br") ? &p->c[AE_BR] : NULL;
    case 4:
        if (is_name(coding, "gzip"))
            return &p->c[AE_GZIP];
        return is_name(coding, "zstd") ? &p->c[AE_ZSTD] : NULL;
    case 6: return is_name(coding, "x-gzip") ? &p->c[AE_GZIP] : NULL;
    case 8: return is_name(coding, "identity") ? &p->c[AE_IDENTITY] : NULL;
    default: return NULL;
    }
}

/* One line's elements, scanned once: [ OWS / "," ]... coding [ OWS ";"
 * OWS "q=" qvalue ] OWS, then "," or the end. Returns 0 or -1. */
static int parse_line(struct span v, struct ae_prefs *out)
{
    size_t i = 0;
    for (;;) {
        /* Empty elements are allowed and ignored (§5.6.1). */
        while (i < v.n && (is_ows(v.p[i]) || v.p[i] == ','))
            i++;
        if (i == v.n)
            return 0;
        size_t start = i;
        while (i < v.n && is_tchar(v.p[i]))
            i++;
        if (i == start)
            return -1;
        struct span coding = span_make(v.p + start, i - start);
        int q = AE_Q_MAX;
        while (i < v.n && is_ows(v.p[i]))
            i++;
        if (i < v.n && v.p[i] == ';') {
            i++;
            while (i < v.n && is_ows(v.p[i]))
                i++;
            if (v.n - i < 2 || ascii_lower(v.p[i]) != 'q' || v.p[i + 1] != '=')
                return -1;
            i += 2;
            size_t qs = i;
            while (i < v.n && !is_ows(v.p[i]) && v.p[i] != ',')
                i++;
            q = qvalue(span_make(v.p + qs, i - qs));
            if (q < 0)
                return -1;
            while (i < v.n && is_ows(v.p[i]))
                i++;
        }
        if (i < v.n && v.p[i] != ',')
            return -1;
        struct ae_pref *s = slot_of(out, coding);
        if (s && !s->named)
            *s = (struct ae_pref){(uint16_t)q, true};
    }
}

int accept_encoding_parse(const struct span_list *l, struct ae_prefs *out)
{
    *out = (struct ae_prefs){0};
    for (unsigned k = 0; k < l->n; k++)
        if (parse_line(l->v[k], out) < 0)
            return -1;
    return 0;
}

/* A coding's q: named, else by "*", else 0. */
static int q_of(const struct ae_prefs *p, int c)
{
    if (p->c[c].named)
        return p->c[c].q;
    return p->star.named ? p->star.q : 0;
}

int accept_encoding_choose(const struct span_list *l, const struct ae_offer *o)
{
    struct ae_prefs p;
    if (l->n == 0 || accept_encoding_parse(l, &p) < 0)
        return AE_IDENTITY;
    /* Identity competes only when the field gives it a q; unnamed and
     * uncovered, it is the fallback (§12.5.3: always acceptable unless
     * excluded). */
    bool identity_rated = p.c[AE_IDENTITY].named || p.star.named;
    int best = AE_NOT_ACCEPTABLE, best_q = 0;
    uint64_t best_size = 0;
    if (identity_rated && q_of(&p, AE_IDENTITY) > 0) {
        best = AE_IDENTITY;
        best_q = q_of(&p, AE_IDENTITY);
        best_size = o->identity_size;
    }
    for (int c = 0; c < AE_CODINGS; c++) {
        int q = q_of(&p, c);
        if (!o->have[c] || q == 0)
            continue;
        if (q > best_q || (q == best_q && o->size[c] < best_size)) {
            best = c;
            best_q = q;
            best_size = o->size[c];
        }
    }
    if (best != AE_NOT_ACCEPTABLE)
        return best;
    return identity_rated && q_of(&p, AE_IDENTITY) == 0 ? AE_NOT_ACCEPTABLE : AE_IDENTITY;
}

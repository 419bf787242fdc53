/* SPDX-License-Identifier: MIT */
/*
 * accept_encoding.c - see accept_encoding.h. One pass over the elements of
 * every line records each coding's q; the choice is a comparison over at
 * most four candidates. No state outside the caller's structs.
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

/* tchar (RFC 9110 §5.6.2). */
static bool is_tchar(char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || ascii_is_digit(c))
        return true;
    switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~': return true;
    default: return false;
    }
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

/* One element, OWS already trimmed: coding [ OWS ";" OWS "q=" qvalue ].
 * Returns 0 with *coding and *q, or -1. */
static int element(struct span e, struct span *coding, int *q)
{
    size_t i = 0;
    while (i < e.n && is_tchar(e.p[i]))
        i++;
    if (i == 0)
        return -1;
    *coding = span_make(e.p, i);
    *q = AE_Q_MAX;
    while (i < e.n && is_ows(e.p[i]))
        i++;
    if (i == e.n)
        return 0;
    if (e.p[i++] != ';')
        return -1;
    while (i < e.n && is_ows(e.p[i]))
        i++;
    if (e.n - i < 2 || ascii_lower(e.p[i]) != 'q' || e.p[i + 1] != '=')
        return -1;
    *q = qvalue(span_make(e.p + i + 2, e.n - i - 2));
    return *q < 0 ? -1 : 0;
}

/* The slot a coding's name fills, or NULL for a coding offered nowhere. */
static struct ae_pref *slot_of(struct ae_prefs *p, struct span coding)
{
    if (span_eq_cstr(coding, "*"))
        return &p->star;
    if (span_eq_nocase_cstr(coding, "identity"))
        return &p->c[AE_IDENTITY];
    if (span_eq_nocase_cstr(coding, "x-gzip"))
        return &p->c[AE_GZIP];
    for (int c = 0; c < AE_CODINGS; c++)
        if (span_eq_nocase(coding, names[c]))
            return &p->c[c];
    return NULL;
}

int accept_encoding_parse(const struct span_list *l, struct ae_prefs *out)
{
    *out = (struct ae_prefs){0};
    for (unsigned k = 0; k < l->n; k++) {
        struct span v = l->v[k];
        size_t i = 0;
        while (i < v.n) {
            /* Empty elements are allowed and ignored (§5.6.1). */
            size_t comma = mem_find(v.p + i, v.n - i, ',');
            struct span e = span_trim_ows(span_make(v.p + i, comma));
            i += comma + 1;
            if (e.n == 0)
                continue;
            struct span coding;
            int q;
            if (element(e, &coding, &q) < 0)
                return -1;
            struct ae_pref *s = slot_of(out, coding);
            if (s && !s->named)
                *s = (struct ae_pref){(uint16_t)q, true};
        }
    }
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

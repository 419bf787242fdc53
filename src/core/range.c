/* SPDX-License-Identifier: MIT */
/*
 * range.c - byte ranges. Each satisfiable range is merged into a sorted array
 * as it is parsed (insertion keeps it sorted and coalesced), so the work is
 * O(n * max) for n ranges whatever their order, and the memory is the
 * caller's array: a header of thousands of tiny overlapping ranges costs
 * neither memory nor quadratic time (lighttpd's RMAX_UNSORTED note).
 */
#include "range.h"

#include "bytes.h"

/* A number as received: its value saturated at UINT64_MAX, and its digits
 * without leading zeros, to compare numbers too big for 64 bits exactly. */
struct num {
    uint64_t v;
    struct span digits;
};

/* 1*DIGIT; false on no digit. */
static bool parse_num(struct span s, size_t *at, struct num *out)
{
    size_t start = *at;
    uint64_t v = 0;
    while (*at < s.n && ascii_is_digit(s.p[*at])) {
        unsigned d = (unsigned)(s.p[*at] - '0');
        v = u64_times10_fits(v, d) ? v * 10 + d : UINT64_MAX;
        (*at)++;
    }
    size_t lead = start;
    while (lead + 1 < *at && s.p[lead] == '0')
        lead++;
    out->v = v;
    out->digits = span_make(s.p + lead, *at - lead);
    return *at > start;
}

/* a < b for numbers of any length. */
static bool num_less(const struct num *a, const struct num *b)
{
    if (a->digits.n != b->digits.n)
        return a->digits.n < b->digits.n;
    for (size_t i = 0; i < a->digits.n; i++)
        if (a->digits.p[i] != b->digits.p[i])
            return a->digits.p[i] < b->digits.p[i];
    return false;
}

struct set {
    struct range *r;
    unsigned n, max;
    uint64_t total; /* bytes as requested */
    bool too_many;  /* more than max ranges at some point, or total overflowed */
};

/* Inserts [first, last] keeping the set sorted and coalesced. */
static void set_add(struct set *s, uint64_t first, uint64_t last)
{
    uint64_t len = last - first + 1; /* first <= last < size: no overflow */
    if (s->total > UINT64_MAX - len)
        s->too_many = true; /* asked for more bytes than any file holds */
    else
        s->total += len;
    unsigned i = 0;
    while (i < s->n && s->r[i].last < first && s->r[i].last + 1 < first)
        i++;
    /* r[i] is the first range that overlaps or touches [first, last], or
     * the first one after it. Absorb every range that overlaps or touches. */
    unsigned j = i;
    while (j < s->n && s->r[j].first <= last + (last < UINT64_MAX ? 1 : 0)) {
        if (s->r[j].first < first)
            first = s->r[j].first;
        if (s->r[j].last > last)
            last = s->r[j].last;
        j++;
    }
    if (j == i) { /* no overlap: insert at i */
        if (s->n == s->max) {
            s->too_many = true;
            return;
        }
        for (unsigned k = s->n; k > i; k--)
            s->r[k] = s->r[k - 1];
        s->n++;
    } else if (j > i + 1) { /* several merged into r[i]: close the gap */
        for (unsigned k = j; k < s->n; k++)
            s->r[k - (j - i - 1)] = s->r[k];
        s->n -= j - i - 1;
    }
    s->r[i].first = first;
    s->r[i].last = last;
}

/* One range-spec at v[*at]. Returns false on a syntax error. */
static bool parse_spec(struct span v, size_t *at, uint64_t size, struct set *s)
{
    struct num first, last;
    if (*at < v.n && v.p[*at] == '-') { /* suffix-range */
        (*at)++;
        if (!parse_num(v, at, &last))
            return false;
        if (last.v > 0 && size > 0)
            set_add(s, last.v >= size ? 0 : size - last.v, size - 1);
        return true;
    }
    if (!parse_num(v, at, &first) || *at >= v.n || v.p[*at] != '-')
        return false;
    (*at)++;
    last.v = UINT64_MAX;
    if (*at < v.n && ascii_is_digit(v.p[*at])) {
        parse_num(v, at, &last);
        if (num_less(&last, &first))
            return false; /* §14.1.2: invalid, so the whole field is */
    }
    if (first.v < size)
        set_add(s, first.v, last.v >= size ? size - 1 : last.v);
    return true;
}

int range_parse(struct span value, uint64_t size, struct range *out, unsigned max)
{
    struct span v = span_trim_ows(value);
    struct set s = {out, 0, max, 0, false};
    if (v.n < 6 || !span_eq_nocase_cstr(span_make(v.p, 6), "bytes="))
        return RANGE_IGNORE;
    size_t at = 6;
    bool any = false;
    while (at < v.n) {
        while (at < v.n && (v.p[at] == ' ' || v.p[at] == '\t'))
            at++;
        if (at < v.n && v.p[at] == ',') { /* empty list element, §5.6.1.2 */
            at++;
            continue;
        }
        if (at == v.n)
            break;
        if (!parse_spec(v, &at, size, &s))
            return RANGE_IGNORE;
        any = true;
        while (at < v.n && (v.p[at] == ' ' || v.p[at] == '\t'))
            at++;
        if (at < v.n && v.p[at] != ',')
            return RANGE_IGNORE;
    }
    if (!any)
        return RANGE_IGNORE;
    if (s.n == 0)
        return RANGE_UNSATISFIABLE;
    if (s.too_many || s.total > size)
        return RANGE_TOO_MANY;
    return (int)s.n;
}

void range_content_range(struct buf *b, const struct range *r, uint64_t size)
{
    buf_put_cstr(b, "bytes ");
    if (r) {
        buf_put_u64(b, r->first);
        buf_put_char(b, '-');
        buf_put_u64(b, r->last);
    } else {
        buf_put_char(b, '*');
    }
    buf_put_char(b, '/');
    buf_put_u64(b, size);
}

/* SPDX-License-Identifier: MIT */
/*
 * range_ref.c - the reference Range parser of range_ref.h. Written for
 * reading, not speed: the value is cut into elements first, every element
 * is parsed into a spec, every spec into an interval, and only then are the
 * intervals merged and the limits applied. It must stay independent of
 * src/core/range.c (no shared helpers, not even bytes.h), or a shared bug
 * would agree with itself.
 */
#include "ref/range_ref.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A decimal number as its digits, leading zeros removed ("" is zero). */
struct ref_range_num {
    const char *d;
    size_t n;
};

struct ref_range_spec {
    bool suffix;              /* "-N": num is the suffix length */
    struct ref_range_num num; /* first-pos, or the suffix length */
    bool has_last;
    struct ref_range_num last;
};

struct ref_range_list {
    struct ref_range *v;
    size_t n;
};

static const char ref_range_u64_max[] = "18446744073709551615";

static bool ref_range_ows(char c)
{
    return c == ' ' || c == '\t';
}

static bool ref_range_all_digits(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] < '0' || p[i] > '9')
            return false;
    return true;
}

static struct ref_range_num ref_range_num_make(const char *p, size_t n)
{
    while (n && *p == '0') {
        p++;
        n--;
    }
    return (struct ref_range_num){p, n};
}

/* Exact comparison of two numbers of any length: <0, 0, >0. */
static int ref_range_num_cmp(struct ref_range_num a, struct ref_range_num b)
{
    if (a.n != b.n)
        return a.n < b.n ? -1 : 1;
    return a.n ? memcmp(a.d, b.d, a.n) : 0;
}

static bool ref_range_num_fits(struct ref_range_num a)
{
    return ref_range_num_cmp(a, ref_range_num_make(ref_range_u64_max, 20)) <= 0;
}

/* The value, or UINT64_MAX when it does not fit. */
static uint64_t ref_range_num_value(struct ref_range_num a)
{
    if (!ref_range_num_fits(a))
        return UINT64_MAX;
    uint64_t v = 0;
    for (size_t i = 0; i < a.n; i++)
        v = v * 10 + (uint64_t)(a.d[i] - '0');
    return v;
}

/* One list element, OWS already trimmed and not empty. */
static bool ref_range_parse_spec(const char *e, size_t n, struct ref_range_spec *s)
{
    memset(s, 0, sizeof *s);
    if (e[0] == '-') {
        s->suffix = true;
        if (n < 2 || !ref_range_all_digits(e + 1, n - 1))
            return false;
        s->num = ref_range_num_make(e + 1, n - 1);
        return true;
    }
    const char *dash = memchr(e, '-', n);
    if (!dash)
        return false;
    size_t a = (size_t)(dash - e), b = n - a - 1;
    if (a == 0 || !ref_range_all_digits(e, a) || !ref_range_all_digits(dash + 1, b))
        return false;
    s->num = ref_range_num_make(e, a);
    s->has_last = b > 0;
    s->last = ref_range_num_make(dash + 1, b);
    return true;
}

/* §14.1.1: last-pos < first-pos makes the spec (and the field) invalid;
 * compared exactly, whatever the numbers' length. */
static bool ref_range_spec_ordered(const struct ref_range_spec *s)
{
    return s->suffix || !s->has_last || ref_range_num_cmp(s->last, s->num) >= 0;
}

/* The interval a spec selects of `size` bytes; false when unsatisfiable. */
static bool ref_range_interval(const struct ref_range_spec *s, uint64_t size, struct ref_range *r)
{
    if (size == 0)
        return false;
    if (s->suffix) {
        if (s->num.n == 0) /* "-0" */
            return false;
        uint64_t len = ref_range_num_value(s->num);
        r->first = (!ref_range_num_fits(s->num) || len >= size) ? 0 : size - len;
        r->last = size - 1;
        return true;
    }
    if (!ref_range_num_fits(s->num) || ref_range_num_value(s->num) >= size)
        return false;
    r->first = ref_range_num_value(s->num);
    r->last = size - 1;
    if (s->has_last && ref_range_num_fits(s->last) && ref_range_num_value(s->last) < size - 1)
        r->last = ref_range_num_value(s->last);
    return true;
}

static int ref_range_by_first(const void *a, const void *b)
{
    const struct ref_range *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return 0;
}

/* Sorts a copy of v[0..n) and merges overlapping or adjacent intervals into
 * a new list. */
static struct ref_range_list ref_range_merge(const struct ref_range *v, size_t n)
{
    struct ref_range_list m = {malloc((n ? n : 1) * sizeof *v), 0};
    struct ref_range *s = malloc((n ? n : 1) * sizeof *v);
    memcpy(s, v, n * sizeof *v);
    qsort(s, n, sizeof *s, ref_range_by_first);
    for (size_t i = 0; i < n; i++) {
        /* last < size <= UINT64_MAX, so last + 1 cannot wrap */
        if (m.n && s[i].first <= m.v[m.n - 1].last + 1) {
            if (s[i].last > m.v[m.n - 1].last)
                m.v[m.n - 1].last = s[i].last;
        } else {
            m.v[m.n++] = s[i];
        }
    }
    free(s);
    return m;
}

/* The same merge by marking every byte of a small representation. */
static struct ref_range_list ref_range_mark(const struct ref_range *v, size_t n, uint64_t size)
{
    bool *mark = calloc((size_t)size + 1, 1);
    for (size_t i = 0; i < n; i++)
        for (uint64_t b = v[i].first; b <= v[i].last; b++)
            mark[b] = true;
    struct ref_range_list m = {malloc(((size_t)size / 2 + 1) * sizeof *v), 0};
    for (uint64_t b = 0; b < size; b++) {
        if (!mark[b])
            continue;
        uint64_t e = b;
        while (e + 1 < size && mark[e + 1])
            e++;
        m.v[m.n++] = (struct ref_range){b, e};
        b = e;
    }
    free(mark);
    return m;
}

/* range.h's count: the intervals merged one at a time in the order
 * received; true (and *m freed) as soon as a step holds more than max
 * ranges. Merging is a union of byte sets, so merge(merge(a) + b) is
 * merge(a + b): the final list is the merge of all intervals. */
static bool ref_range_incremental(const struct ref_range *v, size_t n, unsigned max,
                                  struct ref_range_list *m)
{
    struct ref_range *tmp = malloc((max + 2) * sizeof *tmp);
    *m = (struct ref_range_list){malloc(sizeof *tmp), 0};
    for (size_t i = 0; i < n; i++) {
        memcpy(tmp, m->v, m->n * sizeof *tmp);
        tmp[m->n] = v[i];
        struct ref_range_list next = ref_range_merge(tmp, m->n + 1);
        free(m->v);
        *m = next;
        if (m->n > max) {
            free(tmp);
            free(m->v);
            m->v = NULL;
            return true;
        }
    }
    free(tmp);
    return false;
}

static int ref_range_finish(struct ref_range_list *iv, int verdict)
{
    free(iv->v);
    return verdict;
}

int ref_range_parse(const char *p, size_t n, uint64_t size, struct ref_range *out, unsigned max)
{
    /* The field value without surrounding OWS, then the unit. */
    while (n && ref_range_ows(p[0])) {
        p++;
        n--;
    }
    while (n && ref_range_ows(p[n - 1]))
        n--;
    if (n < 6 || strncasecmp(p, "bytes=", 6) != 0)
        return 0;
    p += 6;
    n -= 6;

    /* Every element, each parsed on its own; any bad one: ignore the field. */
    struct ref_range_list iv = {malloc((n + 1) * sizeof(struct ref_range)), 0};
    size_t elements = 0;
    unsigned __int128 total = 0;
    for (size_t start = 0; start <= n;) {
        const char *comma = memchr(p + start, ',', n - start);
        size_t end = comma ? (size_t)(comma - p) : n;
        size_t a = start, b = end;
        while (a < b && ref_range_ows(p[a]))
            a++;
        while (b > a && ref_range_ows(p[b - 1]))
            b--;
        start = end + 1;
        if (a == b)
            continue; /* empty element, §5.6.1.2 */
        struct ref_range_spec s;
        if (!ref_range_parse_spec(p + a, b - a, &s) || !ref_range_spec_ordered(&s))
            return ref_range_finish(&iv, 0);
        elements++;
        struct ref_range r;
        if (ref_range_interval(&s, size, &r)) {
            iv.v[iv.n++] = r;
            total += (unsigned __int128)(r.last - r.first) + 1;
        }
    }
    if (elements == 0)
        return ref_range_finish(&iv, 0);
    if (iv.n == 0)
        return ref_range_finish(&iv, -416);

    /* the total as requested, then the count as range.h defines it */
    if (total > size)
        return ref_range_finish(&iv, -1);
    struct ref_range_list m;
    if (ref_range_incremental(iv.v, iv.n, max, &m))
        return ref_range_finish(&iv, -1);

    /* the reference checks itself: one-shot merge, and bytes for small sizes */
    struct ref_range_list all = ref_range_merge(iv.v, iv.n);
    if (all.n != m.n || memcmp(all.v, m.v, m.n * sizeof *m.v) != 0)
        abort();
    free(all.v);
    if (size <= 256) {
        struct ref_range_list b = ref_range_mark(iv.v, iv.n, size);
        if (b.n != m.n || memcmp(b.v, m.v, m.n * sizeof *m.v) != 0)
            abort();
        free(b.v);
    }
    memcpy(out, m.v, m.n * sizeof *m.v);
    int verdict = (int)m.n;
    free(m.v);
    return ref_range_finish(&iv, verdict);
}

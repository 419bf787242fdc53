/* SPDX-License-Identifier: MIT */
/*
 * vhost.c - see vhost.h. Names are kept lowercased in one text area and
 * sorted by (length, bytes), so a lookup is one binary search for the
 * exact name and, on a miss, one for "*." and the key after its first
 * label.
 */
#include "core/vhost.h"

#include "core/bytes.h"

static bool is_ldh(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

static bool is_v6_char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == ':' || c == '.';
}

long vhost_host_key(struct span authority, char *out, size_t cap)
{
    const char *p = authority.p;
    size_t n = authority.n, end;
    if (n > 0 && p[0] == '[') {
        end = mem_find(p, n, ']');
        if (end == n)
            return -1;
        end++; /* the bracket belongs to the key */
    } else {
        end = mem_find(p, n, ':');
    }
    if (end > 1 && p[end - 1] == '.' && p[0] != '[')
        end--; /* "example.com." names the same host (RFC 1034 §3.1) */
    if (end == 0 || end > VHOST_NAME_MAX + 2 || end > cap)
        return -1;
    for (size_t i = 0; i < end; i++)
        out[i] = ascii_lower(p[i]);
    return (long)end;
}

/* A bracketed IPv6 literal: hex digits, ':' and '.', at least "[::]". */
static bool v6_literal(const char *s, size_t n)
{
    if (n < 4 || s[0] != '[' || s[n - 1] != ']')
        return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!is_v6_char(s[i]))
            return false;
    return true;
}

/* Labels of 1 to 63 letters, digits and '-' joined by single dots. */
static bool dns_name(const char *s, size_t n)
{
    size_t label = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.') {
            if (label == 0)
                return false;
            label = 0;
        } else if (!is_ldh(s[i]) || ++label > 63) {
            return false;
        }
    }
    return label > 0;
}

vhost_error vhost_add(struct vhost_table *t, struct span name, unsigned site)
{
    size_t n = name.n;
    if (n > 1 && name.p[n - 1] == '.' && name.p[0] != '[')
        n--;
    if (n == 0)
        return "a site name is empty";
    if (n > VHOST_NAME_MAX)
        return "a site name is longer than 253 bytes";
    if (t->n == VHOST_NAMES_MAX || t->used + n > VHOST_TEXT_MAX)
        return "more than 256 site names";
    if (site > 255)
        return "more sites than the table holds";
    char *dst = t->text + t->used;
    for (size_t i = 0; i < n; i++)
        dst[i] = ascii_lower(name.p[i]);
    bool wild = n > 2 && dst[0] == '*' && dst[1] == '.';
    if (!(dst[0] == '[' ? v6_literal(dst, n) : dns_name(dst + (wild ? 2 : 0), n - (wild ? 2 : 0))))
        return "is not a host name (letters, digits, '-' and '.', an IPv6 address in brackets, "
               "or '*.' and a name)";
    t->name[t->n++] = (struct vhost_name){(uint16_t)t->used, (uint8_t)n, (uint8_t)site};
    t->used += n;
    return NULL;
}

/* Order: shorter first, then bytes. */
static int compare(const char *a, size_t an, const char *b, size_t bn)
{
    if (an != bn)
        return an < bn ? -1 : 1;
    for (size_t i = 0; i < an; i++)
        if (a[i] != b[i])
            return (unsigned char)a[i] < (unsigned char)b[i] ? -1 : 1;
    return 0;
}

static int compare_entries(const struct vhost_table *t, const struct vhost_name *a,
                           const struct vhost_name *b)
{
    return compare(t->text + a->off, a->len, t->text + b->off, b->len);
}

bool vhost_sort(struct vhost_table *t, unsigned *dup, unsigned *other)
{
    /* Insertion sort: at most 256 names, once at start. */
    for (unsigned i = 1; i < t->n; i++) {
        struct vhost_name x = t->name[i];
        unsigned j = i;
        while (j > 0 && compare_entries(t, &t->name[j - 1], &x) > 0) {
            t->name[j] = t->name[j - 1];
            j--;
        }
        t->name[j] = x;
    }
    for (unsigned i = 1; i < t->n; i++)
        if (compare_entries(t, &t->name[i - 1], &t->name[i]) == 0) {
            *dup = i;
            *other = t->name[i - 1].site;
            return false;
        }
    return true;
}

struct span vhost_name_text(const struct vhost_table *t, unsigned i)
{
    return span_make(t->text + t->name[i].off, t->name[i].len);
}

static int find(const struct vhost_table *t, const char *key, size_t n)
{
    unsigned lo = 0, hi = t->n;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        const struct vhost_name *e = &t->name[mid];
        int c = compare(t->text + e->off, e->len, key, n);
        if (c == 0)
            return e->site;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int vhost_lookup(const struct vhost_table *t, struct span key)
{
    if (key.n == 0 || key.n > VHOST_NAME_MAX + 2)
        return -1;
    int site = find(t, key.p, key.n);
    if (site >= 0 || key.p[0] == '[')
        return site;
    size_t dot = mem_find(key.p, key.n, '.');
    if (dot == 0 || dot >= key.n - 1)
        return -1; /* no label before or after: "*." would match nothing */
    char wild[VHOST_NAME_MAX + 4];
    size_t rest = key.n - dot - 1;
    wild[0] = '*';
    wild[1] = '.';
    mem_copy(wild + 2, key.p + dot + 1, rest);
    return find(t, wild, rest + 2);
}

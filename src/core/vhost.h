/* SPDX-License-Identifier: MIT */
/*
 * vhost.h - virtual hosts by name: the host of a request's authority (Host,
 * an absolute-form target's authority, HTTP/2's :authority) reduced to the
 * key that names a site, and a table of site names that answers which site
 * a key belongs to. Pure: the table is built once at start from validated
 * names and only read afterwards; a lookup allocates nothing and is a
 * binary search (twice for a wildcard).
 *
 * A key is the authority's host lowercased (ASCII), its port removed and
 * one trailing dot dropped ("WWW.Example.COM.:8080" -> "www.example.com");
 * an IPv6 literal keeps its brackets ("[::1]"). A site name is such a key
 * written by the operator: letters, digits, '-' and '.' in labels of 1 to
 * 63 bytes (so an IPv4 address too), a bracketed IPv6 literal, or "*."
 * followed by such a name, which matches exactly one more label in front
 * ("*.example.com" matches "a.example.com", never "example.com" or
 * "a.b.example.com"). An exact name wins over a wildcard.
 */
#ifndef PITH_VHOST_H
#define PITH_VHOST_H

#include "core.h"

#define VHOST_NAMES_MAX 256   /* names over all sites */
#define VHOST_TEXT_MAX  16384 /* their bytes together */
#define VHOST_NAME_MAX  253   /* a DNS name's longest text form */

struct vhost_name {
    uint16_t off; /* in text[] */
    uint8_t len;
    uint8_t site;
};

struct vhost_table {
    unsigned n; /* first: a table with few names touches little of itself */
    size_t used;
    struct vhost_name name[VHOST_NAMES_MAX]; /* sorted by vhost_sort() */
    char text[VHOST_TEXT_MAX];               /* the names, lowercased, without trailing dot */
};

/* Why a name was refused (a constant sentence), or NULL when accepted. */
typedef const char *vhost_error;

/* The key of an authority (uri-host [ ":" port ], already checked by the
 * request's parser) into out[cap]: its length, or -1 when it is empty,
 * longer than VHOST_NAME_MAX or does not fit. */
long vhost_host_key(struct span authority, char *out, size_t cap);

/* Validates name (see above; one trailing dot allowed), lowercases it and
 * adds it for site (0..255). The table must be sorted again before the
 * next lookup. */
vhost_error vhost_add(struct vhost_table *t, struct span name, unsigned site);

/* Sorts the table for lookups. When two entries have the same name, returns
 * false with *dup the index of one of them in t->name[] and *other the site
 * of the other; the table is sorted anyway. */
bool vhost_sort(struct vhost_table *t, unsigned *dup, unsigned *other);

/* The name of entry i, for messages. */
struct span vhost_name_text(const struct vhost_table *t, unsigned i);

/* The site whose name matches key (a vhost_host_key() result), exact names
 * first, then a wildcard for everything after the key's first label; -1
 * when none does. */
int vhost_lookup(const struct vhost_table *t, struct span key);

#endif

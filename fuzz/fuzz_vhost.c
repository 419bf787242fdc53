/* SPDX-License-Identifier: MIT */
/*
 * fuzz_vhost.c - site names and authority keys (src/core/vhost.c) on any
 * bytes. The input is split at its first empty line: the lines before are
 * site names (site i for line i), the rest is an authority. Checked: an
 * authority's key is within its bounds, lowercase, and the input's host
 * bytes; every accepted name is found again by its own key (after the
 * table is sorted, when no two names collide) with its own site, or with
 * the site of an exact name that shares its text; a lookup never reads past
 * the key (keys are copied into buffers of exactly their length).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/vhost.h"

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_vhost: %s\n", what);
        __builtin_trap();
    }
}

static int lookup_copy(const struct vhost_table *t, const char *key, size_t n)
{
    char *k = malloc(n ? n : 1);
    memcpy(k, key, n);
    int site = vhost_lookup(t, (struct span){k, n});
    free(k);
    return site;
}

static void check_key(const char *in, size_t n)
{
    char *a = malloc(n ? n : 1);
    memcpy(a, in, n);
    char out[300];
    size_t cap = 1 + (n ? (unsigned char)in[0] : 0) % 299;
    long r = vhost_host_key((struct span){a, n}, out, cap);
    if (r >= 0) {
        require((size_t)r <= cap && (size_t)r <= n && r > 0, "key within bounds");
        for (long i = 0; i < r; i++) {
            require(!(out[i] >= 'A' && out[i] <= 'Z'), "key is lowercase");
            char c = in[i];
            require(out[i] == (c >= 'A' && c <= 'Z' ? c + 32 : c), "key is the input's bytes");
        }
    }
    free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct vhost_table t;
    memset(&t, 0, sizeof t);
    const char *p = (const char *)data;
    size_t i = 0, site = 0;
    unsigned nadded = 0;
    while (i < size) {
        size_t e = i;
        while (e < size && p[e] != '\n')
            e++;
        if (e == i) { /* the empty line: the authority follows */
            i = e + 1;
            break;
        }
        char *name = malloc(e - i);
        memcpy(name, p + i, e - i);
        unsigned before = t.n;
        vhost_error err = vhost_add(&t, (struct span){name, e - i}, (unsigned)(site % 256));
        require((err == NULL) == (t.n == before + 1), "an accepted name is added once");
        nadded += err == NULL;
        free(name);
        site++;
        i = e + 1;
    }
    unsigned dup, other;
    bool distinct = vhost_sort(&t, &dup, &other);
    require(t.n == nadded, "every accepted name is in the table");
    if (distinct) {
        for (unsigned k = 0; k < t.n; k++) {
            struct span s = vhost_name_text(&t, k);
            require(s.n > 0 && s.n <= VHOST_NAME_MAX, "a name's length");
            int got = lookup_copy(&t, s.p, s.n);
            require(got == t.name[k].site, "a name finds its own site");
        }
    }
    if (i <= size) {
        check_key(p + i, size - i);
        char out[300];
        long r = vhost_host_key((struct span){p + i, size - i}, out, sizeof out);
        if (r >= 0) {
            int s = lookup_copy(&t, out, (size_t)r);
            require(s >= -1 && s < 256, "a site index");
        }
    }
    return 0;
}

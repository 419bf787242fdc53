/* SPDX-License-Identifier: MIT */
/*
 * h3_cid.c - connection ID -> connection, looked up for every datagram:
 * an open-addressing table (linear probing, deletion by backward shift, so
 * no tombstones pile up) keyed by SipHash of the ID under a random key, so
 * a client choosing Destination Connection IDs cannot make it degenerate
 * (a client chooses the first DCID of every connection). Sized at start
 * for twice the IDs the connections may hold; a full table refuses the new
 * ID (the connection then gets fewer IDs, or is not accepted).
 */
#include "http3/h3_internal.h"

#include "core/siphash.h"
#include "sys/sys.h"

#include <string.h>

struct cid_entry {
    struct h3_conn *hc; /* NULL: free */
    uint8_t len;
    uint8_t id[NGTCP2_MAX_CIDLEN];
};

struct h3_cidmap {
    struct siphash_key key;
    uint32_t mask, used, limit;
    size_t bytes;
    struct cid_entry e[];
};

struct h3_cidmap *h3_cidmap_new(uint32_t capacity)
{
    uint32_t n = 64;
    while (n < 2 * capacity)
        n *= 2;
    size_t bytes = sizeof(struct h3_cidmap) + (size_t)n * sizeof(struct cid_entry);
    struct h3_cidmap *m = sys_map(bytes);
    if (!m)
        return NULL;
    m->mask = n - 1;
    m->limit = n / 2;
    m->bytes = bytes;
    if (sys_random(&m->key, sizeof m->key) < 0) {
        sys_unmap(m, bytes);
        return NULL;
    }
    return m;
}

void h3_cidmap_free(struct h3_cidmap *m)
{
    if (m)
        sys_unmap(m, m->bytes);
}

static uint32_t home(const struct h3_cidmap *m, const uint8_t *cid, size_t len)
{
    return (uint32_t)siphash64(&m->key, cid, len) & m->mask;
}

static bool is(const struct cid_entry *e, const uint8_t *cid, size_t len)
{
    return e->hc && e->len == len && memcmp(e->id, cid, len) == 0;
}

int h3_cidmap_add(struct h3_cidmap *m, const uint8_t *cid, size_t len, struct h3_conn *hc)
{
    if (len > NGTCP2_MAX_CIDLEN || m->used >= m->limit)
        return -1;
    uint32_t i = home(m, cid, len);
    while (m->e[i].hc) {
        if (is(&m->e[i], cid, len))
            return m->e[i].hc == hc ? 0 : -1; /* another connection's: refused */
        i = (i + 1) & m->mask;
    }
    m->e[i].hc = hc;
    m->e[i].len = (uint8_t)len;
    memcpy(m->e[i].id, cid, len);
    m->used++;
    return 0;
}

struct h3_conn *h3_cidmap_get(const struct h3_cidmap *m, const uint8_t *cid, size_t len)
{
    if (len > NGTCP2_MAX_CIDLEN)
        return NULL;
    for (uint32_t i = home(m, cid, len); m->e[i].hc; i = (i + 1) & m->mask)
        if (is(&m->e[i], cid, len))
            return m->e[i].hc;
    return NULL;
}

uint32_t h3_cidmap_count(const struct h3_cidmap *m)
{
    return m->used;
}

void h3_cidmap_del(struct h3_cidmap *m, const uint8_t *cid, size_t len)
{
    if (len > NGTCP2_MAX_CIDLEN)
        return;
    uint32_t i = home(m, cid, len);
    while (m->e[i].hc && !is(&m->e[i], cid, len))
        i = (i + 1) & m->mask;
    if (!m->e[i].hc)
        return;
    m->used--;
    /* Backward shift: each later entry of the run moves into the hole when
     * its home lies at or before the hole (cyclically). */
    for (uint32_t j = (i + 1) & m->mask; m->e[j].hc; j = (j + 1) & m->mask) {
        uint32_t h = home(m, m->e[j].id, m->e[j].len);
        if (((j - h) & m->mask) >= ((j - i) & m->mask)) {
            m->e[i] = m->e[j];
            i = j;
        }
    }
    m->e[i].hc = NULL;
}

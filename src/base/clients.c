/* SPDX-License-Identifier: MIT */
/*
 * clients.c - see clients.h. Linear probing with backward-shift deletion
 * (no tombstones, so probe lengths never grow with time); every field a
 * reader may look at is read and written with relaxed atomics, the key
 * last on insertion (release) and first on removal.
 */
#include "base/clients.h"

#include "core/bytes.h"
#include "core/siphash.h"
#include "sys/sys.h"

#include <netinet/in.h>

struct clients_slot {
    uint64_t key; /* 0: empty */
    uint32_t conns;
    uint32_t fails;
    int64_t fail_end; /* the failures count until this second */
};

struct clients_table {
    uint32_t tracked; /* entries with failures and no connection (the writer's) */
    uint32_t pad;
    struct clients_slot slot[];
};

struct clients {
    struct siphash_key k;
    unsigned workers;
    uint32_t mask; /* slots per table - 1 */
    unsigned track;
    size_t table_bytes;
    char *tables;
};

static struct clients_table *table(const struct clients *cl, unsigned w)
{
    return (struct clients_table *)(void *)(cl->tables + (size_t)w * cl->table_bytes);
}

struct clients *clients_create(unsigned workers, unsigned max_conns, unsigned track)
{
    struct clients *cl = sys_map_shared(sizeof *cl);
    if (!cl || sys_random(&cl->k, sizeof cl->k) < 0)
        return NULL;
    uint32_t slots = 64;
    while (slots < 2 * ((uint64_t)max_conns + track))
        slots <<= 1;
    cl->workers = workers;
    cl->mask = slots - 1;
    cl->track = track;
    cl->table_bytes = sizeof(struct clients_table) + (size_t)slots * sizeof(struct clients_slot);
    cl->tables = sys_map_shared((size_t)workers * cl->table_bytes);
    return cl->tables ? cl : NULL;
}

uint64_t clients_key(const struct clients *cl, const struct net_addr *a)
{
    unsigned char b[16];
    mem_copy(b, a->b, 16);
    bool top_zero = true;
    for (int i = 0; i < 8; i++)
        top_zero = top_zero && b[i] == 0;
    if (!top_zero)
        mem_zero(b + 8, 8); /* IPv6: the /64 is the client */
    uint64_t h = siphash64(&cl->k, b, sizeof b);
    return h ? h : 1;
}

static uint64_t load64(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store64(uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static uint32_t load32(const uint32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void store32(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static int64_t load_end(const int64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void store_end(int64_t *p, int64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* key's slot in t, or the empty one where it would go (*found false). */
static struct clients_slot *probe(const struct clients *cl, struct clients_table *t, uint64_t key,
                                  bool *found)
{
    for (uint32_t i = (uint32_t)key & cl->mask, n = 0; n <= cl->mask; i = (i + 1) & cl->mask, n++) {
        uint64_t k = load64(&t->slot[i].key);
        if (k == key || k == 0) {
            *found = k == key;
            return &t->slot[i];
        }
    }
    *found = false;
    return NULL; /* full: never, at twice the capacity a worker can fill */
}

/* Removes the entry at s and shifts the entries after it back, so that
 * every probe still reaches its key. Each moved slot is emptied before its
 * entry lands in the hole: a reader may miss it meanwhile, never see it
 * twice. */
static void remove_at(const struct clients *cl, struct clients_table *t, struct clients_slot *s)
{
    uint32_t hole = (uint32_t)(s - t->slot);
    store64(&t->slot[hole].key, 0);
    for (uint32_t j = (hole + 1) & cl->mask; load64(&t->slot[j].key); j = (j + 1) & cl->mask) {
        struct clients_slot e = t->slot[j];
        uint32_t home = (uint32_t)e.key & cl->mask;
        /* Does j's entry's probe pass the hole (home..j cyclically covers it)? */
        bool passes = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
        if (!passes)
            continue;
        store64(&t->slot[j].key, 0);
        store32(&t->slot[hole].conns, e.conns);
        store32(&t->slot[hole].fails, e.fails);
        store_end(&t->slot[hole].fail_end, e.fail_end);
        store64(&t->slot[hole].key, e.key);
        hole = j;
    }
}

static bool idle(const struct clients_slot *s, int64_t now)
{
    return s->conns == 0 && (s->fails == 0 || s->fail_end <= now);
}

unsigned clients_conns(const struct clients *cl, uint64_t key)
{
    unsigned n = 0;
    for (unsigned w = 0; w < cl->workers; w++) {
        bool found;
        struct clients_slot *s = probe(cl, table(cl, w), key, &found);
        if (found)
            n += load32(&s->conns);
    }
    return n;
}

bool clients_open(struct clients *cl, unsigned worker, uint64_t key, unsigned limit)
{
    if (limit && clients_conns(cl, key) >= limit)
        return false;
    struct clients_table *t = table(cl, worker);
    bool found;
    struct clients_slot *s = probe(cl, t, key, &found);
    if (!s)
        return true; /* cannot happen (sized at twice the need): counted as nothing */
    if (!found) {
        store32(&s->conns, 0);
        store32(&s->fails, 0);
        store_end(&s->fail_end, 0);
        store64(&s->key, key);
    } else if (s->conns == 0 && s->fails) {
        t->tracked--; /* a client with failures is back with a connection */
    }
    store32(&s->conns, s->conns + 1);
    return true;
}

void clients_close(struct clients *cl, unsigned worker, uint64_t key)
{
    struct clients_table *t = table(cl, worker);
    bool found;
    struct clients_slot *s = probe(cl, t, key, &found);
    if (!found || s->conns == 0)
        return;
    store32(&s->conns, s->conns - 1);
    if (s->conns == 0 && s->fails)
        t->tracked++; /* its failures are remembered until their window ends */
    else if (s->conns == 0)
        remove_at(cl, t, s);
}

bool clients_failed(struct clients *cl, unsigned worker, uint64_t key, int64_t now, unsigned window)
{
    struct clients_table *t = table(cl, worker);
    bool found;
    struct clients_slot *s = probe(cl, t, key, &found);
    if (!found) {
        if (t->tracked >= cl->track)
            clients_sweep(cl, worker, now);
        if (t->tracked >= cl->track || !(s = probe(cl, t, key, &found)))
            return false;
        store32(&s->conns, 0);
        store32(&s->fails, 0);
        store_end(&s->fail_end, 0);
        store64(&s->key, key);
        t->tracked++;
    }
    if (s->fail_end <= now) { /* a new run of failures */
        store32(&s->fails, 0);
        store_end(&s->fail_end, now + window);
    }
    store32(&s->fails, s->fails + 1);
    return true;
}

unsigned clients_failures(const struct clients *cl, uint64_t key, int64_t now, int64_t *retry)
{
    unsigned n = 0;
    *retry = 0;
    for (unsigned w = 0; w < cl->workers; w++) {
        bool found;
        struct clients_slot *s = probe(cl, table(cl, w), key, &found);
        int64_t end = found ? load_end(&s->fail_end) : 0;
        if (!found || end <= now)
            continue;
        n += load32(&s->fails);
        if (end - now > *retry)
            *retry = end - now;
    }
    return n;
}

void clients_reset(struct clients *cl, unsigned worker)
{
    struct clients_table *t = table(cl, worker);
    for (uint32_t i = 0; i <= cl->mask; i++)
        store64(&t->slot[i].key, 0);
    t->tracked = 0;
}

void clients_sweep(struct clients *cl, unsigned worker, int64_t now)
{
    struct clients_table *t = table(cl, worker);
    for (uint32_t i = 0; i <= cl->mask; i++) {
        struct clients_slot *s = &t->slot[i];
        /* A removal shifts later entries back into i: look at i again. */
        while (s->key && idle(s, now)) {
            if (s->fails)
                t->tracked--;
            remove_at(cl, t, s);
        }
    }
}

/* ---- addresses -------------------------------------------------------------------- */

bool client_addr_from(const struct sockaddr_storage *ss, struct net_addr *out)
{
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
        net_addr_from_v4(out, (const unsigned char *)&in->sin_addr);
        return true;
    }
    if (ss->ss_family == AF_INET6) {
        mem_copy(out->b, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
        return true;
    }
    return false;
}

void client_addr_to(const struct net_addr *a, uint16_t port, struct sockaddr_storage *out)
{
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)out;
    *in6 = (struct sockaddr_in6){.sin6_family = AF_INET6, .sin6_port = htons(port)};
    mem_copy(&in6->sin6_addr, a->b, 16);
}

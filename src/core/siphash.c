/* SPDX-License-Identifier: MIT */
/*
 * siphash.c - see siphash.h. Written from the paper's description; the unit
 * test checks it against the reference vectors (vectors.h of the reference
 * implementation, the first and last of each table).
 */
#include "core/siphash.h"

static uint64_t rotl(uint64_t x, unsigned b)
{
    return (x << b) | (x >> (64 - b));
}

struct state {
    uint64_t v0, v1, v2, v3;
};

static void round_(struct state *s)
{
    s->v0 += s->v1;
    s->v1 = rotl(s->v1, 13);
    s->v1 ^= s->v0;
    s->v0 = rotl(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = rotl(s->v3, 16);
    s->v3 ^= s->v2;
    s->v0 += s->v3;
    s->v3 = rotl(s->v3, 21);
    s->v3 ^= s->v0;
    s->v2 += s->v1;
    s->v1 = rotl(s->v1, 17);
    s->v1 ^= s->v2;
    s->v2 = rotl(s->v2, 32);
}

static uint64_t load_le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The compression of every whole and the last partial word. */
static void absorb(struct state *s, const unsigned char *p, size_t n)
{
    size_t whole = n & ~(size_t)7;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = load_le(p + i, 8);
        s->v3 ^= m;
        round_(s);
        round_(s);
        s->v0 ^= m;
    }
    uint64_t last = ((uint64_t)n << 56) | load_le(p + whole, n - whole);
    s->v3 ^= last;
    round_(s);
    round_(s);
    s->v0 ^= last;
}

static struct state init(const struct siphash_key *k, bool wide)
{
    struct state s = {k->k0 ^ 0x736f6d6570736575ull, k->k1 ^ 0x646f72616e646f6dull,
                      k->k0 ^ 0x6c7967656e657261ull, k->k1 ^ 0x7465646279746573ull};
    if (wide)
        s.v1 ^= 0xee;
    return s;
}

static uint64_t finish(struct state *s, uint64_t mark)
{
    s->v2 ^= mark;
    for (int i = 0; i < 4; i++)
        round_(s);
    return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

uint64_t siphash64(const struct siphash_key *k, const void *p, size_t n)
{
    struct state s = init(k, false);
    absorb(&s, p, n);
    return finish(&s, 0xff);
}

void siphash128(const struct siphash_key *k, const void *p, size_t n, uint64_t out[2])
{
    struct state s = init(k, true);
    absorb(&s, p, n);
    out[0] = finish(&s, 0xee);
    s.v1 ^= 0xdd;
    for (int i = 0; i < 4; i++)
        round_(&s);
    out[1] = s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

/* SPDX-License-Identifier: MIT */
/*
 * siphash.h - SipHash-2-4 (Aumasson and Bernstein, 2012), the keyed hash
 * behind the tables whose keys a client chooses (issue 22): the per-client
 * connection counts and the cache of verified credentials. With a key made
 * at start from the kernel's random numbers, nobody who sees only pith's
 * answers can make two inputs collide on purpose. Pure; the 64-bit form is
 * the reference's, the 128-bit form its documented variant.
 */
#ifndef PITH_SIPHASH_H
#define PITH_SIPHASH_H

#include "core.h"

struct siphash_key {
    uint64_t k0, k1;
};

uint64_t siphash64(const struct siphash_key *k, const void *p, size_t n);

/* The 128-bit variant, into out[2] (little-endian halves, as the reference
 * writes its 16 bytes). */
void siphash128(const struct siphash_key *k, const void *p, size_t n, uint64_t out[2]);

#endif

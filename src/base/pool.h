/* SPDX-License-Identifier: MIT */
/*
 * pool.h - fixed-size I/O buffers for connections with a request in flight.
 * All slots are reserved at start (address space only: a slot's pages become
 * resident when first used), handed out LIFO so the same warm slots serve
 * most requests, and taken back when a connection goes idle, so idle
 * keep-alive connections hold no buffer (docs/DESIGN.md §5). Under ASan a
 * free slot is poisoned: a use after release is reported.
 */
#ifndef PITH_POOL_H
#define PITH_POOL_H

#include <stddef.h>
#include <stdint.h>

/* One slot's regions, in this order: the request bytes (a whole head and
 * some pipelined bytes); the exchange itself (struct exchange: only a
 * connection with a request in flight has one, so an idle connection costs
 * none of it), on the same page as what follows; the response head and
 * generated bodies (error pages, listing chunks); a body source's state
 * (getdents output while a listing streams, multipart ranges). A request
 * answered from the cache touches the first pages of the first two only. */
#define POOL_IN_SIZE   (32 * 1024)
#define POOL_EXCH_SIZE 1024 /* shares its page with the start of the out region */
#define POOL_OUT_SIZE  (24 * 1024 - POOL_EXCH_SIZE)
#define POOL_DIR_SIZE  (8 * 1024)
#define POOL_SLOT_SIZE (POOL_IN_SIZE + POOL_EXCH_SIZE + POOL_OUT_SIZE + POOL_DIR_SIZE)

struct pool {
    char *base;
    uint32_t *free_stack; /* indexes of free slots; top at nfree - 1 */
    uint32_t count, nfree;
    uint32_t next_unused; /* slots [next_unused, count) were never handed out */
};

/* Reserves count slots. Returns 0 or -ENOMEM. */
int pool_init(struct pool *p, uint32_t count);

/* A free slot (POOL_SLOT_SIZE bytes), or NULL when all are in use. */
char *pool_get(struct pool *p);

/* Gives a slot back. */
void pool_put(struct pool *p, char *slot);

/* How many slots pool_get() can still hand out. */
static inline uint32_t pool_available(const struct pool *p)
{
    return p->nfree + (p->count - p->next_unused);
}

#endif

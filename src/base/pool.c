/* SPDX-License-Identifier: MIT */
/*
 * pool.c - a stack of free slot indexes over one mapping. Nothing is
 * allocated after pool_init().
 */
#include "base/pool.h"

#include "core/core.h"
#include "sys/sys.h"

#include <errno.h>

#if defined(PITH_ASAN) && PITH_ASAN
#include <sanitizer/asan_interface.h>
static void poison(char *p, size_t n)
{
    ASAN_POISON_MEMORY_REGION(p, n);
}
static void unpoison(char *p, size_t n)
{
    ASAN_UNPOISON_MEMORY_REGION(p, n);
}
#else
static void poison(char *p, size_t n)
{
    (void)p;
    (void)n;
}
static void unpoison(char *p, size_t n)
{
    (void)p;
    (void)n;
}
#endif

int pool_init(struct pool *p, uint32_t count)
{
    p->base = sys_map((size_t)count * POOL_SLOT_SIZE);
    p->free_stack = sys_map((size_t)count * sizeof *p->free_stack);
    if (!p->base || !p->free_stack)
        return -ENOMEM;
    p->count = count;
    p->nfree = 0;
    p->next_unused = 0;
    poison(p->base, (size_t)count * POOL_SLOT_SIZE);
    return 0;
}

char *pool_get(struct pool *p)
{
    uint32_t index;
    if (p->nfree)
        index = p->free_stack[--p->nfree]; /* LIFO: the warmest slot */
    else if (p->next_unused < p->count)
        index = p->next_unused++; /* never used: its pages are not resident yet */
    else
        return NULL;
    char *slot = p->base + (size_t)index * POOL_SLOT_SIZE;
    unpoison(slot, POOL_SLOT_SIZE);
    return slot;
}

void pool_put(struct pool *p, char *slot)
{
    size_t off = (size_t)(slot - p->base);
    PITH_ASSERT(off % POOL_SLOT_SIZE == 0 && off / POOL_SLOT_SIZE < p->count);
    PITH_ASSERT(p->nfree < p->count);
    poison(slot, POOL_SLOT_SIZE);
    p->free_stack[p->nfree++] = (uint32_t)(off / POOL_SLOT_SIZE);
}

/* SPDX-License-Identifier: MIT */
/*
 * h2_mem.c - nghttp2's allocator (struct h2_conn's mem). nghttp2 allocates
 * a dozen small records per request (the stream, its queued frames, the
 * copy of the response's fields, header buffers) and frees them when the
 * stream closes. With a hundred streams open per connection, more blocks of
 * a size are in flight than glibc's per-size cache holds (7), and its
 * slower bins were 7% of a small request's CPU. So blocks of up to
 * H2_BLOCK_MAX bytes come from the worker's own free lists, one per 16-byte
 * size class (malloc's blocks, kept rather than freed), and go back there;
 * the lists keep at most H2_BLOCK_KEEP bytes in all (past that a freed
 * block goes to free()), so what a worker holds for later is bounded. Under
 * ASan a block on a list is poisoned past its link: a use of the rest of a
 * freed block traps, one of its first word (the link) or of a block handed
 * out again does not, and a block freed twice stops the worker (ASan's own
 * double-free report never sees a listed block).
 *
 * The one allocation past a frame's payload size, the session's frame
 * buffer, goes to the connection's own region (H2_FRAMEBUF_REGION says
 * why); a second such buffer (a header block past 16 KiB) comes from
 * malloc.
 */
#include "http2/h2_internal.h"

#include "base/worker.h"
#include "core/core.h"
#include "event/conn.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#if defined(PITH_ASAN) && PITH_ASAN
#include <sanitizer/asan_interface.h>
#define poison(p, n)   ASAN_POISON_MEMORY_REGION(p, n)
#define unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
/* On a list already: poisoned past the link (a block in use never is). */
#define listed(q) __asan_address_is_poisoned((const char *)(q) + sizeof(void *))
#else
#define poison(p, n)   ((void)(p), (void)(n))
#define unpoison(p, n) ((void)(p), (void)(n))
#define listed(q)      ((void)(q), false)
#endif

/* A block's class is what malloc_usable_size() says it holds, rounded
 * down to 16 bytes: so no header of ours, and a block on the list of
 * class k holds at least 16k bytes. */
struct h2_blocks {
    void *free[H2_BLOCK_MAX / 16];
    size_t kept; /* bytes on the lists */
};

/* A worker is a process of its own, so the lists are the process's. They
 * are static rather than in the worker's mapping because LeakSanitizer
 * (the fuzz target's) scans static memory for pointers, not mappings: from
 * there the blocks on the lists are held, not leaked. */
static struct h2_blocks free_blocks;

static size_t round16(size_t n)
{
    return n ? (n + 15) & ~(size_t)15 : 16;
}

static void **list_of(struct h2_blocks *b, size_t cap)
{
    return &b->free[cap / 16 - 1];
}

static void *block_get(struct h2_blocks *b, size_t n)
{
    if (n > H2_BLOCK_MAX)
        return malloc(n);
    size_t cap = round16(n);
    void **list = list_of(b, cap);
    char *q = *list;
    if (!q)
        return malloc(cap);
    unpoison(q, cap);
    *list = *(void **)q;
    b->kept -= cap;
    return q;
}

static void block_put(struct h2_blocks *b, void *q)
{
    PITH_ASSERT(!listed(q)); /* a double free: two owners of one block next */
    size_t cap = malloc_usable_size(q) & ~(size_t)15;
    if (cap < 16 || cap > H2_BLOCK_MAX || b->kept + cap > H2_BLOCK_KEEP) {
        free(q);
        return;
    }
    void **list = list_of(b, cap);
    *(void **)q = *list;
    *list = q;
    b->kept += cap;
    /* The link stays readable: LeakSanitizer takes no pointer from
     * poisoned memory, and the rest of the list would look leaked. */
    poison((char *)q + sizeof(void *), cap - sizeof(void *));
}

static struct h2_blocks *blocks(struct h2_conn *hc)
{
    (void)hc;
    return &free_blocks;
}

static bool is_framebuf(const struct h2_conn *hc, const void *p)
{
    return p && (const char *)p == hc->framebuf;
}

static void *mem_malloc(size_t n, void *ud)
{
    struct h2_conn *hc = ud;
    if (n > 16384 /* a payload */ && n <= H2_FRAMEBUF_REGION && !hc->framebuf_taken) {
        hc->framebuf_taken = true;
        return hc->framebuf;
    }
    return block_get(blocks(hc), n);
}

static void mem_free(void *p, void *ud)
{
    struct h2_conn *hc = ud;
    if (!p)
        return;
    if (is_framebuf(hc, p))
        hc->framebuf_taken = false;
    else
        block_put(blocks(hc), p);
}

static void *mem_calloc(size_t k, size_t n, void *ud)
{
    if (n && k > SIZE_MAX / n)
        return NULL;
    void *p = mem_malloc(k * n, ud);
    if (p)
        memset(p, 0, k * n);
    return p;
}

static void *mem_realloc(void *p, size_t n, void *ud)
{
    struct h2_conn *hc = ud;
    if (!p)
        return mem_malloc(n, ud);
    size_t have = is_framebuf(hc, p) ? H2_FRAMEBUF_REGION : malloc_usable_size(p);
    if (n <= have)
        return p;
    void *q = block_get(blocks(hc), n);
    if (q) {
        memcpy(q, p, have);
        mem_free(p, ud);
    }
    return q;
}

void h2_mem_init(struct worker *w, struct h2_conn *hc)
{
    hc->framebuf = w->h2->framebufs + (size_t)(hc->c - w->conns) * H2_FRAMEBUF_REGION;
    hc->framebuf_taken = false;
    hc->mem = (nghttp2_mem){hc, mem_malloc, mem_free, mem_calloc, mem_realloc};
}

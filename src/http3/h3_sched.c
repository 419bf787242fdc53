/* SPDX-License-Identifier: MIT */
/*
 * h3_sched.c - when a worker's connections act: the clock QUIC's timestamps
 * come from, the timer heap, and the list of connections to flush.
 *
 * A module of its own, below every file that needs it (h3_worker.c,
 * h3_accept.c, h3_conn.c, h3_stream.c, h3_token.c read the clock, arm
 * timers or ask for a flush), so that none of them calls back up into
 * h3_worker.c: it calls nothing of src/http3 itself. What is due is acted
 * on by h3_worker.c, which takes the connections from here (h3_heap_due,
 * h3_dirty_next) and hands them to h3_conn.c.
 *
 * The timer heap: QUIC needs millisecond timers (ACK delay, loss
 * detection, pacing: RFC 9002 §6), finer than the worker's 250 ms wheel,
 * one per connection.
 */
#include "http3/h3_internal.h"

#include "sys/sys.h"

/* ---- the clock ------------------------------------------------------------------------- */

static uint64_t clock_system(void)
{
    return (uint64_t)sys_now_us() * 1000;
}

uint64_t (*h3_clock)(void) = clock_system;

void h3_clock_read(struct h3_worker *hw)
{
    hw->now_ns = h3_clock();
}

uint64_t h3_now(struct h3_worker *hw)
{
    return hw->now_ns;
}

int h3_sched_init(struct h3_worker *hw)
{
    hw->heap = sys_map((size_t)hw->nconns * sizeof *hw->heap);
    hw->dirty = sys_map((size_t)hw->nconns * sizeof *hw->dirty);
    return hw->heap && hw->dirty ? 0 : -1;
}

/* ---- the timer heap --------------------------------------------------------------------- */

static void heap_swap(struct h3_worker *hw, uint32_t a, uint32_t b)
{
    struct h3_conn *t = hw->heap[a];
    hw->heap[a] = hw->heap[b];
    hw->heap[b] = t;
    hw->heap[a]->heap_at = a;
    hw->heap[b]->heap_at = b;
}

static void heap_up(struct h3_worker *hw, uint32_t i)
{
    while (i > 0 && hw->heap[(i - 1) / 2]->expiry > hw->heap[i]->expiry) {
        heap_swap(hw, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void heap_down(struct h3_worker *hw, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < hw->heap_n && hw->heap[l]->expiry < hw->heap[m]->expiry)
            m = l;
        if (r < hw->heap_n && hw->heap[r]->expiry < hw->heap[m]->expiry)
            m = r;
        if (m == i)
            return;
        heap_swap(hw, i, m);
        i = m;
    }
}

void h3_heap_del(struct h3_worker *hw, struct h3_conn *hc)
{
    uint32_t i = hc->heap_at;
    if (i == UINT32_MAX)
        return;
    hc->heap_at = UINT32_MAX;
    if (i != --hw->heap_n) {
        hw->heap[i] = hw->heap[hw->heap_n];
        hw->heap[i]->heap_at = i;
        heap_down(hw, i);
        heap_up(hw, i);
    }
}

void h3_heap_set(struct h3_worker *hw, struct h3_conn *hc, uint64_t at)
{
    if (at == UINT64_MAX) {
        h3_heap_del(hw, hc);
        return;
    }
    hc->expiry = at;
    if (hc->heap_at == UINT32_MAX) {
        hc->heap_at = hw->heap_n;
        hw->heap[hw->heap_n++] = hc;
    }
    heap_down(hw, hc->heap_at);
    heap_up(hw, hc->heap_at);
}

uint64_t h3_heap_first(const struct h3_worker *hw)
{
    return hw->heap_n ? hw->heap[0]->expiry : UINT64_MAX;
}

struct h3_conn *h3_heap_due(struct h3_worker *hw)
{
    if (hw->heap_n == 0 || hw->heap[0]->expiry > hw->now_ns)
        return NULL;
    struct h3_conn *hc = hw->heap[0];
    h3_heap_del(hw, hc);
    return hc;
}

/* ---- the connections to flush ------------------------------------------------------------ */

void h3_dirty(struct h3_conn *hc)
{
    struct h3_worker *hw = hc->hw;
    if (hc->dirty)
        return;
    hc->dirty = true;
    hw->dirty[hw->ndirty++] = hc;
}

/* In the order they were marked; one marked again while the list is being
 * taken (its flush freed chunks others waited for) comes later in the same
 * pass, as the list is read to its end before it empties. */
struct h3_conn *h3_dirty_next(struct h3_worker *hw)
{
    if (hw->dirty_taken == hw->ndirty) {
        hw->dirty_taken = hw->ndirty = 0;
        return NULL;
    }
    struct h3_conn *hc = hw->dirty[hw->dirty_taken++];
    hc->dirty = false;
    return hc;
}

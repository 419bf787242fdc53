/* SPDX-License-Identifier: MIT */
/*
 * timer.c - the wheel: slot = (deadline / tick) % slots. A timer further away
 * than one lap sits in its slot and is re-inserted when the sweep meets it
 * early. Deadlines are rounded up to the tick, so nothing fires early.
 */
#include "base/timer.h"

#include <stddef.h>

/* Times are the monotonic clock's milliseconds, never negative: divided
 * as unsigned, which on 32-bit ABIs needs no libgcc helper for signed
 * 64-bit division (pith-tiny links none). */
static int64_t ticks(int64_t ms)
{
    return (int64_t)((uint64_t)ms / TIMER_TICK_MS);
}

static int64_t tick_of(int64_t ms)
{
    return ticks(ms + TIMER_TICK_MS - 1);
}

void timer_wheel_init(struct timer_wheel *w, int64_t now)
{
    for (unsigned i = 0; i < TIMER_SLOTS; i++)
        w->slots[i].next = w->slots[i].prev = &w->slots[i];
    w->now_tick = ticks(now);
    w->armed = 0;
}

void timer_init(struct timer *t)
{
    t->next = t->prev = NULL;
    t->deadline = 0;
}

bool timer_armed(const struct timer *t)
{
    return t->next != NULL;
}

static void unlink_timer(struct timer *t)
{
    t->prev->next = t->next;
    t->next->prev = t->prev;
    t->next = t->prev = NULL;
}

static void link_timer(struct timer_wheel *w, struct timer *t)
{
    int64_t tick = tick_of(t->deadline);
    if (tick < w->now_tick)
        tick = w->now_tick;
    struct timer *head = &w->slots[tick % TIMER_SLOTS];
    t->next = head;
    t->prev = head->prev;
    head->prev->next = t;
    head->prev = t;
}

void timer_arm(struct timer_wheel *w, struct timer *t, int64_t deadline)
{
    if (timer_armed(t))
        unlink_timer(t);
    else
        w->armed++;
    t->deadline = deadline;
    link_timer(w, t);
}

void timer_cancel(struct timer_wheel *w, struct timer *t)
{
    if (!timer_armed(t))
        return;
    unlink_timer(t);
    w->armed--;
}

void timer_expire(struct timer_wheel *w, int64_t now, void (*fire)(struct timer *, void *),
                  void *ctx)
{
    int64_t last = ticks(now);
    /* After a long sleep there is no need to sweep the same slot twice. */
    if (last - w->now_tick >= TIMER_SLOTS)
        w->now_tick = last - TIMER_SLOTS + 1;
    for (; w->now_tick <= last; w->now_tick++) {
        struct timer *head = &w->slots[w->now_tick % TIMER_SLOTS];
        /* Detach the slot first: fire() may re-arm into this very slot. */
        struct timer pending;
        if (head->next == head)
            continue;
        pending.next = head->next;
        pending.prev = head->prev;
        pending.next->prev = &pending;
        pending.prev->next = &pending;
        head->next = head->prev = head;
        while (pending.next != &pending) {
            struct timer *t = pending.next;
            unlink_timer(t);
            if (t->deadline <= now) {
                w->armed--;
                fire(t, ctx);
            } else {
                link_timer(w, t); /* a later lap */
            }
        }
    }
}

int timer_next_timeout(const struct timer_wheel *w, int64_t now)
{
    if (w->armed == 0)
        return -1;
    /* Sweeping every tick while timers are armed keeps this O(1); an idle
     * worker with connections wakes 4 times a second. */
    int64_t next = w->now_tick * TIMER_TICK_MS;
    int64_t d = next - now;
    return d < 0 ? 0 : (int)d;
}

/* SPDX-License-Identifier: MIT */
/*
 * timer.h - a hashed timing wheel for connection deadlines. Arming, moving and
 * cancelling are O(1); an expiry sweep touches only the slots that came due.
 * Time is passed in (milliseconds, monotonic); the wheel never reads a clock.
 */
#ifndef PITH_TIMER_H
#define PITH_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#define TIMER_TICK_MS 250 /* resolution: deadlines fire at most this late */
#define TIMER_SLOTS   256 /* 64 s horizon; later deadlines wait a lap */

struct timer {
    struct timer *next, *prev; /* intrusive list; NULL when not armed */
    int64_t deadline;          /* ms */
};

struct timer_wheel {
    struct timer slots[TIMER_SLOTS]; /* list heads */
    int64_t now_tick;                /* the next tick to sweep */
    unsigned armed;
};

void timer_wheel_init(struct timer_wheel *w, int64_t now);
void timer_init(struct timer *t);
bool timer_armed(const struct timer *t);

/* (Re)arms t to fire at `deadline` (ms). */
void timer_arm(struct timer_wheel *w, struct timer *t, int64_t deadline);
void timer_cancel(struct timer_wheel *w, struct timer *t);

/* Calls fire(t, ctx) for each timer whose deadline is <= now, after removing
 * it from the wheel (fire may re-arm or free it). */
void timer_expire(struct timer_wheel *w, int64_t now, void (*fire)(struct timer *, void *),
                  void *ctx);

/* Milliseconds until the next tick that has work, for epoll_wait's timeout:
 * -1 when nothing is armed. */
int timer_next_timeout(const struct timer_wheel *w, int64_t now);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * respawn.h - when a master starts a worker again after it died (issue 8,
 * defect 5): at once after a stable run, so a crash costs no more than the
 * connections it held, and with a doubling delay after consecutive early
 * deaths, so a worker that cannot start does not spin. One rule for the full
 * build's master (master.c) and the router profile's (main_router.c).
 */
#ifndef PITH_RESPAWN_H
#define PITH_RESPAWN_H

#include "core.h"

#define RESPAWN_STABLE_MS 10000 /* a worker that ran this long resets the backoff */
#define RESPAWN_FIRST_MS  1000
#define RESPAWN_MAX_MS    30000

/* The delay in ms (0..RESPAWN_MAX_MS) before the worker of a slot starts
 * again, having died after lived_ms: none after a stable run or after a
 * first early death, then 1, 2, 4 ... 30 s for each early death in a row.
 * *backoff is the slot's state (0 at first; ms, at most RESPAWN_MAX_MS). */
int32_t respawn_delay(int32_t *backoff, int64_t lived_ms);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * respawn.c - a dead worker's restart delay (see respawn.h). 32-bit state:
 * no 64-bit arithmetic beyond one comparison, so 32-bit targets need no
 * libgcc helper for it.
 */
#include "respawn.h"

int32_t respawn_delay(int32_t *backoff, int64_t lived_ms)
{
    if (lived_ms >= RESPAWN_STABLE_MS)
        *backoff = 0;
    int32_t d = *backoff;
    *backoff = d == 0 ? RESPAWN_FIRST_MS : d * 2 > RESPAWN_MAX_MS ? RESPAWN_MAX_MS : d * 2;
    return d;
}

/* SPDX-License-Identifier: MIT */
/*
 * test_respawn.c - respawn_delay() against respawn.h: a stable run and a
 * first early death restart at once, early deaths in a row wait 1, 2, 4 ...
 * 30 s, a death after a stable run restarts at once and starts the count
 * again, and the edges of "stable" (RESPAWN_STABLE_MS - 1 and
 * RESPAWN_STABLE_MS).
 */
#include "core/respawn.h"
#include "unit.h"

static const struct row {
    int64_t lived[10]; /* the lives of one slot's workers, in order; -1 ends */
    int32_t want[10];  /* the delay after each death */
    const char *why;
} rows[] = {
    {{20000, -1}, {0}, "a stable run: at once"},
    {{5, -1}, {0}, "a first early death: at once"},
    {{5, 5, 5, 5, 5, 5, 5, 5, -1},
     {0, 1000, 2000, 4000, 8000, 16000, 30000, 30000},
     "early deaths in a row: 1, 2, 4 ... capped at 30 s"},
    {{5, 5, 5, RESPAWN_STABLE_MS, 5, 5, -1},
     {0, 1000, 2000, 0, 1000, 2000},
     "a stable run in between: at once, and the count starts again"},
    {{RESPAWN_STABLE_MS - 1, RESPAWN_STABLE_MS - 1, RESPAWN_STABLE_MS, -1},
     {0, 1000, 0},
     "RESPAWN_STABLE_MS is stable, one ms less is early"},
    {{0, 0, -1}, {0, 1000}, "died at once (lived 0 ms)"},
};

int main(void)
{
    for (size_t i = 0; i < ARRAY_LEN(rows); i++) {
        int32_t backoff = 0;
        for (int k = 0; rows[i].lived[k] >= 0; k++)
            CHECK_LONG(respawn_delay(&backoff, rows[i].lived[k]), rows[i].want[k], rows[i].why);
    }
    /* The state never leaves 0..RESPAWN_MAX_MS, whatever the lives. */
    int32_t backoff = 0;
    unit_gen_begin();
    for (int k = 0; k < 1000; k++) {
        int32_t d = respawn_delay(&backoff, (k * 7919) % 3 ? 1 : RESPAWN_STABLE_MS);
        CHECK(d >= 0 && d <= RESPAWN_MAX_MS, "delay within 0..30 s");
        CHECK(backoff >= RESPAWN_FIRST_MS && backoff <= RESPAWN_MAX_MS, "state within 1..30 s");
    }
    unit_gen_end();
    return unit_done();
}

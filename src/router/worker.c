/* SPDX-License-Identifier: MIT */
/*
 * worker.c - a router worker's state, which serve.c, answer.c and
 * access_log.c read (worker.h): its memory, its clock and Date, whether it
 * drains, the request being parsed, and where the scratch is free.
 */
#include "router/worker.h"

/* After the small state (a named section goes after the others), which
 * then fills as few pages as it can, instead of lying in the tails of big
 * arrays (issue 36: the idle worker's pages). */
struct wmem wm __attribute__((section(".bss.~wm")));
struct rbuf *bufs;
bool draining;
int64_t now_ms, now_sec;
char date[DATE_IMF_LEN];
struct http_request req;

char *scratch_after(const struct rconn *c)
{
    return c->inp == wm.scratch ? wm.scratch + c->have : wm.scratch;
}

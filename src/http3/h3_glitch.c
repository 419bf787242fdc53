/* SPDX-License-Identifier: MIT */
/*
 * h3_glitch.c - a close decided where it cannot be carried out, and the
 * budget of a hostile peer that decides one.
 *
 * Inside ngtcp2's and nghttp3's callbacks neither library may be asked to
 * write, so a close decided there is only marked (h3_doom), and h3_conn.c
 * carries it out once the library has returned (the end of its read, the
 * next flush). h3_http.c and h3_stream.c, below h3_conn.c, spend glitches
 * from nghttp3's callbacks: the mark lets them end the connection without
 * calling up into its lifecycle. This file calls nothing of src/http3.
 *
 * Glitches (hostile peers, issue 34): ngtcp2 1.11 and nghttp3 1.8 predate
 * their own limiters, so what did no work for the client (a packet of no
 * progress, a stream reset before its answer, a malformed request, a
 * field section too large, an ID retired, a path validated) spends a
 * bucket; emptied faster than it refills, the connection closes with
 * H3_EXCESSIVE_LOAD.
 */
#include "http3/h3_internal.h"

#include "base/worker.h"

/* A bucket of this many glitches, refilled by this many a second: a
 * client that misbehaves now and then never empties it. */
#define GLITCH_BUDGET 1000
#define GLITCH_REFILL 100

void h3_doom(struct h3_conn *hc, uint64_t code, enum h3_close why)
{
    if (hc->doomed)
        return;
    hc->doomed = true;
    hc->doom_code = code;
    hc->doom_why = why;
}

void h3_glitch(struct h3_conn *hc)
{
    H3_COUNT(hc->hw, glitches);
    int64_t now = hc->hw->w->now_ms;
    uint64_t refill = (uint64_t)(now - hc->glitch_at) * GLITCH_REFILL / 1000;
    if (refill) {
        hc->glitches = refill >= hc->glitches ? 0 : hc->glitches - (uint32_t)refill;
        hc->glitch_at = now;
    }
    if (++hc->glitches > GLITCH_BUDGET)
        h3_doom(hc, NGHTTP3_H3_EXCESSIVE_LOAD, H3_CLOSE_FLOOD);
}

/* SPDX-License-Identifier: MIT */
/*
 * h2_send.c - an HTTP/2 connection's output side: the one output buffer
 * every stream's frames are written into (H2_OUT_CAP bytes, the part of the
 * connection's pool slot after its input region), and the pump that hands
 * it to the transport in one send at a time and refills it each time all of
 * it went. One buffer, because frames are then batched across streams into
 * one send, a partial write only moves an offset (the bytes are pith's, so
 * no frame is ever cut on the wire), and a peer that stops reading costs
 * this buffer and no more of pith's (h2_conn.c says what nghttp2 queues).
 * While a send waits for the socket nothing more is produced.
 *
 * The cork: from the second buffer of a burst the socket is corked
 * (TCP_CORK), so the kernel sends full segments instead of one per write
 * (one per TLS record) and the client is woken once for them; it comes off
 * when the pump stops with no send in flight, and as soon as the socket is
 * full (pump and socket_full say why; docs/DESIGN.md §1, "HTTP/2").
 *
 * The session (h2_conn.c) drives this file and this file serves it: the
 * session pumps after each event (h2_pump), passes on the transport's
 * completions (h2_sent, h2_writable) and, with h2_stream.c, writes frames
 * at h2_out_tail() within h2_out_room(); this file calls back into the
 * session only through h2_produce, to fill the empty buffer. What follows
 * a pump (the deadlines, the close, reading on) is the session's (settle).
 */
#include "base/worker.h"
#include "core/bytes.h"
#include "event/conn.h"
#include "event/loop.h"
#include "event/transport.h"
#include "http2/h2_internal.h"
#include "sys/sys.h"

#include <errno.h>

static char *out_buf(struct h2_conn *hc)
{
    return hc->c->slot + POOL_IN_SIZE;
}

uint32_t h2_out_room(const struct h2_conn *hc)
{
    return H2_OUT_CAP - hc->out_len;
}

char *h2_out_tail(struct h2_conn *hc)
{
    return out_buf(hc) + hc->out_len;
}

static void uncork(struct h2_conn *hc)
{
    if (hc->corked) {
        hc->corked = false;
        sys_set_cork(hc->c->fd, false);
    }
}

/* The socket took less than it was given, or nothing: pith now waits for
 * room, which the kernel signals once fewer than H2_NOTSENT_LOWAT bytes
 * are unsent. A corked socket keeps back a tail shorter than a segment
 * (64 KiB on loopback, more than that mark) until the kernel's 200 ms
 * limit, so the room would never come: the cork comes off until the burst
 * ends. A socket the client's window fills gains nothing from it anyway. */
static void socket_full(struct h2_conn *hc)
{
    hc->full = true;
    uncork(hc);
}

/* Writes the buffer, refilling it whenever all of it went, until the
 * socket waits or nothing is left. From the second buffer of a burst (the
 * buffers written back to back, across the completions of io_uring's
 * asynchronous sends too) the socket is corked: the kernel then sends full
 * segments instead of one per write (one per TLS record), and the client
 * is woken once for them. A burst of one buffer, every small response,
 * pays no extra system call. The burst ends, and the cork comes off so
 * that what is queued goes now, when the pump stops with no send in
 * flight (nothing left to produce, or the client's window is spent: a
 * corked tail would wait up to 200 ms for a client that waits for it); a
 * send in flight comes back here through sent() or writable(). The cork
 * also comes off, for the rest of the burst, once the socket is full (see
 * socket_full). */
void h2_pump(struct worker *w, struct h2_conn *hc)
{
    struct conn *c = hc->c;
    while (!hc->sending && c->state != CONN_CLOSING) {
        if (hc->out_sent == hc->out_len) {
            hc->burst += hc->out_len > 0; /* a buffer went whole */
            hc->out_len = hc->out_sent = 0;
            h2_produce(w, hc);
            if (hc->out_len == 0)
                break;
        }
        if (hc->burst && !hc->corked && !hc->no_cork && !hc->full) {
            hc->corked = sys_set_cork(c->fd, true) == 0;
            hc->no_cork = !hc->corked; /* a Unix socket has none: tried once */
        }
        hc->iov = (struct iovec){out_buf(hc) + hc->out_sent, hc->out_len - hc->out_sent};
        hc->sending = true;
        ssize_t n = c->tp->send(w, c, &hc->iov, 1, false);
        if (n == -EAGAIN) {
            if (!w->loop->sending(w, c))
                socket_full(hc); /* writable() comes back */
            break;               /* or sent() */
        }
        hc->sending = false;
        if (n == -EINTR)
            continue;
        if (n < 0) {
            conn_close(w, c, CLOSE_ERROR);
            return;
        }
        hc->out_sent += (uint32_t)n;
        hc->timer_mode = H2_TIMER_WRITE;
        conn_arm(w, c, w->set->timeout_send); /* progress */
    }
    if (hc->sending || c->state == CONN_CLOSING || c->state == CONN_FREE)
        return;
    hc->burst = 0;
    hc->full = false;
    uncork(hc); /* what is queued goes now */
}

bool h2_sent(struct worker *w, struct h2_conn *hc, ssize_t n)
{
    struct conn *c = hc->c;
    if (n == -EAGAIN || n == -EINTR) {
        if (n == -EAGAIN)
            socket_full(hc);       /* io_uring's send met a full socket */
        w->loop->want_write(w, c); /* nothing went: the same bytes when there is room */
        return false;
    }
    hc->sending = false;
    if (n < 0) {
        conn_close(w, c, CLOSE_ERROR);
        return false;
    }
    if ((size_t)n < hc->iov.iov_len)
        socket_full(hc); /* the next send would wait for room */
    hc->out_sent += (uint32_t)n;
    conn_arm(w, c, w->set->timeout_send);
    h2_pump(w, hc);
    return true;
}

void h2_writable(struct worker *w, struct h2_conn *hc)
{
    hc->sending = false;
    h2_pump(w, hc);
}

/* ---- nghttp2's output other than DATA ---- */

/* pith's first SETTINGS frame, as nghttp2 wrote it into the output
 * buffer at p (whole: it is the first frame, in an empty buffer): its
 * SETTINGS_MAX_CONCURRENT_STREAMS entry, which nghttp2 was given as
 * "unlimited", says the limit pith keeps itself (h2_conn_start says why). */
static void tell_max_streams(struct h2_conn *hc, uint8_t *p, size_t n)
{
    uint32_t len = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    PITH_ASSERT(n >= H2_FRAME_HDLEN + len && p[3] == NGHTTP2_SETTINGS &&
                !(p[4] & NGHTTP2_FLAG_ACK));
    for (uint8_t *e = p + H2_FRAME_HDLEN; e + 6 <= p + H2_FRAME_HDLEN + len; e += 6) {
        if ((e[0] << 8 | e[1]) != NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)
            continue;
        uint32_t v = hc->w->set->h2_max_streams;
        e[2] = (uint8_t)(v >> 24), e[3] = (uint8_t)(v >> 16), e[4] = (uint8_t)(v >> 8);
        e[5] = (uint8_t)v;
    }
}

/* nghttp2's frames other than DATA: copied whole or in part (nghttp2 keeps
 * the rest and offers it again), never past the buffer's end. */
ssize_t h2_send_cb(nghttp2_session *s, const uint8_t *data, size_t length, int flags, void *ud)
{
    (void)s, (void)flags;
    struct h2_conn *hc = ud;
    uint32_t room = h2_out_room(hc);
    if (room == 0)
        return NGHTTP2_ERR_WOULDBLOCK;
    size_t n = length < room ? length : room;
    mem_copy(h2_out_tail(hc), data, n);
    if (!hc->settings_told) {
        hc->settings_told = true;
        tell_max_streams(hc, (uint8_t *)h2_out_tail(hc), n);
    }
    hc->out_len += (uint32_t)n;
    return (ssize_t)n;
}

/* SPDX-License-Identifier: MIT */
/*
 * loop_uring_recv.c - the io_uring backend's receiving (see loop_uring.c's
 * opening comment for the whole backend): one multishot recv per
 * connection from the provided-buffer ring, switched to single-shot
 * receives sized to the transport's room once the client pipelines; bytes
 * copied into the room the transport offers, or held in ring buffers
 * (oldest first, at most HELD_MAX, never from the last HELD_RESERVE) until
 * it has room; the end of the stream recorded after the held bytes. No room
 * is never a receive of 0 bytes nor an end of stream (docs/DESIGN.md §1,
 * "The seam").
 */
#include "event/loop_uring_internal.h"

#include "event/transport.h"

#include <errno.h>
#include <string.h>

/* The starved list holds each waiting connection once: added here, taken
 * off when fed or closed. */
static void starve(struct worker *w, struct conn *c)
{
    struct uring *u = state(w);
    struct uconn *uc = uconn(w, c);
    if (uc->starved)
        return;
    PITH_ASSERT(u->nstarved < w->nconns);
    u->starved[u->nstarved++] = (uint32_t)(c - w->conns);
    uc->starved = u->nstarved;
}

void uring_unstarve(struct worker *w, struct conn *c)
{
    struct uring *u = state(w);
    struct uconn *uc = uconn(w, c);
    if (!uc->starved)
        return;
    uint32_t last = u->starved[--u->nstarved];
    u->starved[uc->starved - 1] = last;
    u->uc[last].starved = uc->starved;
    uc->starved = 0;
}

static void arm_recv(struct worker *w, struct conn *c)
{
    size_t room = BUF_SIZE;
    if (uconn(w, c)->single && c->state == CONN_READ && c->slot) {
        /* A pipelining client: receive only what the transport has room
         * for, when it has room, so TCP flow control holds the rest back.
         * No room is no receive (a receive of 0 bytes would complete as
         * if the peer had ended its stream): the transport asks again
         * (want_read) once it has taken what it holds. */
        size_t in_room;
        c->tp->recv_room(w, c, &in_room);
        room = in_room < room ? in_room : room;
        if (room == 0)
            return;
    }
    struct io_uring_sqe *sqe = uring_sqe_get(state(w));
    if (uconn(w, c)->single) {
        io_uring_prep_recv(sqe, c->fd, NULL, room, 0);
    } else {
        /* len 0: each completion takes one whole ring buffer */
        io_uring_prep_recv_multishot(sqe, c->fd, NULL, 0, 0);
    }
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = BUF_GROUP;
    io_uring_sqe_set_data64(sqe, ud_conn(w, c, K_RECV));
    c->events |= IN_RECV;
}

void uring_want_read(struct worker *w, struct conn *c)
{
    struct uconn *uc = uconn(w, c);
    if (uc->nheld || uc->end) {
        /* Bytes (or the end) are waiting: hand them over after the
         * current completion, not from inside the caller. */
        if (!uc->ready) {
            uc->ready = true;
            state(w)->ready[state(w)->nready++] = (uint32_t)(c - w->conns);
        }
        return;
    }
    if (c->events & IN_RECV)
        return;
    if (state(w)->nfree == 0) {
        /* Every ring buffer is taken: arming now would only fail with
         * ENOBUFS; wait for one to come back. */
        starve(w, c);
        return;
    }
    arm_recv(w, c);
}

/* Takes the oldest held buffer off the list and gives it back to the ring. */
static void held_pop(struct uring *u, struct uconn *uc)
{
    uint16_t bid = uc->held_head;
    uc->held_head = u->held_next[bid];
    uc->nheld--;
    uc->held_off = 0;
    uring_buf_recycle(u, bid);
}

void uring_drop_held(struct uring *u, struct uconn *uc)
{
    while (uc->nheld)
        held_pop(u, uc);
}

/* Bytes arrived while a response is in flight: the client pipelines. From
 * now on it gets single-shot receives; the multishot goes at once (submitted
 * now: with DEFER_TASKRUN nothing more is received before the next wait). */
static void pipelining_seen(struct worker *w, struct conn *c)
{
    struct uconn *uc = uconn(w, c);
    if (uc->single)
        return;
    uc->single = true;
    if (c->events & IN_RECV) {
        uring_cancel(w, c, K_RECV);
        io_uring_submit(&state(w)->ring);
    }
}

/* Keeps ring buffer bid (n bytes) for later, after those c holds already. */
static void hold(struct worker *w, struct conn *c, unsigned bid, size_t n)
{
    struct uring *u = state(w);
    struct uconn *uc = uconn(w, c);
    u->held_len[bid] = (uint16_t)n;
    if (uc->nheld)
        u->held_next[uc->held_tail] = (uint16_t)bid;
    else
        uc->held_head = (uint16_t)bid;
    uc->held_tail = (uint16_t)bid;
    uc->nheld++;
}

/* Drops what c holds and ends its stream with -EOVERFLOW: it answers the
 * requests already in its input, then closes (the client retries the rest,
 * RFC 9112 §9.3.2). */
static void overflow(struct worker *w, struct conn *c)
{
    struct uconn *uc = uconn(w, c);
    uring_drop_held(state(w), uc);
    uc->end = true;
    uc->end_n = -EOVERFLOW;
    if (c->events & IN_RECV)
        uring_cancel(w, c, K_RECV);
}

/* The ring is down to its reserve: connections that hold buffers while
 * their client does not read (the response waits for socket room) give
 * them up, so clients that do read are served. */
static void relieve(struct worker *w)
{
    for (uint32_t i = 0; i < w->next_unused; i++) {
        struct conn *c = &w->conns[i];
        if (c->state == CONN_WRITE && (c->events & IN_POLL) && uconn(w, c)->nheld)
            overflow(w, c);
    }
}

/* Whether c may keep one more ring buffer: within its own bound, and never
 * into the reserve that keeps the others served. */
static bool may_hold(struct worker *w, const struct uconn *uc)
{
    if (uc->nheld >= HELD_MAX)
        return false;
    if (state(w)->nfree < HELD_RESERVE)
        relieve(w);
    return state(w)->nfree >= HELD_RESERVE;
}

/* Bytes that arrived: to the connection's input, held until it has room,
 * or, beyond what it may hold, dropped with the stream ended. */
static void take_bytes(struct worker *w, struct conn *c, const char *data, unsigned bid, size_t n)
{
    struct uring *u = state(w);
    struct uconn *uc = uconn(w, c);
    if (c->state == CONN_LINGER || (uc->end && uc->end_n == -EOVERFLOW)) {
        uring_buf_recycle(u, bid); /* dropped, as epoll drops them */
        return;
    }
    if (c->state != CONN_READ)
        pipelining_seen(w, c);
    size_t room = 0;
    char *dst = uc->nheld == 0 ? c->tp->recv_room(w, c, &room) : NULL;
    if (n <= room) {
        memcpy(dst, data, n);
        uring_buf_recycle(u, bid);         /* at once: idle connections pin no buffer */
        c->tp->received(w, c, (ssize_t)n); /* pipelined: waits until the response ends */
        return;
    }
    if (may_hold(w, uc)) {
        hold(w, c, bid, n);
        return;
    }
    uring_buf_recycle(u, bid);
    overflow(w, c);
}

void uring_on_recv(struct worker *w, struct conn *c, const struct completion *e)
{
    struct uring *u = state(w);
    if (!(e->flags & IORING_CQE_F_MORE))
        c->events &= ~IN_RECV; /* the multishot ended */
    ssize_t n = e->res;
    if (e->flags & IORING_CQE_F_BUFFER) {
        unsigned bid = e->flags >> IORING_CQE_BUFFER_SHIFT;
        u->nfree--;
        if (c->state == CONN_CLOSING || n <= 0)
            uring_buf_recycle(u, bid);
        else
            take_bytes(w, c, u->bufs + (size_t)bid * BUF_SIZE, bid, (size_t)n);
    }
    if (c->state == CONN_CLOSING)
        return;
    struct uconn *uc = uconn(w, c);
    if (!uc->end && (n == 0 || (n < 0 && n != -ENOBUFS && n != -ECANCELED))) {
        /* The end of the stream: now, or after the held bytes. */
        uc->end = true;
        uc->end_n = (int32_t)n;
    }
    /* Still waiting for bytes and nothing armed (ENOBUFS, or just ended):
     * carry on. */
    if (c->state == CONN_READ || c->state == CONN_LINGER)
        if (uc->end || !(c->events & IN_RECV))
            uring_want_read(w, c);
}

/* Hands held bytes (and then the end of the stream) to a connection that
 * waits for them. */
static void deliver(struct worker *w, struct conn *c)
{
    struct uring *u = state(w);
    struct uconn *uc = uconn(w, c);
    uc->ready = false;
    if (c->state == CONN_LINGER) {
        uring_drop_held(u, uc);
    } else if (c->state == CONN_READ && uc->nheld) {
        size_t room, total = 0;
        char *dst = c->tp->recv_room(w, c, &room);
        if (room == 0)
            return; /* no room: the transport asks again (want_read) once it has some */
        while (uc->nheld && total < room) {
            uint16_t bid = uc->held_head;
            size_t left = u->held_len[bid] - uc->held_off;
            size_t k = left < room - total ? left : room - total;
            memcpy(dst + total, u->bufs + (size_t)bid * BUF_SIZE + uc->held_off, k);
            total += k;
            uc->held_off = (uint16_t)(uc->held_off + k);
            if (uc->held_off < u->held_len[bid])
                break; /* the input is full */
            held_pop(u, uc);
        }
        c->tp->received(w, c, (ssize_t)total);
        return;
    } else if (c->state != CONN_READ) {
        return; /* asked again when it waits for bytes */
    }
    if (uc->nheld == 0 && uc->end) {
        uc->end = false;
        c->tp->received(w, c, uc->end_n);
        return;
    }
    if (!(c->events & IN_RECV) && uc->nheld == 0)
        arm_recv(w, c);
}

/* Connections that found the ring empty get a receive again once buffers
 * are back. */
void uring_feed_starved(struct worker *w)
{
    struct uring *u = state(w);
    while (u->nstarved && u->nfree) {
        struct conn *c = &w->conns[u->starved[u->nstarved - 1]];
        uring_unstarve(w, c);
        if ((c->state == CONN_READ || c->state == CONN_LINGER) && !(c->events & IN_RECV))
            uring_want_read(w, c);
    }
}

void uring_deliver_ready(struct worker *w)
{
    struct uring *u = state(w);
    while (u->nready) {
        struct conn *c = &w->conns[u->ready[--u->nready]];
        if (c->state != CONN_FREE && c->state != CONN_CLOSING)
            deliver(w, c);
        else
            uconn(w, c)->ready = false;
    }
}

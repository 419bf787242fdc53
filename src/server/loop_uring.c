/* SPDX-License-Identifier: MIT */
/*
 * loop_uring.c - the io_uring backend (liburing). One ring per worker, set up
 * with SINGLE_ISSUER|DEFER_TASKRUN where the kernel has them (6.1), so
 * completions run only when the worker waits: one io_uring_enter per loop
 * iteration submits everything queued and reaps what completed.
 *
 * - Accept: one multishot accept on the worker's listener (5.19), cancelled
 *   at --max-conns or on drain, armed again when a slot frees.
 * - Receive: one multishot recv per connection (6.0), armed once and kept,
 *   so the socket's poll is not armed again for every request; the kernel
 *   takes a buffer from a provided-buffer ring (5.19) only when bytes
 *   arrive, so an idle keep-alive connection pins no buffer. The bytes are
 *   copied into the connection's slot and the buffer goes straight back.
 *   Bytes that arrive while a response is in flight (pipelining) are added
 *   to the slot; when it is full they are held (ring buffers, in order) and the
 *   multishot is cancelled until the connection catches up: the same
 *   backpressure as epoll's, which stops reading. A connection holds at most
 *   HELD_MAX buffers, and none once the ring is down to HELD_RESERVE free
 *   ones; at that point connections whose client does not read give theirs
 *   up. So stalled clients cannot starve the others of receive buffers.
 *   Bytes dropped this way end the connection once its complete requests
 *   are answered (RFC 9112 §9.3.2: a client retries pipelined requests left
 *   unanswered by a close).
 * - Send: IORING_OP_SENDMSG of the connection's iovecs (MSG_MORE before a
 *   file body). Files go by sendfile(2) itself, zero-copy like splice; when
 *   the socket is full a POLL_ADD waits for room.
 * - Room after the peer's FIN: io_uring reports RDHUP to every poll of a
 *   socket whatever it asked for (the kernel's IO_POLL_UNMASK), its own
 *   internal polls included, so once the peer has ended its stream a
 *   POLL_ADD(POLLOUT) completes at once without room, and a SENDMSG that
 *   meets a full socket comes back -EAGAIN. Such a connection waits for
 *   room in an epoll set of the worker's instead (EPOLLOUT only, one-shot),
 *   which the ring polls; the SENDMSG is submitted again once there is
 *   room. Waiting costs nothing, as on the epoll loop.
 * - Close: a connection with an operation in flight is cancelled and freed
 *   only when its last completion arrives: a send still reads its memory.
 * - Signals: a read of the signalfd, re-armed after each.
 */
#include "server/conn.h"
#include "server/loop.h"
#include "server/transport.h"
#include "server/worker.h"
#include "sys/sys.h"

#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RING_ENTRIES 1024
#define BUF_COUNT    512  /* provided buffers: a batch of completions' worth */
#define BUF_SIZE     4096 /* a typical request head fits one */
#define BUF_GROUP    1
#define BATCH        256
/* A burst pulled in by a multishot before it is cancelled can be large
 * (the kernel keeps receiving within one io_uring_enter: 70+ buffers seen
 * from one pipelining client), so a connection may hold up to half the
 * ring, but never the last quarter: that stays for everyone else. */
#define HELD_MAX     (BUF_COUNT / 2)
#define HELD_RESERVE (BUF_COUNT / 4)

/* user_data: connection index << 8 | kind */
enum kind {
    K_ACCEPT = 1,
    K_ACCEPT_TLS, /* HTTPS (issue 10): the TLS listener's */
    K_SIGNAL,
    K_IGNORE, /* cancellations: their own completion says nothing */
    K_RECV,
    K_SEND,
    K_POLL,
    K_ROOMSET, /* the epoll set of connections waiting for room after the peer's FIN */
};

/* In-flight operations of a connection, kept in c->events. */
#define IN_RECV 1u
#define IN_SEND 2u
#define IN_POLL 4u
#define IN_ROOM 8u /* waiting in the room set (its memory: a SENDMSG to submit again) */

/* Per connection: a sendmsg's header (it must live until the completion)
 * and received bytes not yet taken by the connection. */
struct uconn {
    struct msghdr msg;
    int msg_flags;    /* the SENDMSG's flags, for a submission again */
    bool resend;      /* the SENDMSG came back -EAGAIN: submitted again when there is room */
    bool peer_ended;  /* the peer's FIN was seen: room is waited for in the room set */
    bool in_room_set; /* the socket is in the room set (added once, re-armed one-shot) */
    /* Held ring buffers, oldest first, linked through uring.held_next. A
     * burst pulled in before the switch to single-shot receives can be
     * large (the multishot keeps reading within one io_uring_enter); at
     * most HELD_MAX are kept, and the connection ends after them. */
    uint16_t held_head, held_tail;
    uint16_t held_off; /* bytes of the head buffer already taken */
    uint16_t nheld;
    bool end;         /* the stream ended (EOF, error, overflow) after the held bytes */
    int32_t end_n;    /* 0: EOF, < 0: -errno (-EOVERFLOW: bytes were dropped) */
    bool ready;       /* on the ready list */
    bool single;      /* pipelining seen: single-shot receives, sized to the room */
    uint32_t starved; /* 1 + its index in the starved list, or 0 (zeroed memory: none) */
};

struct uring {
    struct io_uring ring;
    struct io_uring_buf_ring *br;
    char *bufs;
    struct uconn *uc; /* one per connection */
    uint32_t *ready;  /* connections with held bytes to hand over */
    uint32_t nready;
    uint32_t *starved; /* connections waiting for a free ring buffer */
    uint32_t nstarved;
    uint32_t nfree;                /* ring buffers the kernel can use now */
    uint16_t held_next[BUF_COUNT]; /* the next held buffer after each buffer id */
    uint16_t held_len[BUF_COUNT];  /* bytes in each held buffer */
    struct signalfd_siginfo sig;
    int room_fd;           /* the room set: an epoll instance (see the top of this file) */
    uint32_t room_wait;    /* connections waiting in it */
    bool room_armed;       /* a POLL_ADD on room_fd is in flight */
    bool accepting[2];     /* a multishot accept is armed: [0] plain, [1] TLS listener */
    uint32_t accept_gen;   /* tells the armed accept's completions from older ones */
    uint32_t accepts_live; /* accepts armed whose final completion has not come */
};

static struct uring *state(struct worker *w)
{
    return w->loop_state;
}

static uint64_t ud_conn(const struct worker *w, const struct conn *c, enum kind k)
{
    return ((uint64_t)(c - w->conns) << 8) | k;
}

/* An SQE; when the queue is full, what is queued goes in first. */
static struct io_uring_sqe *sqe_get(struct uring *u)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    if (!sqe) {
        io_uring_submit(&u->ring);
        sqe = io_uring_get_sqe(&u->ring);
    }
    PITH_ASSERT(sqe != NULL);
    return sqe;
}

static void buf_recycle(struct uring *u, unsigned bid)
{
    u->nfree++;
    io_uring_buf_ring_add(u->br, u->bufs + (size_t)bid * BUF_SIZE, BUF_SIZE, (unsigned short)bid,
                          io_uring_buf_ring_mask(BUF_COUNT), 0);
    io_uring_buf_ring_advance(u->br, 1);
}

static void arm_signal(struct worker *w)
{
    struct uring *u = state(w);
    struct io_uring_sqe *sqe = sqe_get(u);
    io_uring_prep_read(sqe, w->sigfd, &u->sig, sizeof u->sig, 0);
    io_uring_sqe_set_data64(sqe, K_SIGNAL);
}

/* disabled: the ring starts with IORING_SETUP_R_DISABLED (5.10), so it
 * can be restricted before any operation runs (restrict_ring). */
static int setup_ring(struct io_uring *ring, bool disabled)
{
    struct io_uring_params p;
    unsigned extra = disabled ? IORING_SETUP_R_DISABLED : 0;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | extra;
    int r = io_uring_queue_init_params(RING_ENTRIES, ring, &p);
    if (r == -EINVAL) { /* before 6.1: no DEFER_TASKRUN */
        memset(&p, 0, sizeof p);
        p.flags = extra;
        r = io_uring_queue_init_params(RING_ENTRIES, ring, &p);
    }
    return r;
}

/* The operations pith submits, and the one SQE flag it sets. */
static const int ring_ops[] = {IORING_OP_ACCEPT,   IORING_OP_RECV, IORING_OP_SENDMSG,
                               IORING_OP_POLL_ADD, IORING_OP_READ, IORING_OP_ASYNC_CANCEL};

/* seccomp sees io_uring_enter, never the operations it carries, so the
 * ring itself is limited (IORING_REGISTER_RESTRICTIONS, 5.10) to the
 * opcodes above and IOSQE_BUFFER_SELECT; no io_uring_register operation
 * is allowed once it is enabled (pith registers its buffer ring before).
 * Landlock still applies to what the ring does: its file operations run
 * with the worker's credentials, and so its Landlock domain (pith submits
 * no open through the ring anyway). */
static int restrict_ring(struct io_uring *ring)
{
    struct io_uring_restriction res[ARRAY_LEN(ring_ops) + 1];
    memset(res, 0, sizeof res);
    for (size_t i = 0; i < ARRAY_LEN(ring_ops); i++) {
        res[i].opcode = IORING_RESTRICTION_SQE_OP;
        res[i].sqe_op = (uint8_t)ring_ops[i];
    }
    res[ARRAY_LEN(ring_ops)].opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED;
    res[ARRAY_LEN(ring_ops)].sqe_flags = IOSQE_BUFFER_SELECT;
    /* Debian 12's liburing 2.3 declares io_uring_register_restrictions()
     * and io_uring_enable_rings() but does not export them: the system
     * call itself. */
    if (syscall(__NR_io_uring_register, ring->ring_fd, IORING_REGISTER_RESTRICTIONS, res,
                (unsigned)ARRAY_LEN(res)) < 0 ||
        syscall(__NR_io_uring_register, ring->ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0) < 0)
        return -errno;
    return 0;
}

static int setup_buffers(struct uring *u)
{
    size_t ring_bytes = BUF_COUNT * sizeof(struct io_uring_buf);
    u->br = sys_map(ring_bytes);
    u->bufs = sys_map((size_t)BUF_COUNT * BUF_SIZE);
    if (!u->br || !u->bufs)
        return -ENOMEM;
    struct io_uring_buf_reg reg = {
        .ring_addr = (unsigned long)u->br, .ring_entries = BUF_COUNT, .bgid = BUF_GROUP};
    int r = io_uring_register_buf_ring(&u->ring, &reg, 0);
    if (r < 0)
        return r;
    io_uring_buf_ring_init(u->br);
    for (unsigned i = 0; i < BUF_COUNT; i++)
        io_uring_buf_ring_add(u->br, u->bufs + (size_t)i * BUF_SIZE, BUF_SIZE, (unsigned short)i,
                              io_uring_buf_ring_mask(BUF_COUNT), (int)i);
    io_uring_buf_ring_advance(u->br, BUF_COUNT);
    u->nfree = BUF_COUNT;
    return 0;
}

static int ur_init(struct worker *w)
{
    struct uring *u = sys_map(sizeof *u);
    if (!u)
        return -ENOMEM;
    w->loop_state = u;
    u->uc = sys_map((size_t)w->nconns * sizeof *u->uc);
    u->ready = sys_map((size_t)w->nconns * sizeof *u->ready);
    u->starved = sys_map((size_t)w->nconns * sizeof *u->starved);
    if (!u->uc || !u->ready || !u->starved)
        return -ENOMEM;
    u->room_fd = sys_epoll_create();
    if (u->room_fd < 0)
        return u->room_fd;
    bool restricted = w->set->sandbox;
    int r = setup_ring(&u->ring, restricted);
    if (r < 0)
        return r;
    r = setup_buffers(u);
    if (r < 0)
        return r;
    if (restricted && (r = restrict_ring(&u->ring)) < 0)
        return r;
    arm_signal(w);
    return 0;
}

static uint64_t ud_accept(const struct uring *u, bool tls)
{
    return ((uint64_t)u->accept_gen << 8) | (tls ? K_ACCEPT_TLS : K_ACCEPT);
}

/* The multishot accept of one listener (tls: the TLS one). */
static void listen_one(struct worker *w, bool tls, bool on)
{
    struct uring *u = state(w);
    int fd = tls ? w->tls_listen_fd : w->listen_fd;
    if (on == u->accepting[tls] || (on && fd < 0))
        return;
    struct io_uring_sqe *sqe = sqe_get(u);
    if (on) {
        io_uring_prep_multishot_accept(sqe, fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        io_uring_sqe_set_data64(sqe, ud_accept(u, tls));
        u->accepts_live++;
    } else {
        io_uring_prep_cancel64(sqe, ud_accept(u, tls), IORING_ASYNC_CANCEL_ALL);
        io_uring_sqe_set_data64(sqe, K_IGNORE);
    }
    u->accepting[tls] = on;
}

static void ur_listen(struct worker *w, bool on)
{
    struct uring *u = state(w);
    if (on && !u->accepting[0] && !u->accepting[1])
        u->accept_gen++;
    listen_one(w, false, on);
    listen_one(w, true, on);
}

/* A cancelled multishot accept may still complete with a connection
 * before its final -ECANCELED: see loop.h. */
static bool ur_accept_busy(struct worker *w)
{
    return state(w)->accepts_live != 0;
}

static struct uconn *uconn(struct worker *w, const struct conn *c)
{
    return &state(w)->uc[c - w->conns];
}

static int ur_conn_start(struct worker *w, struct conn *c)
{
    c->events = 0;
    struct uconn *uc = uconn(w, c);
    PITH_ASSERT(uc->nheld == 0 && uc->starved == 0 && !uc->ready);
    uc->held_off = 0;
    uc->end = false;
    uc->single = false;
    uc->resend = uc->peer_ended = uc->in_room_set = false;
    return 0;
}

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

static void unstarve(struct worker *w, struct conn *c)
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
    struct io_uring_sqe *sqe = sqe_get(state(w));
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

static void ur_want_read(struct worker *w, struct conn *c)
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

/* The room set's own poll, armed while a connection waits in it. */
static void arm_room_set(struct uring *u)
{
    if (u->room_armed || u->room_wait == 0)
        return;
    struct io_uring_sqe *sqe = sqe_get(u);
    io_uring_prep_poll_add(sqe, u->room_fd, POLLIN);
    io_uring_sqe_set_data64(sqe, K_ROOMSET);
    u->room_armed = true;
}

/* After the peer's FIN: room through the room set (see the top). */
static void wait_in_room_set(struct worker *w, struct conn *c)
{
    struct uring *u = state(w);
    struct uconn *uc = uconn(w, c);
    if (c->events & IN_ROOM)
        return;
    int op = uc->in_room_set ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    int r = sys_epoll_ctl(u->room_fd, op, c->fd, EPOLLOUT | EPOLLONESHOT, (uint64_t)(c - w->conns));
    if (r < 0) {
        conn_close(w, c, CLOSE_ERROR);
        return;
    }
    uc->in_room_set = true;
    c->events |= IN_ROOM;
    u->room_wait++;
    arm_room_set(u);
}

/* Waits until the socket can take bytes: writable() then (or, after a
 * SENDMSG that came back -EAGAIN, that SENDMSG again). */
static void wait_room(struct worker *w, struct conn *c)
{
    if (c->events & (IN_POLL | IN_ROOM))
        return;
    if (uconn(w, c)->peer_ended) {
        wait_in_room_set(w, c);
        return;
    }
    struct io_uring_sqe *sqe = sqe_get(state(w));
    io_uring_prep_poll_add(sqe, c->fd, POLLOUT);
    io_uring_sqe_set_data64(sqe, ud_conn(w, c, K_POLL));
    c->events |= IN_POLL;
}

static void ur_want_write(struct worker *w, struct conn *c)
{
    wait_room(w, c);
}

static void submit_send(struct worker *w, struct conn *c)
{
    struct uconn *uc = uconn(w, c);
    struct io_uring_sqe *sqe = sqe_get(state(w));
    io_uring_prep_sendmsg(sqe, c->fd, &uc->msg, (unsigned)uc->msg_flags);
    io_uring_sqe_set_data64(sqe, ud_conn(w, c, K_SEND));
    c->events |= IN_SEND;
    uc->resend = false;
}

static ssize_t ur_send(struct worker *w, struct conn *c, const struct iovec *iov, unsigned n,
                       bool more)
{
    struct uring *u = state(w);
    PITH_ASSERT(!(c->events & IN_SEND));
    struct uconn *uc = &u->uc[c - w->conns];
    memset(&uc->msg, 0, sizeof uc->msg);
    uc->msg.msg_iov = (struct iovec *)iov; /* the connection keeps it until sent() */
    uc->msg.msg_iovlen = n;
    uc->msg_flags = MSG_NOSIGNAL | (more ? MSG_MORE : 0);
    submit_send(w, c);
    return -EAGAIN; /* sent() with the result */
}

/* sendfile(2) itself: zero-copy like splice, without a pipe per
 * connection; a full socket waits for room with a POLL_ADD. */
static ssize_t ur_sendfile(struct worker *w, struct conn *c, int fd, uint64_t *off, size_t n)
{
    ssize_t r = sys_sendfile(c->fd, fd, off, n);
    if (r == -EAGAIN)
        wait_room(w, c);
    return r;
}

static void cancel(struct worker *w, struct conn *c, enum kind k)
{
    struct io_uring_sqe *sqe = sqe_get(state(w));
    io_uring_prep_cancel64(sqe, ud_conn(w, c, k), 0);
    io_uring_sqe_set_data64(sqe, K_IGNORE);
}

/* Takes the oldest held buffer off the list and gives it back to the ring. */
static void held_pop(struct uring *u, struct uconn *uc)
{
    uint16_t bid = uc->held_head;
    uc->held_head = u->held_next[bid];
    uc->nheld--;
    uc->held_off = 0;
    buf_recycle(u, bid);
}

static void drop_held(struct uring *u, struct uconn *uc)
{
    while (uc->nheld)
        held_pop(u, uc);
}

static void ur_close(struct worker *w, struct conn *c)
{
    struct uring *u = state(w);
    struct uconn *uc = uconn(w, c);
    /* Out of the room set before the close: the ring may keep the socket
     * open past it, and the set must never report a reused slot. */
    if (uc->in_room_set)
        sys_epoll_ctl(u->room_fd, EPOLL_CTL_DEL, c->fd, 0, 0);
    if (c->events & IN_ROOM) {
        c->events &= ~IN_ROOM;
        u->room_wait--;
    }
    uc->in_room_set = uc->resend = false;
    sys_close(c->fd);
    drop_held(state(w), uconn(w, c));
    unstarve(w, c);
    if (c->events & IN_RECV)
        cancel(w, c, K_RECV);
    if (c->events & IN_SEND)
        cancel(w, c, K_SEND);
    if (c->events & IN_POLL)
        cancel(w, c, K_POLL);
}

static bool ur_busy(struct worker *w, const struct conn *c)
{
    (void)w;
    return c->events != 0 || state(w)->uc[c - w->conns].ready;
}

/* ---- completions ------------------------------------------------------------------------ */

struct completion {
    uint64_t ud;
    int32_t res;
    uint32_t flags;
};

static void on_accept(struct worker *w, const struct completion *e)
{
    struct uring *u = state(w);
    bool tls = (e->ud & 0xff) == K_ACCEPT_TLS;
    bool current = e->ud == ud_accept(u, tls);
    if (!(e->flags & IORING_CQE_F_MORE) && u->accepts_live)
        u->accepts_live--; /* this accept's last completion */
    if (current && !(e->flags & IORING_CQE_F_MORE))
        u->accepting[tls] = false; /* the multishot ended (an error, or cancelled) */
    if (e->res >= 0) {
        worker_accepted(w, e->res, NULL, tls);
    } else if (e->res != -ECANCELED) {
        worker_accept_failed(w, e->res);
        return;
    }
    if (current && !u->accepting[tls] && w->listening)
        listen_one(w, tls, true); /* ended on its own while we still listen */
}

/* Keeps a ring buffer for later; the first one also stops the multishot,
 * so the client waits for us (backpressure) instead of filling the ring. */
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
        cancel(w, c, K_RECV);
        io_uring_submit(&state(w)->ring);
    }
}

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

/* Bytes that arrived: to the slot, or held until it has room. */
/* Drops what c holds and ends its stream with -EOVERFLOW: it answers the
 * requests already in its input, then closes (the client retries the rest,
 * RFC 9112 §9.3.2). */
static void overflow(struct worker *w, struct conn *c)
{
    struct uconn *uc = uconn(w, c);
    drop_held(state(w), uc);
    uc->end = true;
    uc->end_n = -EOVERFLOW;
    if (c->events & IN_RECV)
        cancel(w, c, K_RECV);
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
        buf_recycle(u, bid); /* dropped, as epoll drops them */
        return;
    }
    if (c->state != CONN_READ)
        pipelining_seen(w, c);
    size_t room = 0;
    char *dst = uc->nheld == 0 ? c->tp->recv_room(w, c, &room) : NULL;
    if (n <= room) {
        memcpy(dst, data, n);
        buf_recycle(u, bid);               /* at once: idle connections pin no buffer */
        c->tp->received(w, c, (ssize_t)n); /* pipelined: waits until the response ends */
        return;
    }
    if (may_hold(w, uc)) {
        hold(w, c, bid, n);
        return;
    }
    buf_recycle(u, bid);
    overflow(w, c);
}

static void on_recv(struct worker *w, struct conn *c, const struct completion *e)
{
    struct uring *u = state(w);
    if (!(e->flags & IORING_CQE_F_MORE))
        c->events &= ~IN_RECV; /* the multishot ended */
    ssize_t n = e->res;
    if (e->flags & IORING_CQE_F_BUFFER) {
        unsigned bid = e->flags >> IORING_CQE_BUFFER_SHIFT;
        u->nfree--;
        if (c->state == CONN_CLOSING || n <= 0)
            buf_recycle(u, bid);
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
            ur_want_read(w, c);
}

/* Hands held bytes (and then the end of the stream) to a connection that
 * waits for them. */
static void deliver(struct worker *w, struct conn *c)
{
    struct uring *u = state(w);
    struct uconn *uc = uconn(w, c);
    uc->ready = false;
    if (c->state == CONN_LINGER) {
        drop_held(u, uc);
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
static void feed_starved(struct worker *w)
{
    struct uring *u = state(w);
    while (u->nstarved && u->nfree) {
        struct conn *c = &w->conns[u->starved[u->nstarved - 1]];
        unstarve(w, c);
        if ((c->state == CONN_READ || c->state == CONN_LINGER) && !(c->events & IN_RECV))
            ur_want_read(w, c);
    }
}

static void deliver_ready(struct worker *w)
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

/* The socket can take bytes: the SENDMSG that met a full socket goes
 * again, or the transport is told. */
static void room(struct worker *w, struct conn *c)
{
    if (uconn(w, c)->resend)
        submit_send(w, c);
    else
        c->tp->writable(w, c);
}

static void on_send(struct worker *w, struct conn *c, const struct completion *e)
{
    c->events &= ~IN_SEND;
    if (c->state == CONN_CLOSING)
        return;
    if (e->res == -EAGAIN) {
        /* Try again, never an error: the ring's own poll woke for the
         * peer's FIN, not for room (see the top). The same SENDMSG goes
         * once there is room; its iovecs stay valid until sent(). */
        struct uconn *uc = uconn(w, c);
        uc->peer_ended = true;
        uc->resend = true;
        wait_room(w, c);
        return;
    }
    c->tp->sent(w, c, e->res);
}

/* The room set has a socket with room: each one waiting there goes on. */
static void on_room_set(struct worker *w)
{
    struct uring *u = state(w);
    u->room_armed = false;
    struct epoll_event ev[64];
    int n = sys_epoll_wait(u->room_fd, ev, (int)ARRAY_LEN(ev), 0, NULL);
    for (int i = 0; i < n; i++) {
        struct conn *c = &w->conns[ev[i].data.u64];
        if (!(c->events & IN_ROOM))
            continue;
        c->events &= ~IN_ROOM;
        u->room_wait--;
        if (c->state != CONN_CLOSING && c->state != CONN_FREE)
            room(w, c);
    }
    arm_room_set(u);
}

static void on_conn(struct worker *w, const struct completion *e)
{
    struct conn *c = &w->conns[e->ud >> 8];
    switch ((enum kind)(e->ud & 0xff)) {
    case K_RECV: on_recv(w, c, e); break;
    case K_SEND: on_send(w, c, e); break;
    case K_POLL:
        c->events &= ~IN_POLL;
        if (c->state == CONN_CLOSING)
            break;
        if (e->res < 0) {
            conn_close(w, c, CLOSE_ERROR);
        } else if (e->res & (POLLOUT | POLLERR | POLLHUP)) {
            room(w, c); /* room, or an error the next send reports */
        } else {
            /* RDHUP alone: the peer ended its stream, and this poll (and
             * every later one) wakes for that, not for room. */
            uconn(w, c)->peer_ended = true;
            wait_room(w, c);
        }
        break;
    default: break;
    }
}

static void dispatch(struct worker *w, const struct completion *e)
{
    switch ((enum kind)(e->ud & 0xff)) {
    case K_ACCEPT:
    case K_ACCEPT_TLS: on_accept(w, e); break;
    case K_SIGNAL:
        if (e->res == (int32_t)sizeof(struct signalfd_siginfo))
            worker_signal(w, (int)state(w)->sig.ssi_signo);
        arm_signal(w);
        break;
    case K_IGNORE: break;
    case K_ROOMSET: on_room_set(w); break;
    default: on_conn(w, e); break;
    }
}

static void ur_wait(struct worker *w, int timeout_ms)
{
    struct uring *u = state(w);
    struct io_uring_cqe *cqe;
    /* A connection that asked for bytes outside a completion (the TLS
     * transport's ready list, after the last wait) and has some held gets
     * them now; then, with more waiting already, the ring is only peeked. */
    deliver_ready(w);
    if (u->nready)
        timeout_ms = 0;
    struct __kernel_timespec ts = {timeout_ms / 1000, (long long)(timeout_ms % 1000) * 1000000};
    io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, timeout_ms >= 0 ? &ts : NULL, NULL);
    worker_update_clock(w);
    for (;;) {
        /* Copy a batch out and hand the CQ slots back before dispatching:
         * handlers queue new work, which may complete into them. */
        struct io_uring_cqe *got[BATCH];
        struct completion batch[BATCH];
        unsigned n = io_uring_peek_batch_cqe(&u->ring, got, BATCH);
        if (n == 0)
            break;
        for (unsigned i = 0; i < n; i++)
            batch[i] = (struct completion){got[i]->user_data, got[i]->res, got[i]->flags};
        io_uring_cq_advance(&u->ring, n);
        for (unsigned i = 0; i < n && !w->exit_now; i++) {
            dispatch(w, &batch[i]);
            deliver_ready(w);
        }
        feed_starved(w);
        if (n < BATCH)
            break;
    }
}

bool loop_uring_available(char *why, unsigned long cap)
{
    struct io_uring ring;
    int r = setup_ring(&ring, false);
    if (r < 0) {
        snprintf(why, cap, "io_uring_setup: %s", strerrordesc_np(-r));
        return false;
    }
    struct io_uring_probe *probe = io_uring_get_probe_ring(&ring);
    bool ok = probe != NULL;
    for (size_t i = 0; ok && i < ARRAY_LEN(ring_ops); i++)
        ok = io_uring_opcode_supported(probe, ring_ops[i]);
    if (probe)
        io_uring_free_probe(probe);
    if (!ok) {
        snprintf(why, cap, "the kernel lacks an io_uring operation pith needs");
        io_uring_queue_exit(&ring);
        return false;
    }
    /* Provided-buffer rings and multishot accept came together in 5.19. */
    struct uring probe_state = {.ring = ring};
    r = setup_buffers(&probe_state);
    sys_unmap(probe_state.br, BUF_COUNT * sizeof(struct io_uring_buf));
    sys_unmap(probe_state.bufs, (size_t)BUF_COUNT * BUF_SIZE);
    io_uring_queue_exit(&ring);
    if (r < 0) {
        snprintf(why, cap, "no provided-buffer rings (Linux 5.19+): %s", strerrordesc_np(-r));
        return false;
    }
    return true;
}

const struct loop_ops loop_uring = {
    .name = "io_uring",
    .init = ur_init,
    .wait = ur_wait,
    .listen = ur_listen,
    .conn_start = ur_conn_start,
    .want_read = ur_want_read,
    .want_write = ur_want_write,
    .send = ur_send,
    .sendfile = ur_sendfile,
    .close = ur_close,
    .busy = ur_busy,
    .accept_busy = ur_accept_busy,
};

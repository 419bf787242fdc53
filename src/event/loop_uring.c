/* SPDX-License-Identifier: MIT */
/*
 * loop_uring.c - the io_uring backend (liburing). One ring per worker, set up
 * with SINGLE_ISSUER|DEFER_TASKRUN where the kernel has them (6.1), so
 * completions run only when the worker waits: one io_uring_enter per loop
 * iteration submits everything queued and reaps what completed.
 *
 * - Accept: one multishot accept on the worker's listener (5.19), cancelled
 *   at --max-conns or on drain, armed again when a slot frees.
 * - Receive (loop_uring_recv.c): one multishot recv per connection (6.0), armed once and kept,
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
 *   file body), with MSG_DONTWAIT: a send that meets a full socket comes
 *   back -EAGAIN at once, as on the epoll loop, rather than wait inside the
 *   ring where the connection cannot see it (HTTP/2 takes its cork off when
 *   the socket is full: a corked tail would hold back the room it waits
 *   for). The connection then waits for room (want_write) and sends again.
 *   Files go by sendfile(2) itself, zero-copy like splice; when the socket
 *   is full a POLL_ADD waits for room.
 * - Room after the peer's FIN: io_uring reports RDHUP to every poll of a
 *   socket whatever it asked for (the kernel's IO_POLL_UNMASK), so once the
 *   peer has ended its stream a POLL_ADD(POLLOUT) completes at once without
 *   room. Such a connection waits for room in an epoll set of the worker's
 *   instead (EPOLLOUT only, one-shot), which the ring polls. Waiting costs
 *   nothing, as on the epoll loop.
 * - Close: a connection with an operation in flight is cancelled and freed
 *   only when its last completion arrives: a send still reads its memory.
 * - Signals: a read of the signalfd, re-armed after each.
 */
#include "event/loop_uring_internal.h"

#include "event/loop.h"
#include "event/transport.h"
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

/* An SQE; when the queue is full, what is queued goes in first. */
struct io_uring_sqe *uring_sqe_get(struct uring *u)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    if (!sqe) {
        io_uring_submit(&u->ring);
        sqe = io_uring_get_sqe(&u->ring);
    }
    PITH_ASSERT(sqe != NULL);
    return sqe;
}

void uring_buf_recycle(struct uring *u, unsigned bid)
{
    u->nfree++;
    io_uring_buf_ring_add(u->br, u->bufs + (size_t)bid * BUF_SIZE, BUF_SIZE, (unsigned short)bid,
                          io_uring_buf_ring_mask(BUF_COUNT), 0);
    io_uring_buf_ring_advance(u->br, 1);
}

static void arm_signal(struct worker *w)
{
    struct uring *u = state(w);
    struct io_uring_sqe *sqe = uring_sqe_get(u);
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
                               IORING_OP_POLL_ADD, IORING_OP_READ, IORING_OP_ASYNC_CANCEL,
                               IORING_OP_RECVMSG};

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
    r = uring_udp_init(w);
    if (r < 0)
        return r;
    if (restricted && (r = restrict_ring(&u->ring)) < 0)
        return r;
    arm_signal(w);
    uring_udp_arm(w);
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
    struct io_uring_sqe *sqe = uring_sqe_get(u);
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

static int ur_conn_start(struct worker *w, struct conn *c)
{
    c->events = 0;
    struct uconn *uc = uconn(w, c);
    PITH_ASSERT(uc->nheld == 0 && uc->starved == 0 && !uc->ready);
    uc->held_off = 0;
    uc->end = false;
    uc->single = false;
    uc->peer_ended = uc->in_room_set = false;
    return 0;
}

/* The room set's own poll, armed while a connection waits in it. */
static void arm_room_set(struct uring *u)
{
    if (u->room_armed || u->room_wait == 0)
        return;
    struct io_uring_sqe *sqe = uring_sqe_get(u);
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

/* Waits until the socket can take bytes: writable() then. */
static void wait_room(struct worker *w, struct conn *c)
{
    if (c->events & (IN_POLL | IN_ROOM))
        return;
    if (uconn(w, c)->peer_ended) {
        wait_in_room_set(w, c);
        return;
    }
    struct io_uring_sqe *sqe = uring_sqe_get(state(w));
    io_uring_prep_poll_add(sqe, c->fd, POLLOUT);
    io_uring_sqe_set_data64(sqe, ud_conn(w, c, K_POLL));
    c->events |= IN_POLL;
}

static void ur_want_write(struct worker *w, struct conn *c)
{
    wait_room(w, c);
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
    unsigned flags = MSG_NOSIGNAL | MSG_DONTWAIT | (more ? MSG_MORE : 0);
    struct io_uring_sqe *sqe = uring_sqe_get(u);
    io_uring_prep_sendmsg(sqe, c->fd, &uc->msg, flags);
    io_uring_sqe_set_data64(sqe, ud_conn(w, c, K_SEND));
    c->events |= IN_SEND;
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

void uring_cancel(struct worker *w, struct conn *c, enum kind k)
{
    struct io_uring_sqe *sqe = uring_sqe_get(state(w));
    io_uring_prep_cancel64(sqe, ud_conn(w, c, k), 0);
    io_uring_sqe_set_data64(sqe, K_IGNORE);
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
    uc->in_room_set = false;
    sys_close(c->fd);
    uring_drop_held(state(w), uconn(w, c));
    uring_unstarve(w, c);
    if (c->events & IN_RECV)
        uring_cancel(w, c, K_RECV);
    if (c->events & IN_SEND)
        uring_cancel(w, c, K_SEND);
    if (c->events & IN_POLL)
        uring_cancel(w, c, K_POLL);
}

static bool ur_busy(struct worker *w, const struct conn *c)
{
    (void)w;
    return c->events != 0 || state(w)->uc[c - w->conns].ready;
}

static bool ur_sending(struct worker *w, const struct conn *c)
{
    (void)w;
    return (c->events & IN_SEND) != 0;
}

/* ---- completions ------------------------------------------------------------------------ */

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
        w->events->accepted(w, e->res, NULL, tls);
    } else if (e->res != -ECANCELED) {
        w->events->accept_failed(w, e->res);
        return;
    }
    if (current && !u->accepting[tls] && w->listening)
        listen_one(w, tls, true); /* ended on its own while we still listen */
}

static void on_send(struct worker *w, struct conn *c, const struct completion *e)
{
    c->events &= ~IN_SEND;
    if (c->state == CONN_CLOSING)
        return;
    c->tp->sent(w, c, e->res); /* -EAGAIN: nothing went, the socket is full */
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
            c->tp->writable(w, c);
    }
    arm_room_set(u);
}

static void on_conn(struct worker *w, const struct completion *e)
{
    struct conn *c = &w->conns[e->ud >> 8];
    switch ((enum kind)(e->ud & 0xff)) {
    case K_RECV: uring_on_recv(w, c, e); break;
    case K_SEND: on_send(w, c, e); break;
    case K_POLL:
        c->events &= ~IN_POLL;
        if (c->state == CONN_CLOSING)
            break;
        if (e->res < 0) {
            conn_close(w, c, CLOSE_ERROR);
        } else if (e->res & (POLLOUT | POLLERR | POLLHUP)) {
            c->tp->writable(w, c); /* room, or an error the next send reports */
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
            w->events->signal(w, (int)state(w)->sig.ssi_signo);
        arm_signal(w);
        break;
    case K_IGNORE: break;
    case K_ROOMSET: on_room_set(w); break;
    case K_UDP: uring_udp_done(w, e); break;
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
    uring_deliver_ready(w);
    if (u->nready)
        timeout_ms = 0;
    struct __kernel_timespec ts = {timeout_ms / 1000, (long long)(timeout_ms % 1000) * 1000000};
    io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, timeout_ms >= 0 ? &ts : NULL, NULL);
    w->events->clock(w);
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
            uring_deliver_ready(w);
        }
        uring_feed_starved(w);
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
    .exit = uring_udp_exit,
    .wait = ur_wait,
    .listen = ur_listen,
    .conn_start = ur_conn_start,
    .want_read = uring_want_read,
    .want_write = ur_want_write,
    .send = ur_send,
    .sendfile = ur_sendfile,
    .close = ur_close,
    .busy = ur_busy,
    .sending = ur_sending,
    .accept_busy = ur_accept_busy,
};

/* SPDX-License-Identifier: MIT */
/*
 * loop_uring_udp.c - the io_uring backend's datagrams (HTTP/3's UDP socket,
 * issue 34): one multishot RECVMSG (Linux 6.0) from a provided-buffer ring
 * of the socket's own, so datagrams arrive as completions with no system
 * call of their own, each with its source address and control messages
 * (the local address and ECN bits h3_udp.c asked for). Each is handed to
 * the worker (loop_events.datagram) and its buffer goes back to the ring
 * at once; the worker answers them after the loop's wait, together. The
 * RECVMSG ends when the ring ran dry (a burst of more than UDP_BUF_COUNT
 * datagrams between two passes: they wait in the socket) and is armed
 * again. A kernel without multishot RECVMSG answers -EINVAL: the socket is
 * then polled, and the worker takes its datagrams with recvmmsg
 * (loop_events.datagrams), as on the epoll loop.
 */
#include "event/loop_uring_internal.h"

#include "event/loop.h"
#include "sys/sys.h"

#include <errno.h>
#include <poll.h>
#include <string.h>

/* Each ring buffer: the kernel's header, the source address, the control
 * messages and the datagram. A datagram longer than UDP_PAYLOAD_MAX comes
 * truncated (MSG_TRUNC) and is dropped by the worker, as one longer than
 * its recvmmsg buffers is. */
#define UDP_NAME_MAX    ((unsigned)sizeof(struct sockaddr_storage))
#define UDP_CONTROL_MAX 128u
#define UDP_PAYLOAD_MAX 2048u
#define UDP_BUF_SIZE                                                                               \
    ((unsigned)sizeof(struct io_uring_recvmsg_out) + UDP_NAME_MAX + UDP_CONTROL_MAX +              \
     UDP_PAYLOAD_MAX)

int uring_udp_init(struct worker *w)
{
    struct uring *u = state(w);
    if (w->udp_fd < 0)
        return 0;
    u->udp_br = sys_map(UDP_BUF_COUNT * sizeof(struct io_uring_buf));
    u->udp_bufs = sys_map((size_t)UDP_BUF_COUNT * UDP_BUF_SIZE);
    if (!u->udp_br || !u->udp_bufs)
        return -ENOMEM;
    struct io_uring_buf_reg reg = {.ring_addr = (unsigned long)u->udp_br,
                                   .ring_entries = UDP_BUF_COUNT,
                                   .bgid = UDP_BUF_GROUP};
    int r = io_uring_register_buf_ring(&u->ring, &reg, 0);
    if (r < 0)
        return r;
    io_uring_buf_ring_init(u->udp_br);
    for (unsigned i = 0; i < UDP_BUF_COUNT; i++)
        io_uring_buf_ring_add(u->udp_br, u->udp_bufs + (size_t)i * UDP_BUF_SIZE, UDP_BUF_SIZE,
                              (unsigned short)i, io_uring_buf_ring_mask(UDP_BUF_COUNT), (int)i);
    io_uring_buf_ring_advance(u->udp_br, UDP_BUF_COUNT);
    /* What the kernel reads for each datagram: the room for the address
     * and the control messages; it must live while the RECVMSG is armed. */
    u->udp_msg = (struct msghdr){.msg_namelen = UDP_NAME_MAX, .msg_controllen = UDP_CONTROL_MAX};
    return 0;
}

void uring_udp_arm(struct worker *w)
{
    struct uring *u = state(w);
    if (w->udp_fd < 0)
        return;
    struct io_uring_sqe *sqe = uring_sqe_get(u);
    if (u->udp_polled) {
        io_uring_prep_poll_add(sqe, w->udp_fd, POLLIN);
    } else {
        io_uring_prep_recvmsg_multishot(sqe, w->udp_fd, &u->udp_msg, 0);
        sqe->flags |= IOSQE_BUFFER_SELECT;
        sqe->buf_group = UDP_BUF_GROUP;
    }
    io_uring_sqe_set_data64(sqe, K_UDP);
}

static void recycle(struct uring *u, unsigned bid)
{
    io_uring_buf_ring_add(u->udp_br, u->udp_bufs + (size_t)bid * UDP_BUF_SIZE, UDP_BUF_SIZE,
                          (unsigned short)bid, io_uring_buf_ring_mask(UDP_BUF_COUNT), 0);
    io_uring_buf_ring_advance(u->udp_br, 1);
}

/* One datagram in ring buffer bid, n bytes of it used: its parts as a
 * msghdr, for the worker to read as it reads recvmmsg's. */
static void deliver(struct worker *w, char *buf, int n)
{
    struct uring *u = state(w);
    struct io_uring_recvmsg_out *o = io_uring_recvmsg_validate(buf, n, &u->udp_msg);
    if (!o)
        return;
    struct msghdr m = {
        .msg_name = io_uring_recvmsg_name(o),
        .msg_namelen = o->namelen,
        .msg_control = o->controllen ? (char *)io_uring_recvmsg_name(o) + UDP_NAME_MAX : NULL,
        .msg_controllen = o->controllen,
        .msg_flags = (int)o->flags,
    };
    uint8_t *p = io_uring_recvmsg_payload(o, &u->udp_msg);
    unsigned len = io_uring_recvmsg_payload_length(o, n, &u->udp_msg);
    w->events->datagram(w, &m, p, len);
}

void uring_udp_done(struct worker *w, const struct completion *e)
{
    struct uring *u = state(w);
    if (u->udp_polled) {
        w->events->datagrams(w);
        uring_udp_arm(w);
        return;
    }
    if (e->res == -EINVAL || e->res == -EOPNOTSUPP) {
        u->udp_polled = true; /* no multishot RECVMSG before Linux 6.0 */
        uring_udp_arm(w);
        return;
    }
    if (e->res >= 0 && (e->flags & IORING_CQE_F_BUFFER)) {
        unsigned bid = e->flags >> IORING_CQE_BUFFER_SHIFT;
        deliver(w, u->udp_bufs + (size_t)bid * UDP_BUF_SIZE, e->res);
        recycle(u, bid);
    }
    /* -ENOBUFS (the ring ran dry) or another end: what is left waits in
     * the socket for the next RECVMSG. */
    if (!(e->flags & IORING_CQE_F_MORE))
        uring_udp_arm(w);
}

/* The RECVMSG is cancelled and its end waited for (up to a second), so
 * the socket is let go when the worker exits. Left armed, it would hold
 * the socket until the ring's teardown, which the kernel finishes after
 * the process ended: a pith started at once on the same port could find
 * it taken (test_h3.py's ephemeral port test, 1 start in 20). */
void uring_udp_exit(struct worker *w)
{
    struct uring *u = state(w);
    if (!u || w->udp_fd < 0)
        return;
    struct io_uring_sqe *sqe = uring_sqe_get(u);
    io_uring_prep_cancel64(sqe, K_UDP, IORING_ASYNC_CANCEL_ALL);
    io_uring_sqe_set_data64(sqe, K_IGNORE);
    bool ended = false;
    for (int i = 0; i < 100 && !ended; i++) {
        struct io_uring_cqe *cqe;
        struct __kernel_timespec ts = {.tv_nsec = 10 * 1000 * 1000};
        io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, &ts, NULL);
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&u->ring, head, cqe)
        {
            if (cqe->user_data == K_UDP && !(cqe->flags & IORING_CQE_F_MORE))
                ended = true;
            seen++;
        }
        io_uring_cq_advance(&u->ring, seen);
    }
}

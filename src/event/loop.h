/* SPDX-License-Identifier: MIT */
/*
 * loop.h - the contract between a worker's event loop backend (epoll or
 * io_uring) and the connections. A backend only moves bytes and reports
 * back, so every behaviour of pith is the same on both (the whole test
 * suite runs on each).
 *
 * The backend owns receiving: when a connection waits for bytes it calls
 * want_read(); the backend receives (on readiness, or from a completed
 * recv) into the room the connection's transport offers (recv_room) and
 * reports with received(). Sending is started through send() and
 * sendfile(): bytes go now (n >= 0), or the call returns -EAGAIN and the
 * backend later calls the transport's sent() (io_uring: the completion) or
 * writable() (room again), or it fails (-errno).
 *
 * What a backend promises (docs/DESIGN.md §1, "The seam"), the same on both:
 * - received(0) only for the peer's real end of stream; "no room" (recv_room
 *   says 0) is no receive and no report until want_read() comes again;
 *   never a receive of 0 bytes.
 * - writable() only when the socket can take bytes (or has failed, which
 *   the next send reports); a peer's FIN alone (RDHUP) is not room.
 * - A send that meets a full socket is -EAGAIN, never an error: at once on
 *   epoll, through sent() on io_uring (its sends carry MSG_DONTWAIT, so a
 *   full socket is seen, not waited on inside the ring). Nothing went; the
 *   connection waits for room (want_write) and sends the same bytes again.
 * - A peer's FIN while answers are owed is held back until the connection
 *   reads again, after what was received before it.
 * - Bounded: what a connection holds in the backend is bounded (io_uring:
 *   HELD_MAX ring buffers, none from the reserve), and waiting for room or
 *   bytes costs no CPU.
 *
 * Closing is deferred the same way on both backends: close() ends the
 * socket and cancels what is in flight; the worker frees the connection
 * after the current loop iteration, once busy() says no operation still
 * reads its memory.
 */
#ifndef PITH_LOOP_H
#define PITH_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

struct worker;
struct conn;

/* What a loop (and a connection's life, conn.c) reports up to the worker
 * that runs it: the one way the event room calls into the process
 * (process/worker.c fills it in, w->events). */
struct loop_events {
    /* A connection accepted on fd (peer may be NULL: asked for lazily;
     * tls: on the TLS listener). */
    void (*accepted)(struct worker *w, int fd, const struct sockaddr_storage *peer, bool tls);
    /* An accept that failed with err (-EMFILE...). */
    void (*accept_failed)(struct worker *w, int err);
    /* A signal read from the signalfd. */
    void (*signal)(struct worker *w, int sig);
    /* After a wait: read the clocks into now_ms/now_sec (and the Date). */
    void (*clock)(struct worker *w);
    /* c was closed; it is freed once the backend lets go of it (after this
     * loop iteration at the earliest, on both backends). */
    void (*closed)(struct worker *w, struct conn *c);
    /* The UDP socket (w->udp_fd, HTTP/3's) has datagrams: the worker takes
     * them all (epoll; io_uring on a kernel without multishot RECVMSG). */
    void (*datagrams)(struct worker *w);
    /* One datagram the backend received itself (io_uring): m holds its
     * source (msg_name), control messages and flags (MSG_TRUNC), p its n
     * bytes, both valid during the call. The worker answers after the
     * loop's wait returns. */
    void (*datagram)(struct worker *w, const struct msghdr *m, uint8_t *p, size_t n);
};

struct loop_ops {
    const char *name;
    /* Sets the loop up for w (after the listener and signalfd exist). */
    int (*init)(struct worker *w);
    /* The worker ends: what the kernel holds for it is let go now, not
     * after the process ended (io_uring; NULL where nothing is held). */
    void (*exit)(struct worker *w);
    /* Waits up to timeout_ms (-1: no limit) and dispatches what happened. */
    void (*wait)(struct worker *w, int timeout_ms);
    /* Starts or stops taking new connections. */
    void (*listen)(struct worker *w, bool on);
    /* A new connection was accepted into c (c->fd set). 0 or -errno. */
    int (*conn_start)(struct worker *w, struct conn *c);
    void (*want_read)(struct worker *w, struct conn *c);
    void (*want_write)(struct worker *w, struct conn *c);
    /* Sends iov[0..n) (MSG_MORE when `more`); iov stays valid until the
     * send ends. See above for the results. */
    ssize_t (*send)(struct worker *w, struct conn *c, const struct iovec *iov, unsigned n,
                    bool more);
    /* sendfile(2) of up to n bytes of fd from *off; -EAGAIN: writable()
     * follows when the socket has room. */
    ssize_t (*sendfile)(struct worker *w, struct conn *c, int fd, uint64_t *off, size_t n);
    /* Closes c's socket and cancels its operations. */
    void (*close)(struct worker *w, struct conn *c);
    /* True while an operation of c is still in flight (its memory is read). */
    bool (*busy)(struct worker *w, const struct conn *c);
    /* True while a send of c is in flight: its -EAGAIN meant "sent() comes
     * later", not "the socket is full" (io_uring's asynchronous sends). */
    bool (*sending)(struct worker *w, const struct conn *c);
    /* True while the kernel may still hand w a connection it accepted (an
     * io_uring accept whose cancellation has not completed): a draining
     * worker waits for that, and serves what comes, rather than exit
     * with a client's connection in its hands. */
    bool (*accept_busy)(struct worker *w);
};

extern const struct loop_ops loop_epoll;
extern const struct loop_ops loop_uring;

/* Whether io_uring can run here with what pith needs (kernel 5.19+: buffer
 * rings, multishot accept), and if not why, in `why` (for the start line). */
bool loop_uring_available(char *why, unsigned long cap);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * loop.h - the contract between a worker's event loop backend (epoll or
 * io_uring) and the connection code. conn.c decides what to do; a backend
 * only moves bytes and reports back, so every behaviour of pith is the same
 * on both (the whole test suite runs on each).
 *
 * The backend owns receiving: when a connection waits for bytes it calls
 * want_read(); the backend receives (on readiness, or from a completed
 * recv) into conn_recv_buffer() and reports with conn_received(). Sending
 * is started by conn.c through send(): the bytes are sent now (n >= 0), or
 * the backend returns -EAGAIN and later calls conn_sent() (io_uring: the
 * completion) or conn_writable() (epoll: readiness), or it fails (-errno).
 * Bytes sent outside the backend (sendfile) that find the socket full ask
 * for want_write(), answered by conn_writable().
 */
#ifndef PITH_LOOP_H
#define PITH_LOOP_H

#include <stdbool.h>
#include <sys/types.h>

struct worker;
struct conn;

struct loop_ops {
    const char *name;
    /* Sets the loop up for w (after the listener and signalfd exist). */
    int (*init)(struct worker *w);
    /* Waits up to timeout_ms (-1: no limit) and dispatches what happened. */
    void (*wait)(struct worker *w, int timeout_ms);
    /* Starts or stops taking new connections. */
    void (*listen)(struct worker *w, bool on);
    /* A new connection was accepted into c (c->fd set). 0 or -errno. */
    int (*conn_start)(struct worker *w, struct conn *c);
    void (*want_read)(struct worker *w, struct conn *c);
    void (*want_write)(struct worker *w, struct conn *c);
    /* Sends c->iov[iov_at..niov) (MSG_MORE when `more`). */
    ssize_t (*send)(struct worker *w, struct conn *c, bool more);
    /* Closes c's socket. True when c can be freed now; false when an
     * operation is still in flight, and the backend calls conn_free() once
     * it has ended (io_uring: the memory it reads must stay put). */
    bool (*close)(struct worker *w, struct conn *c);
};

extern const struct loop_ops loop_epoll;
extern const struct loop_ops loop_uring;

/* Whether io_uring can run here with what pith needs (kernel 5.19+: buffer
 * rings, multishot accept), and if not why, in `why` (for the start line). */
bool loop_uring_available(char *why, unsigned long cap);

/* ---- what conn.c offers the backends ------------------------------------------------ */

/* Where received bytes go: the connection's slot (taken from the pool if it
 * had none) past what it holds; *room is the space left there. */
char *conn_recv_buffer(struct worker *w, struct conn *c, size_t *room);
/* n bytes were appended at conn_recv_buffer() (n > 0), the peer closed
 * (0), nothing was there after all (-EAGAIN) or the socket failed (-errno).
 * In the lingering state the bytes were discarded by the backend. */
void conn_received(struct worker *w, struct conn *c, ssize_t n);
/* The socket has room again: resume the response. */
void conn_writable(struct worker *w, struct conn *c);
/* A send started by loop_ops.send ended with n bytes sent or -errno. */
void conn_sent(struct worker *w, struct conn *c, ssize_t n);
/* The backend no longer uses c: give everything back. */
void conn_free(struct worker *w, struct conn *c);

#endif

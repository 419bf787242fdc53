/* SPDX-License-Identifier: MIT */
/*
 * loop_uring_internal.h - what the io_uring backend's two files share: the
 * ring's state, a connection's state in it, and the calls between
 * loop_uring.c (the ring, accepts, sends, polls, closes, the wait) and
 * loop_uring_recv.c (receiving: multishot and single-shot receives, the
 * held ring buffers, their delivery to the transport, starvation). Nothing
 * outside the backend includes it.
 */
#ifndef PITH_LOOP_URING_INTERNAL_H
#define PITH_LOOP_URING_INTERNAL_H

#include "base/worker.h"
#include "event/conn.h"

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/signalfd.h>
#include <sys/socket.h>

#define RING_ENTRIES 1024
#define BUF_COUNT    512  /* provided buffers: a batch of completions' worth */
#define BUF_SIZE     4096 /* a typical request head fits one */
#define BUF_GROUP    1
#define BATCH        256
/* A burst pulled in by a multishot before it is cancelled can be large
 * (the kernel keeps receiving within one io_uring_enter: 70+ buffers seen
 * from one pipelining client), so a connection may hold up to half the
 * ring, but never the last quarter: that stays for everyone else. */
#define HELD_MAX      (BUF_COUNT / 2)
#define HELD_RESERVE  (BUF_COUNT / 4)
#define UDP_BUF_COUNT 32u /* HTTP/3's datagrams (loop_uring_udp.c): as many as a recvmmsg takes */
#define UDP_BUF_GROUP 2

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
    K_UDP,     /* HTTP/3's UDP socket: a datagram (or, polled, datagrams to take) */
};

/* In-flight operations of a connection, kept in c->events. */
#define IN_RECV 1u
#define IN_SEND 2u
#define IN_POLL 4u
#define IN_ROOM 8u /* waiting in the room set */

/* Per connection: a sendmsg's header (it must live until the completion)
 * and received bytes not yet taken by the connection. */
struct uconn {
    struct msghdr msg;
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
    /* HTTP/3's datagrams (loop_uring_udp.c): their buffer ring, the
     * RECVMSG's header, and whether the socket is polled instead. */
    struct io_uring_buf_ring *udp_br;
    char *udp_bufs;
    struct msghdr udp_msg;
    bool udp_polled;
};

struct completion {
    uint64_t ud;
    int32_t res;
    uint32_t flags;
};

static inline struct uring *state(struct worker *w)
{
    return w->loop_state;
}

static inline uint64_t ud_conn(const struct worker *w, const struct conn *c, enum kind k)
{
    return ((uint64_t)(c - w->conns) << 8) | k;
}

static inline struct uconn *uconn(struct worker *w, const struct conn *c)
{
    return &state(w)->uc[c - w->conns];
}

/* ---- loop_uring.c ---------------------------------------------------------------------- */

/* An SQE; when the queue is full, what is queued goes in first. */
struct io_uring_sqe *uring_sqe_get(struct uring *u);
/* Gives ring buffer bid back to the kernel. */
void uring_buf_recycle(struct uring *u, unsigned bid);
/* Cancels c's operation of kind k (its completion is ignored). */
void uring_cancel(struct worker *w, struct conn *c, enum kind k);

/* ---- loop_uring_recv.c ----------------------------------------------------------------- */

/* The loop's want_read (loop.h). */
void uring_want_read(struct worker *w, struct conn *c);
/* A receive of c completed. */
void uring_on_recv(struct worker *w, struct conn *c, const struct completion *e);
/* Hands held bytes to the connections on the ready list. */
void uring_deliver_ready(struct worker *w);
/* Receives again for connections that found the ring empty, while buffers are free. */
void uring_feed_starved(struct worker *w);
/* On close: c's held buffers go back to the ring, and c leaves the starved list. */
void uring_drop_held(struct uring *u, struct uconn *uc);
void uring_unstarve(struct worker *w, struct conn *c);

/* loop_uring_udp.c */
int uring_udp_init(struct worker *w);
void uring_udp_arm(struct worker *w);
void uring_udp_done(struct worker *w, const struct completion *e);
void uring_udp_exit(struct worker *w);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * conn.h - a connection as the loops and transports see it: the socket, its
 * transport, what the loop watches, its state, its input slot, its
 * deadline, the client behind it, and the protocol that owns its bytes
 * (struct conn_proto: HTTP/1 from the accept, HTTP/2 once ALPN or the
 * preface says so). conn.c is the life common to every protocol (accept,
 * lingering close, close, free) and the one door from the transport to the
 * protocol; it never parses or answers a request. The loops, the transports
 * and this file know a protocol only as that table.
 */
#ifndef PITH_CONN_H
#define PITH_CONN_H

#include "base/close.h"
#include "base/timer.h"

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

struct worker;
struct transport_ops;
struct exchange;
struct h2_conn;
struct conn;

/* The protocol that owns a connection's bytes: the one way the event room
 * calls above itself into HTTP/1 (http1/h1_conn.c) or HTTP/2
 * (http2/h2_conn.c). conn.c calls these for a connection that is not
 * lingering (a lingering one is conn.c's own). */
struct conn_proto {
    const char *name;
    /* The connection begins with this protocol (after the accept; HTTP/2:
     * from HTTP/1, on the preface or ALPN h2). */
    void (*start)(struct worker *w, struct conn *c);
    /* The transport's side (transport.h): room for stream bytes, bytes
     * received (n > 0), the end (0) or a failure, a send that ended, room
     * to write again. */
    char *(*input_room)(struct worker *w, struct conn *c, size_t *room);
    void (*input_done)(struct worker *w, struct conn *c, ssize_t n);
    void (*sent)(struct worker *w, struct conn *c, ssize_t n);
    void (*writable)(struct worker *w, struct conn *c);
    /* The connection's deadline passed (the transport declined it). */
    void (*timeout)(struct worker *w, struct conn *c);
    /* SIGTERM: finish what is in flight, then close. */
    void (*drain)(struct worker *w, struct conn *c);
    /* Whether bytes of an answer are still to be sent: a close now cuts it
     * (TLS then sends no close_notify, so the client cannot take the cut
     * for the end; counted as an error). */
    bool (*owes)(const struct conn *c);
    /* The connection is closing: what is in flight is logged now. */
    void (*closing)(struct worker *w, struct conn *c);
    /* The backend let go of c: release what the protocol holds (its
     * exchanges, streams), before the slot goes. */
    void (*release)(struct worker *w, struct conn *c);
};

enum conn_state {
    CONN_FREE,
    CONN_READ,    /* waiting for or receiving a request head */
    CONN_WRITE,   /* sending a response */
    CONN_LINGER,  /* response sent, write side shut: discarding input until EOF */
    CONN_CLOSING, /* closed, waiting for the backend to let go */
};

struct conn {
    /* ---- the loop's and the transport's ---- */
    int fd;
    enum conn_state state; /* the loops read it (CLOSING, LINGER: discard input) */
    uint32_t events;       /* backend state: what epoll watches, or io_uring ops in flight */
    const struct transport_ops *tp;
    /* Input is taken while a send waits for the socket (HTTP/2: a request,
     * a WINDOW_UPDATE or a reset can change what goes out next), so a
     * backend that watches one direction at a time watches both then. */
    bool duplex;
    /* ---- the connection's (conn.c) ---- */
    const struct conn_proto *proto;
    char *slot;      /* pool slot while a request is in flight, else NULL */
    uint32_t in_len; /* bytes received into the slot's input region */
    struct timer timer;
    int64_t head_started_ms;      /* when the current head's deadline started (0: idle) */
    enum close_reason linger_why; /* why the lingering close began (counted at its end) */
    struct sockaddr_storage peer;
    /* the client behind it (event/client.c) */
    bool proxy_pending;  /* --proxy-protocol: the PROXY header is still to come */
    bool proxy_missing;  /* the TLS port found no PROXY header: the first answer is 400 */
    bool client_counted; /* in the per-client counts under client_key (clients.h) */
    bool client_limited; /* over --max-conns-per-client: its request gets a 503 */
    uint64_t client_key;
    struct conn *next_free; /* the free list, or the worker's closing list */
    /* ---- the protocol's own (never read here, nor by the loops) ---- */
    /* HTTP/1 (http1/h1_conn.c): the head being answered, its exchange in
     * the slot (forgotten with the slot), the header deadline's 408, and
     * whether HTTP/2 may still begin (no HTTP/1 request yet, --http2 on). */
    uint32_t head_len;
    struct exchange *x;
    bool timed_out;
    bool h2_possible;
    /* HTTP/2 (http2/h2_conn.c): the connection record, once it began. */
    struct h2_conn *h2;
};

/* ---- for the worker ----------------------------------------------------------------- */

/* A new connection (fd, transport and peer set) begins with proto. */
void conn_accepted(struct worker *w, struct conn *c, const struct conn_proto *proto);
/* Its deadline (c->timer) passed: the transport's, a lingering close's, or
 * the protocol's. */
void conn_on_timeout(struct worker *w, struct conn *c);
/* SIGTERM: the protocol finishes what is in flight (a lingering close goes
 * on). */
void conn_drain(struct worker *w, struct conn *c);
/* The backend no longer uses c: give everything back. */
void conn_free(struct worker *w, struct conn *c);

/* ---- for the protocols and the transports ---------------------------------------------- */

/* Ends c now: counted for why, what is in flight logged (proto->closing),
 * the transport's end said, the socket closed; freed once the backend lets
 * go (conn_free). */
void conn_close(struct worker *w, struct conn *c, enum close_reason why);
/* Shuts our side and discards what the client still sends, until it closes
 * or LINGER_MS pass, so a final answer is not lost to a reset; the close is
 * counted for `why`. The slot is given back. */
void conn_linger(struct worker *w, struct conn *c, enum close_reason why);
/* The input slot: taken for c (the pool has one per connection), or given
 * back (and c->x, which lives in it, forgotten). */
void conn_take_slot(struct worker *w, struct conn *c);
void conn_release_slot(struct worker *w, struct conn *c);
/* Arms c's deadline seconds from now. */
void conn_arm(struct worker *w, struct conn *c, unsigned seconds);

/* ---- for the transports (transport.h): the stream's bytes, to the protocol ------------- */

/* Room in the connection's input for stream bytes; *room 0 when it takes
 * none now (a lingering connection: its bytes are the loop's to drop). */
char *conn_input_room(struct worker *w, struct conn *c, size_t *room);
/* n stream bytes were written at conn_input_room(), or 0 / -errno as for
 * received(). */
void conn_input_done(struct worker *w, struct conn *c, ssize_t n);
void conn_sent(struct worker *w, struct conn *c, ssize_t n);
void conn_writable(struct worker *w, struct conn *c);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * conn.h - one HTTP/1 connection: its input (a pool slot while a request is
 * in flight), the exchange in progress, its deadline and its transport.
 * conn.c reads heads, runs one exchange at a time through the handler, and
 * drains the exchange's output queue through the transport; it never
 * decides what to answer.
 */
#ifndef PITH_CONN_H
#define PITH_CONN_H

#include "base/close.h"
#include "base/timer.h"
#include "http/exchange.h"
#include "http/outq.h"

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

struct worker;
struct transport_ops;

enum conn_state {
    CONN_FREE,
    CONN_READ,    /* waiting for or receiving a request head */
    CONN_WRITE,   /* sending a response */
    CONN_LINGER,  /* response sent, write side shut: discarding input until EOF */
    CONN_CLOSING, /* closed, waiting for the backend to let go */
};

struct conn {
    int fd;
    enum conn_state state;
    uint32_t events; /* backend state: what epoll watches, or io_uring ops in flight */
    const struct transport_ops *tp;
    char *slot;         /* pool slot while a request is in flight, else NULL */
    uint32_t in_len;    /* bytes received into the slot's input region */
    uint32_t head_len;  /* the current request head's length */
    struct exchange *x; /* the request being answered, in the slot; NULL without one */
    struct timer timer;
    int64_t head_started_ms;      /* when the current head's deadline started (0: idle) */
    enum close_reason linger_why; /* why the lingering close began (counted at its end) */
    bool timed_out;               /* the header deadline passed: a 408 is on its way */
    bool proxy_pending;           /* --proxy-protocol: the PROXY header is still to come */
    bool client_counted;          /* in the per-client counts under client_key (clients.h) */
    bool client_limited;          /* over --max-conns-per-client: its request gets a 503 */
    uint64_t client_key;
    bool proxy_missing; /* the TLS port found no PROXY header: the first answer is 400 */
    struct sockaddr_storage peer;
    /* Issue 20: HTTP/2 may still begin (no HTTP/1 request yet, --http2 on);
     * once it has, the HTTP/2 connection (h2_conn.h) that owns c's input,
     * output and timer, and every entry point below hands c to it. */
    bool h2_possible;
    struct h2_conn *h2;
    /* Input is taken while a send waits for the socket (HTTP/2: a request,
     * a WINDOW_UPDATE or a reset can change what goes out next), so a
     * backend that watches one direction at a time watches both then. */
    bool duplex;
    struct conn *next_free; /* the free list, or the worker's closing list */
};

/* ---- for the worker ----------------------------------------------------------------- */

/* A new connection (fd set, transport chosen): start reading its first head. */
void conn_accepted(struct worker *w, struct conn *c);
void conn_on_timeout(struct worker *w, struct conn *c);
void conn_close(struct worker *w, struct conn *c, enum close_reason why);
/* Shuts our side and discards what the client still sends, until it closes
 * or LINGER_MS pass, so a final answer is not lost to a reset; the close is
 * counted for `why`. */
void conn_linger(struct worker *w, struct conn *c, enum close_reason why);
/* SIGTERM: close c now if idle; otherwise it closes after its response. */
void conn_drain(struct worker *w, struct conn *c);
/* The backend no longer uses c: give everything back. */
void conn_free(struct worker *w, struct conn *c);

#endif

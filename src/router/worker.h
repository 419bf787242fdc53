/* SPDX-License-Identifier: MIT */
/*
 * worker.h - what a router worker's files share, and nothing else does:
 * the worker's state (worker.c: its memory, clock, the request being
 * parsed, the scratch), and the entry points of serve.c (the connection
 * loop: epoll, reading heads, sending, deadlines, the drain), answer.c (a
 * request's answer: the head written straight into the out buffer, then a
 * file, an error page or a listing) and access_log.c (the combined-format
 * log). serve.c calls answer.c and access_log.c, which call neither it
 * nor each other: they read the state here. router.h is what the worker
 * shares with main_router.c. The state is the worker's own (one thread).
 */
#ifndef PITH_ROUTER_WORKER_H
#define PITH_ROUTER_WORKER_H

#include "core/date.h"
#include "core/http_parse.h"
#include "core/target.h"
#include "router/router.h"
#include "sys/sys.h"

#define OUT_CAP      12288 /* a head with an 8 KiB Location, or listing chunks */
#define LOG_LINE_MAX 8192  /* an access-log line, cut to fit (written into the scratch) */
/* The scratch, one buffer for what a request needs while it is answered, in
 * this order from its start: the request's bytes when they arrived in this
 * event, the normalized path (with room for "/" and the index), a
 * redirect's Location, then the head and what of the body fits (OUT_CAP).
 * Packed end to end, a small request touches one page of it; the pages
 * behind cost nothing until used (issue 36). */
#define SCRATCH_CAP (HTTP_MAX_HEAD + PATH_MAX + 1 + TARGET_LOCATION_MAX + OUT_CAP)

enum phase { P_FREE, P_READ, P_SEND, P_LINGER };

/* A connection's state, kept apart from its buffers (struct rbuf) so that
 * an idle one costs its few hundred bytes here: a request that arrives
 * whole and is answered at once lives in the worker's scratch buffers,
 * and only what must wait (a partial head, pipelined bytes, a head not
 * sent yet, a listing) moves into the connection's own rbuf. */
struct rconn {
    int fd, file_fd, dir_fd;
    uint8_t phase;
    bool idle;        /* between requests: nothing of the next one yet */
    bool keep_alive;  /* the request allows the connection to persist */
    bool close_after; /* this response ends the connection */
    bool head_only, chunked, page_started;
    bool owns; /* its rbuf holds bytes: given back when idle with nothing buffered, or closed */
    uint32_t events; /* what epoll watches for this connection */
    int64_t deadline;
    uint64_t file_off, file_left, body_bytes;
    uint32_t have, used, out_len, out_off;
    uint16_t dlen, doff;
    int status, minor;
    char *inp, *outp; /* the request's bytes and the answer's: scratch or own */
    struct span method, target, referer, user_agent; /* for the log, into inp */
    struct sockaddr_storage peer;
};

#define RBUF_USED (HTTP_MAX_HEAD + OUT_CAP + 1024)
struct rbuf {
    char in[HTTP_MAX_HEAD];
    char out[OUT_CAP];
    char dbuf[1024];                            /* getdents of a listing in progress */
    char pad[(4096 - RBUF_USED % 4096) % 4096]; /* whole pages: each rbuf is given back alone */
};

/* serve.c's: the connections and the scratch, in one object so that the
 * connections follow the small state at once and the scratch follows them
 * (a named section goes after the others): a worker's first connections
 * share the small state's last page. Then the connections' own buffers
 * (mapped, untouched until a connection needs them), the clock (read once
 * per loop iteration, the Date field's text with it), whether the worker
 * drains, and the request being answered. */
struct wmem {
    struct rconn conns[ROUTER_CONNS];
    char scratch[SCRATCH_CAP];
};
extern struct wmem wm;
extern struct rbuf *bufs;
#define OWN(c) (&bufs[(c)-wm.conns])
extern int64_t now_ms, now_sec;
extern char date[DATE_IMF_LEN];
extern bool draining;
extern struct http_request req;

/* The scratch's first byte that c's request does not hold. */
char *scratch_after(const struct rconn *c);

/* answer.c: starts the exchange (P_SEND, the send deadline) with the
 * answer to c's request (verdict > 0: a head of that many bytes, parsed
 * into req) or the error -verdict (the parser's, or 408): the head and what
 * of the body fits into the scratch, a file (file_fd) or a listing (dir_fd)
 * set up in c; the caller (serve.c) then pumps. */
void answer_start(struct rconn *c, long verdict);

/* The next piece of c's listing into its own out buffer; false when the
 * directory gave nothing yet (the loop comes back to it). */
bool listing_fill(struct rconn *c);

/* access_log.c: opens --log (or reopens it, on HUP/USR1); false when a
 * log was asked for and none is open. */
bool log_open(void);

/* One line for c's exchange (a no-op without --log); rotates the file
 * past --log-max. */
void log_request(const struct rconn *c);

#endif

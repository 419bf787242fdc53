/* SPDX-License-Identifier: MIT */
/*
 * worker.h - one worker process as every room of the server sees it: what
 * it serves (the settings and sites), its clock, the facilities every room
 * uses (timers, buffer slots, the logs, the counters), the exchange's
 * scratch, and each room's own state behind a pointer whose type only that
 * room defines (the file cache, basic auth, TLS, HTTP/2), so a room sees
 * another's state only as a name. The event loop's descriptors and the
 * connection table are here too, for the loops (event/) and the worker
 * (process/worker.c) alone; what only the worker process uses stays in
 * process/worker.c. No globals: everything hangs off struct worker, passed
 * down explicitly.
 */
#ifndef PITH_BASE_WORKER_H
#define PITH_BASE_WORKER_H

#include "base/close.h"
#include "base/log.h"
#include "base/pool.h"
#include "base/server.h"
#include "base/timer.h"
#include "core/date.h"
#include "core/http_fields.h"
#include "core/http_parse.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

struct stats_worker;
struct filecache;
struct fc_entry;
struct auth_worker;
struct tls_worker;
struct h2_worker;
struct h3_worker;
struct loop_ops;
struct loop_events;
struct conn;

struct worker {
    /* ---- what it serves (read-only after start) ---- */
    const struct server *srv;
    const struct settings *set;
    unsigned index; /* its slot among the workers */
    /* ---- its clock: read after each wait of the loop ---- */
    int64_t now_ms;
    int64_t now_sec;
    char date[DATE_IMF_LEN]; /* the Date field's value, made once a second */
    bool draining;           /* SIGTERM: finish what is in flight, take nothing new */
    /* ---- what every room uses ---- */
    struct timer_wheel wheel;
    struct pool pool; /* a slot per connection with a request in flight */
    struct access_log log;
    /* --status counters (stats.h): this worker's block in the shared region,
     * and the cache counts its predecessors in the slot left there. */
    struct stats_worker *stats;
    uint64_t stats_base_hits, stats_base_misses;
    uint64_t closes[CLOSE_REASONS]; /* connections ended, by reason (its exit line) */
    /* ---- the exchange's scratch (http/): one request is parsed at a time ---- */
    struct http_request req;
    struct http_info info;
    char path[PATH_MAX + 1];   /* the normalized path */
    uint64_t boundary_seed[2]; /* random at start; a counter makes each boundary unique */
    /* ---- each room's own state ---- */
    struct filecache *cache;        /* http/filecache.h */
    struct fc_entry *scratch_entry; /* describes an uncached file while its head is built */
    struct auth_worker *auth;       /* http/auth.c: remembered credentials; NULL without */
    struct tls_worker *tls;         /* tls/: the TLS connections; NULL without HTTPS */
    struct h2_worker *h2;           /* http2/: NULL with --http2 off */
    struct h3_worker *h3;           /* http3/: NULL without HTTP/3 */
    /* ---- the event loop and the connection table (event/, process/worker.c) ---- */
    const struct loop_ops *loop;
    const struct loop_events *events; /* what the loop reports up (event/loop.h) */
    void *loop_state;                 /* the io_uring backend's ring and buffers */
    int epfd;                         /* the epoll backend's set */
    int sigfd;                        /* TERM, INT, HUP, USR1 */
    int listen_fd;
    int tls_listen_fd; /* HTTPS (issue 10): -1 without */
    int udp_fd;        /* HTTP/3's UDP socket (issue 34): -1 without */
    bool listening;    /* accepting new connections */
    bool exit_now;     /* a second TERM/INT */
    struct conn *conns;
    uint32_t nconns;      /* --max-conns */
    uint32_t next_unused; /* conns[next_unused..] never used yet */
};

#endif

/* SPDX-License-Identifier: MIT */
/*
 * worker.h - one worker process's state (its event loop, connections,
 * buffers, timers, cache and log) and what the backends and connections ask
 * of it. No globals: everything hangs off struct worker, passed down
 * explicitly.
 */
#ifndef PITH_WORKER_H
#define PITH_WORKER_H

#include "base/log.h"
#include "base/pool.h"
#include "base/server.h"
#include "base/timer.h"
#include "core/date.h"
#include "core/http_fields.h"
#include "core/http_parse.h"
#include "event/conn.h"
#include "event/loop.h"
#include "http/filecache.h"

#include <limits.h>
#include <sys/socket.h>

struct stats_worker;
struct h2_worker;
struct h3_worker;
struct auth_worker;

struct worker {
    const struct server *srv;
    const struct settings *set;
    const struct loop_ops *loop;
    void *loop_state; /* the io_uring backend's ring and buffers */
    unsigned index;
    int listen_fd;
    int tls_listen_fd;      /* HTTPS (issue 10): -1 without */
    struct tls_worker *tls; /* the TLS connections' state; NULL without HTTPS */
    struct h2_worker *h2;   /* HTTP/2's state (h2_internal.h); NULL with --http2 off */
    struct h3_worker *h3;   /* HTTP/3's state (src/http3/); NULL without HTTP/3 */
    int udp_fd;             /* HTTP/3's UDP socket (issue 34); -1 without */
    int epfd;               /* the epoll backend's set */
    int sigfd;              /* TERM, INT, HUP, USR1 */
    bool listening;         /* accepting new connections */
    bool draining;
    bool exit_now; /* a second TERM/INT */
    int64_t drain_deadline_ms;
    int64_t accept_retry_ms; /* after EMFILE: when to try accepting again */
    bool accept_failure_logged;
    int64_t now_ms;
    int64_t now_sec;
    char date[DATE_IMF_LEN];
    struct timer_wheel wheel;
    struct conn *conns;
    struct conn *free_conns;
    struct conn *closing; /* closed, waiting for the backend to let go */
    uint32_t nconns, active;
    uint32_t next_unused;           /* conns[next_unused..] never used yet */
    uint64_t closes[CLOSE_REASONS]; /* connections ended, by reason */
    struct pool pool;
    struct access_log log;
    struct filecache cache;
    struct fc_entry scratch_entry; /* describes an uncached file while its head is built */
    struct http_request req;       /* scratch for the request being parsed */
    struct http_info info;
    char path[PATH_MAX + 1];   /* scratch: the normalized path */
    uint64_t boundary_seed[2]; /* random at start; a counter makes each boundary unique */
    /* --status counters (stats.h): this worker's block in the shared region,
     * and the cache counts its predecessors in the slot left there. */
    struct stats_worker *stats;
    uint64_t stats_base_hits, stats_base_misses;
    struct auth_worker *auth; /* basic auth's remembered credentials (auth.c); NULL */
};

/* Runs worker `index` of srv until it drains or is told to exit; returns the
 * process's exit code. */
int worker_run(const struct server *srv, unsigned index);

/* For the backends: a connection accepted on fd (peer may be NULL: asked
 * for lazily; tls: on the TLS listener), an accept that failed, a signal read from the signalfd. */
void worker_accepted(struct worker *w, int fd, const struct sockaddr_storage *peer, bool tls);
void worker_accept_failed(struct worker *w, int err);
void worker_signal(struct worker *w, int sig);
/* Reads the clocks into now_ms/now_sec (and the Date) after a wait. */
void worker_update_clock(struct worker *w);

/* For conn.c: c was closed; it is freed once the backend lets go of it
 * (after this loop iteration at the earliest, on both backends). */
void worker_conn_closed(struct worker *w, struct conn *c);

#endif

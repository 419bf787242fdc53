/* SPDX-License-Identifier: MIT */
/*
 * router.h - the router profile's server floor (docs/DESIGN.md, "The router
 * profile"): what main_router.c (options, start-up, the master) hands to
 * a worker (serve.c, its epoll loop; answer.c, the request's answer and the
 * writer; access_log.c; serve.h between those three).
 * Every protocol decision is a src/core verdict; this floor only maps
 * verdicts to bytes on the socket.
 */
#ifndef PITH_ROUTER_H
#define PITH_ROUTER_H

#include "sys/resolve.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#define ROUTER_CONNS 128 /* connections per worker, at most */
/* Descriptors a worker keeps besides its connections': the standard
 * streams, root, listener, epoll, log, the open-file cache's 16, and what
 * an answer opens for an instant (the resolver's, an index beside its
 * directory). A connection holds two: its socket, and a file or directory. */
#define ROUTER_FDS_KEPT 32

struct router_set {
    int listen_fd;
    int root_fd;
    enum resolve_method resolve;
    const char *index;                 /* --index, default index.html */
    bool listing;                      /* off with --no-listing */
    char cache_control[32];            /* "max-age=N" or "no-cache" (--max-age 0) */
    int t_header, t_keepalive, t_send; /* milliseconds */
    const char *log_path;              /* --log, or NULL */
    uint64_t log_max;                  /* rotate past this many bytes (--log-max KIB) */
    int max_conns;                     /* per worker: ROUTER_CONNS, or what RLIMIT_NOFILE allows */
};

extern struct router_set router;
/* The signal mask a worker waits with (the master's, before it blocked
 * the signals it handles). */
extern sigset_t router_unblocked;
/* The master's pid: a worker whose parent is another (the master died
 * before the worker asked to die with it) exits at once. */
extern int router_master_pid;

/* A worker: serves router.listen_fd until SIGTERM (then drains) or its
 * master dies. Never returns. */
_Noreturn void router_worker(void);

/* "pith: <a><b>\n" on stderr. */
void router_say(const char *a, const char *b);

#endif

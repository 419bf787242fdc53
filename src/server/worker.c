/* SPDX-License-Identifier: MIT */
/*
 * worker.c - one worker process: its own epoll set over its own SO_REUSEPORT
 * listener (the kernel spreads connections, no thundering herd), a fixed
 * table of connections, and the loop that dispatches readiness, expires
 * deadlines, flushes the log and handles signals through a signalfd.
 *
 * At the connection limit, or when the process runs out of descriptors, the
 * listener leaves the epoll set, so a full worker sleeps instead of spinning
 * on a readable listener; it comes back when a connection closes (or after a
 * second, for EMFILE caused by something else).
 */
#include "core/bytes.h"
#include "server/server.h"
#include "sys/sys.h"

#include <errno.h>
#include <signal.h>

#define TAG_LISTENER 0
#define TAG_SIGNAL   1
#define TAG_CONN0    2
#define EVENTS_MAX   256
#define ACCEPT_BATCH 64 /* accepts per wake-up, so reads are not starved */

static const int worker_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};

static void update_clock(struct worker *w)
{
    w->now_ms = sys_now_ms();
    int64_t sec = sys_now_real();
    if (sec != w->now_sec) {
        w->now_sec = sec;
        date_format_imf(sec, w->date); /* the Date field, once a second */
    }
}

void worker_watch(struct worker *w, struct conn *c, uint32_t events)
{
    uint64_t tag = TAG_CONN0 + (uint64_t)(c - w->conns);
    sys_epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, events, tag);
}

static void listener_set(struct worker *w, bool on)
{
    if (w->listening == on || w->listen_fd < 0)
        return;
    int op = on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL;
    if (sys_epoll_ctl(w->epfd, op, w->listen_fd, EPOLLIN, TAG_LISTENER) == 0)
        w->listening = on;
}

static void accept_failed(struct worker *w, int err)
{
    /* Out of descriptors or memory: stop accepting for a moment rather
     * than spin on a listener that stays readable. */
    if (w->accept_retry_ms == 0)
        log_error_errno("accept4: pausing the listener for 1 s:", NULL, err);
    listener_set(w, false);
    w->accept_retry_ms = w->now_ms + 1000;
}

static void accept_batch(struct worker *w)
{
    for (int i = 0; i < ACCEPT_BATCH; i++) {
        if (!w->free_conns && w->next_unused < w->nconns) {
            struct conn *fresh = &w->conns[w->next_unused++];
            fresh->state = CONN_FREE;
            fresh->next_free = NULL;
            w->free_conns = fresh;
        }
        if (!w->free_conns) {
            listener_set(w, false); /* at --max-conns: back when one closes */
            return;
        }
        struct sockaddr_storage peer;
        int fd = sys_accept(w->listen_fd, &peer);
        if (fd == -EAGAIN)
            return;
        if (fd == -EINTR || fd == -ECONNABORTED)
            continue;
        if (fd < 0) {
            accept_failed(w, fd);
            return;
        }
        struct conn *c = w->free_conns;
        w->free_conns = c->next_free;
        c->fd = fd;
        c->peer = peer;
        sys_set_nodelay(fd);
        uint64_t tag = TAG_CONN0 + (uint64_t)(c - w->conns);
        if (sys_epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, EPOLLIN, tag) < 0) {
            sys_close(fd);
            c->next_free = w->free_conns;
            w->free_conns = c;
            continue;
        }
        w->active++;
        conn_accepted(w, c);
    }
}

/* Called by conn_close(): a slot is free again. */
void worker_conn_freed(struct worker *w)
{
    if (!w->draining && w->accept_retry_ms == 0)
        listener_set(w, true);
}

static void start_drain(struct worker *w)
{
    w->draining = true;
    w->drain_deadline_ms = w->now_ms + (int64_t)w->srv->cfg.grace * 1000;
    listener_set(w, false);
    sys_close(w->listen_fd);
    w->listen_fd = -1;
    for (uint32_t i = 0; i < w->next_unused; i++)
        if (w->conns[i].state != CONN_FREE)
            conn_drain(w, &w->conns[i]);
}

/* Returns true when the worker must exit now. */
static bool on_signals(struct worker *w)
{
    int sig;
    while ((sig = sys_signalfd_read(w->sigfd)) > 0) {
        if (sig == SIGHUP || sig == SIGUSR1) {
            access_log_reopen(&w->log);
        } else if (w->draining) {
            return true; /* a second TERM/INT: exit at once */
        } else {
            start_drain(w);
        }
    }
    return false;
}

static void fire_timer(struct timer *t, void *ctx)
{
    struct worker *w = ctx;
    struct conn *c = (struct conn *)((char *)t - offsetof(struct conn, timer));
    conn_on_timeout(w, c);
}

static int loop_timeout(struct worker *w)
{
    int t = timer_next_timeout(&w->wheel, w->now_ms);
    bool need_second = w->log.len || w->accept_retry_ms || w->draining;
    if (need_second && (t < 0 || t > 1000))
        t = w->draining ? 250 : 1000;
    return t;
}

static void run_loop(struct worker *w)
{
    struct epoll_event ev[EVENTS_MAX];
    for (;;) {
        int n = sys_epoll_wait(w->epfd, ev, EVENTS_MAX, loop_timeout(w), NULL);
        update_clock(w);
        for (int i = 0; i < n; i++) {
            uint64_t tag = ev[i].data.u64;
            if (tag == TAG_LISTENER) {
                accept_batch(w);
            } else if (tag == TAG_SIGNAL) {
                if (on_signals(w))
                    return;
            } else {
                struct conn *c = &w->conns[tag - TAG_CONN0];
                if (c->state != CONN_FREE)
                    conn_on_event(w, c, ev[i].events);
            }
        }
        timer_expire(&w->wheel, w->now_ms, fire_timer, w);
        access_log_tick(&w->log, w->now_ms);
        if (w->accept_retry_ms && w->now_ms >= w->accept_retry_ms) {
            w->accept_retry_ms = 0;
            if (!w->draining)
                listener_set(w, true);
        }
        if (w->draining && (w->active == 0 || w->now_ms >= w->drain_deadline_ms))
            return;
    }
}

static int worker_init(struct worker *w, const struct server *srv, unsigned index)
{
    w->srv = srv;
    w->index = index;
    w->listen_fd = srv->listen_fds[index];
    w->nconns = srv->cfg.max_conns;
    w->conns = sys_map((size_t)w->nconns * sizeof *w->conns);
    if (!w->conns || pool_init(&w->pool, w->nconns) < 0) {
        log_error("worker: cannot reserve memory for the connection table");
        return -1;
    }
    /* Slots are handed out from the free list, then from the untouched
     * tail (next_unused), so a table sized for 20,000 connections costs
     * resident memory only for those that ever existed. */
    w->free_conns = NULL;
    w->next_unused = 0;
    int r = access_log_open(&w->log, srv->cfg.log);
    if (r < 0) {
        log_error_errno("open the access log", srv->cfg.log, r);
        return -1;
    }
    if (srv->cfg.user && (r = sys_drop_privileges(srv->cfg.user)) < 0) {
        log_error_errno("drop privileges to", srv->cfg.user, r);
        return -1;
    }
    const struct config *cfg = &srv->cfg;
    struct fc_settings fcs = {
        .root_fd = srv->root_fd,
        .resolve = srv->resolve,
        .follow_symlinks = cfg->follow_symlinks,
        .entries = cfg->cache_entries,
        .mem_bytes = (uint64_t)cfg->cache_size_mib << 20,
        .max_file = cfg->cache_max_file,
        .cache_control = srv->cache_control,
        .immutable = cfg->immutable,
        .nimmutable = cfg->nimmutable,
    };
    if (filecache_init(&w->cache, &fcs) < 0) {
        log_error("worker: cannot reserve memory for the file cache");
        return -1;
    }
    w->epfd = sys_epoll_create();
    w->sigfd = sys_signalfd(worker_signals, ARRAY_LEN(worker_signals));
    if (w->epfd < 0 || w->sigfd < 0 ||
        sys_epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->sigfd, EPOLLIN, TAG_SIGNAL) < 0) {
        log_error("worker: cannot create its epoll set or signalfd");
        return -1;
    }
    if (sys_random(w->boundary_seed, sizeof w->boundary_seed) < 0)
        w->boundary_seed[0] = (uint64_t)sys_now_ms() ^ ((uint64_t)sys_getpid() << 32);
    update_clock(w);
    timer_wheel_init(&w->wheel, w->now_ms);
    listener_set(w, true);
    return 0;
}

int worker_run(const struct server *srv, unsigned index)
{
    /* The master holds the other workers' listeners; this one needs only its
     * own. If the master dies, so do we (no orphaned workers). */
    for (unsigned i = 0; i < srv->nlisten; i++)
        if (i != index)
            sys_close(srv->listen_fds[i]);
    sys_die_with_parent(SIGTERM);
    struct worker *w = sys_map(sizeof *w);
    if (!w || worker_init(w, srv, index) < 0)
        return 1;
    run_loop(w);
    access_log_flush(&w->log);
    return 0;
}

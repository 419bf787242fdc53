/* SPDX-License-Identifier: MIT */
/*
 * worker.c - one worker process: its own event loop (loop.h: epoll or
 * io_uring) over its own SO_REUSEPORT listener (the kernel spreads
 * connections, no thundering herd) or a listener shared with the other
 * workers (inherited from systemd or an upgrade, or a Unix socket), a fixed
 * table of connections, and the loop that expires deadlines, flushes the
 * log and handles signals. Once set up it tells the master on the ready
 * pipe (systemd's READY=1 and an upgrade's handover wait for every worker).
 *
 * A closed connection is freed at the end of the loop iteration, once the
 * backend no longer reads its memory: the same deferred free on both
 * backends, and a connection's slot is never reused while events of the
 * same batch may still name it.
 *
 * At the connection limit, or when the process runs out of descriptors, the
 * worker stops listening (the listener leaves the epoll set, or the io_uring
 * accept is cancelled), so a full worker sleeps instead of spinning; it
 * comes back when a connection closes (or after a second, for EMFILE caused
 * by something else).
 */
#include "process/worker.h"

#include "acme/acme.h"
#include "base/stats.h"
#include "core/bytes.h"
#include "event/conn.h"
#include "event/loop.h"
#include "event/transport.h"
#include "http/filecache.h"
#include "http1/h1_conn.h"
#include "http2/h2_conn.h"
#include "http3/h3.h"
#include "process/lockdown.h"
#include "sys/sys.h"
#include "testhook/testhook.h"
#include "tls/tls.h"

#include <errno.h>
#include <signal.h>

static const int worker_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};

/* The worker process's own state, around what every room sees (struct
 * worker, base/worker.h): the connection table's free and closing lists,
 * the drain's deadline, the accept pause, and the file cache's storage. */
struct worker_proc {
    struct worker w;
    struct conn *free_conns;
    struct conn *closing; /* closed, waiting for the backend to let go */
    uint32_t active;      /* connections open */
    int64_t drain_deadline_ms;
    int64_t accept_retry_ms; /* after EMFILE: when to try accepting again */
    bool accept_failure_logged;
    struct filecache cache;
    struct fc_entry scratch_entry;
};

static struct worker_proc *proc_of(struct worker *w)
{
    return (struct worker_proc *)(void *)((char *)w - offsetof(struct worker_proc, w));
}

static void update_clock(struct worker *w)
{
    w->now_ms = sys_now_ms();
    int64_t sec = sys_now_real();
    if (sec != w->now_sec) {
        w->now_sec = sec;
        date_format_imf(sec, w->date); /* the Date field, once a second */
    }
}

static void worker_set_listening(struct worker *w, bool on)
{
    if (w->listening == on || (w->listen_fd < 0 && w->tls_listen_fd < 0))
        return;
    w->loop->listen(w, on);
    w->listening = on;
}

static void accept_failed(struct worker *w, int err)
{
    struct worker_proc *p = proc_of(w);
    /* Out of descriptors or memory: stop accepting for a moment rather
     * than spin on a listener that stays readable. */
    if (!p->accept_failure_logged)
        log_error_errno("accept4 (new connections wait until a descriptor frees, or 1 s)", NULL,
                        err);
    p->accept_failure_logged = true; /* once until an accept succeeds again */
    worker_set_listening(w, false);
    p->accept_retry_ms = w->now_ms + 1000;
}

static bool worker_can_accept(struct worker *w)
{
    return !w->draining && (proc_of(w)->free_conns || w->next_unused < w->nconns);
}

static void accepted(struct worker *w, int fd, const struct sockaddr_storage *peer, bool tls)
{
    struct worker_proc *p = proc_of(w);
    /* While draining, a connection the kernel accepted for us (io_uring,
     * before the accept's cancellation) is served like any other (its
     * response says Connection: close): dropped, its client would fail
     * where the workers sharing the listener would have served it. */
    if (!p->free_conns && w->next_unused >= w->nconns) {
        sys_close(fd); /* accepted in the same batch as the last free slot */
        return;
    }
    if (!p->free_conns) {
        struct conn *fresh = &w->conns[w->next_unused++];
        fresh->state = CONN_FREE;
        fresh->next_free = NULL;
        fresh->proto = NULL;
        p->free_conns = fresh;
    }
    struct conn *c = p->free_conns;
    p->free_conns = c->next_free;
    p->accept_failure_logged = false;
    c->fd = fd;
    c->tp = tls ? &transport_tls : &transport_plain;
    if (peer)
        c->peer = *peer;
    else
        c->peer.ss_family = AF_UNSPEC;
    /* io_uring's multishot accept reports no address: ask now, while the
     * connection is there, when the access log will need it (after a
     * reset, getpeername has nothing left to say). */
    if (c->peer.ss_family == AF_UNSPEC && (w->log.fd >= 0 || w->set->ntrusted || w->srv->clients))
        sys_peer_addr(fd, &c->peer); /* also what --trusted-proxy, the counts decide on */
    sys_set_nodelay(fd);
    if (w->loop->conn_start(w, c) < 0) {
        sys_close(fd);
        c->next_free = p->free_conns;
        p->free_conns = c;
        return;
    }
    p->active++;
    stats_set(&w->stats->open_conns, p->active);
    conn_accepted(w, c, &h1_proto); /* HTTP/1 until ALPN h2 or the preface says otherwise */
    if (tls && tls_conn_start(w, c) < 0)
        conn_close(w, c, CLOSE_ERROR);
    if (!worker_can_accept(w))
        worker_set_listening(w, false); /* at --max-conns: back when one closes */
}

static void conn_closed(struct worker *w, struct conn *c)
{
    struct worker_proc *p = proc_of(w);
    c->next_free = p->closing;
    p->closing = c;
}

/* Frees the closed connections the backend has let go of: their slots are
 * free again, and the listener may take new connections. */
static void reap_closed(struct worker *w)
{
    struct worker_proc *p = proc_of(w);
    struct conn **pp = &p->closing;
    bool freed = false;
    while (*pp) {
        struct conn *c = *pp;
        if (w->loop->busy(w, c)) {
            pp = &c->next_free;
            continue;
        }
        *pp = c->next_free;
        if (c->tp && c->tp->release)
            c->tp->release(w, c);
        conn_free(w, c);
        c->next_free = p->free_conns;
        p->free_conns = c;
        p->active--;
        stats_set(&w->stats->open_conns, p->active);
        freed = true;
    }
    /* A freed connection also gives back a descriptor: try accepting again
     * at once rather than at the end of an out-of-descriptors pause. */
    if (freed && !w->draining) {
        p->accept_retry_ms = 0;
        worker_set_listening(w, true);
    }
}

static void start_drain(struct worker *w)
{
    stats_set(&w->stats->up, 0); /* /healthz: no longer accepting */
    worker_set_listening(w, false);
    w->draining = true;
    proc_of(w)->drain_deadline_ms = w->now_ms + (int64_t)w->set->grace * 1000;
    if (w->listen_fd >= 0)
        sys_close(w->listen_fd);
    if (w->tls_listen_fd >= 0)
        sys_close(w->tls_listen_fd);
    w->listen_fd = w->tls_listen_fd = -1;
    for (uint32_t i = 0; i < w->next_unused; i++)
        if (w->conns[i].state != CONN_FREE)
            conn_drain(w, &w->conns[i]);
    h3_drain(w);
}

static void on_signal(struct worker *w, int sig)
{
    if (sig == SIGHUP || sig == SIGUSR1) {
        access_log_reopen(&w->log);
        if (sig == SIGHUP) {
            tls_worker_reload(w); /* new handshakes only */
            h3_worker_reload(w);
        }
    } else if (w->draining)
        w->exit_now = true; /* a second TERM/INT: exit at once */
    else
        start_drain(w);
}

static void fire_timer(struct timer *t, void *ctx)
{
    struct worker *w = ctx;
    struct conn *c = (struct conn *)((char *)t - offsetof(struct conn, timer));
    conn_on_timeout(w, c);
}

static int loop_timeout(struct worker *w)
{
    if (tls_has_ready(w))
        return 0; /* bytes OpenSSL already holds are handed over first */
    int t = h3_timeout(w, timer_next_timeout(&w->wheel, w->now_ms));
    bool need_second = w->log.len || proc_of(w)->accept_retry_ms || w->draining;
    if (need_second && (t < 0 || t > 1000))
        t = w->draining ? 250 : 1000;
    return t;
}

static void run_loop(struct worker *w)
{
    struct worker_proc *p = proc_of(w);
    for (;;) {
        w->loop->wait(w, loop_timeout(w));
        if (w->exit_now)
            return;
        tls_run_ready(w);
        timer_expire(&w->wheel, w->now_ms, fire_timer, w);
        h3_expire(w);
        reap_closed(w);
        access_log_tick(&w->log, w->now_ms);
        if (p->accept_retry_ms && w->now_ms >= p->accept_retry_ms) {
            p->accept_retry_ms = 0;
            if (!w->draining && worker_can_accept(w))
                worker_set_listening(w, true);
        }
        if (w->draining && ((p->active == 0 && h3_active(w) == 0 && !w->loop->accept_busy(w)) ||
                            w->now_ms >= p->drain_deadline_ms))
            return;
    }
}

/* This worker's block of the shared counters: the counters go on from where
 * a predecessor in the slot left them; the gauges start afresh. */
static void stats_start(struct worker *w)
{
    w->stats = &w->srv->stats->w[w->index];
    w->stats_base_hits = stats_get(&w->stats->cache_hits);
    w->stats_base_misses = stats_get(&w->stats->cache_misses);
    stats_set(&w->stats->open_conns, 0);
    stats_set(&w->stats->up, 1);
}

static const struct loop_events worker_events = {
    .accepted = accepted,
    .accept_failed = accept_failed,
    .signal = on_signal,
    .clock = update_clock,
    .closed = conn_closed,
    .datagrams = h3_readable,
    .datagram = h3_datagram,
};

static int worker_init(struct worker *w, const struct server *srv, unsigned index)
{
    struct worker_proc *p = proc_of(w);
    w->srv = srv;
    w->events = &worker_events;
    w->cache = &p->cache;
    w->scratch_entry = &p->scratch_entry;
    w->set = &srv->set;
    w->index = index;
    w->listen_fd = srv->listen_fds[index];
    w->tls_listen_fd = srv->tls ? srv->tls_listen_fds[index] : -1;
    w->udp_fd = srv->set.http3 ? srv->udp_fds[index] : -1;
    w->nconns = srv->set.max_conns;
    w->conns = sys_map((size_t)w->nconns * sizeof *w->conns);
    if (!w->conns || pool_init(&w->pool, w->nconns) < 0 || (srv->tls && tls_worker_init(w) < 0) ||
        h2_worker_init(w) < 0 || h3_worker_init(w) < 0) {
        log_error("worker: cannot reserve memory for the connection table");
        return -1;
    }
    /* Slots are handed out from the free list, then from the untouched
     * tail (next_unused), so a table sized for 20,000 connections costs
     * resident memory only for those that ever existed. */
    p->free_conns = NULL;
    w->next_unused = 0;
    int r = access_log_open(&w->log, srv->set.log, srv->set.log_json);
    if (r < 0) {
        log_error_errno("open the access log", srv->set.log, r);
        return -1;
    }
    /* One cache for every site: entries are keyed by their site's root. */
    const struct settings *cfg = &srv->set;
    struct fc_settings fcs = {
        .resolve = srv->resolve,
        .entries = cfg->cache_entries,
        .mem_bytes = (uint64_t)cfg->cache_size_mib << 20,
        .max_file = cfg->cache_max_file,
    };
    if (filecache_init(w->cache, &fcs) < 0) {
        log_error("worker: cannot reserve memory for the file cache");
        return -1;
    }
    w->loop = srv->loop;
    w->epfd = -1;
    w->sigfd = sys_signalfd(worker_signals, ARRAY_LEN(worker_signals));
    if (w->sigfd < 0 || (r = w->loop->init(w)) < 0) {
        log_error_errno("worker: set up the event loop", w->loop->name,
                        w->sigfd < 0 ? w->sigfd : r);
        return -1;
    }
    if (sys_random(w->boundary_seed, sizeof w->boundary_seed) < 0)
        w->boundary_seed[0] = (uint64_t)sys_now_ms() ^ ((uint64_t)sys_getpid() << 32);
    update_clock(w);
    timer_wheel_init(&w->wheel, w->now_ms);
    /* The ACME challenge table (issue 35) is read here, never written: the
     * mapping becomes read-only, for good once seccomp allows no mprotect. */
    if (srv->acme && (r = acme_shared_readonly(srv->acme)) < 0) {
        log_error_errno("worker: make the ACME challenge table read-only", NULL, r);
        return -1;
    }
    /* Every descriptor and mapping is in place: from here the worker only
     * serves, as --user, confined (lockdown.h). */
    testhook_worker_setup();
    if (lockdown_worker(w) < 0)
        return -1;
    worker_set_listening(w, true);
    stats_start(w);
    return 0;
}

/* "worker 0 (pid 12) closed connections: peer=3 error=0 ..." on the error
 * log, so an operator (and the tests) can see why connections ended. */
static void report_closes(const struct worker *w)
{
    char line[512];
    struct buf b = buf_make(line, sizeof line - 1);
    buf_put_cstr(&b, "worker ");
    buf_put_u64(&b, w->index);
    buf_put_cstr(&b, " (pid ");
    buf_put_u64(&b, (uint64_t)sys_getpid());
    buf_put_cstr(&b, ") closed connections:");
    for (unsigned i = 0; i < CLOSE_REASONS; i++) {
        buf_put_char(&b, ' ');
        buf_put_cstr(&b, close_reason_name((enum close_reason)i));
        buf_put_char(&b, '=');
        buf_put_u64(&b, w->closes[i]);
    }
    line[b.full ? 0 : b.len] = '\0';
    log_error(line);
}

/* Tells the master this worker serves (its pid, one atomic pipe write):
 * readiness for systemd, and the moment an upgrade hands over. A pipe,
 * not a signal, because a worker that dropped to --user may not signal a
 * master that is root. */
static void report_ready(const struct server *srv)
{
    if (srv->ready_pipe[1] < 0)
        return;
    int32_t pid = sys_getpid();
    sys_write(srv->ready_pipe[1], &pid, sizeof pid);
    sys_close(srv->ready_pipe[1]);
}

int worker_run(const struct server *srv, unsigned index)
{
    /* The master holds the other workers' listeners; this one needs only its
     * own. If the master dies, so do we (no orphaned workers): the request
     * is checked against a master that died before it was made. */
    for (unsigned i = 0; i < srv->nlisten; i++) {
        if (srv->listen_fds[i] >= 0 && srv->listen_fds[i] != srv->listen_fds[index])
            sys_close(srv->listen_fds[i]); /* shared ones repeat */
        if (srv->tls && srv->tls_listen_fds[i] >= 0 &&
            srv->tls_listen_fds[i] != srv->tls_listen_fds[index])
            sys_close(srv->tls_listen_fds[i]);
        if (srv->set.http3 && i != index && srv->udp_fds[i] >= 0)
            sys_close(srv->udp_fds[i]); /* the master keeps the group whole (h3_udp.c) */
    }
    if (srv->status_fd >= 0)
        sys_close(srv->status_fd); /* the status process's alone */
    if (H3_BUILT && srv->h3_map_fd >= 0)
        sys_close(srv->h3_map_fd); /* the master's, for an upgrade */
    if (srv->ready_pipe[0] >= 0)
        sys_close(srv->ready_pipe[0]);
    sys_die_with_parent(SIGTERM);
    if (sys_getppid() != srv->master_pid)
        return 1;
    struct worker_proc *p = sys_map(sizeof *p);
    if (!p)
        return 1;
    struct worker *w = &p->w;
    if (worker_init(w, srv, index) < 0)
        return 1;
    report_ready(srv);
    run_loop(w);
    access_log_flush(&w->log);
    tls_worker_exit(w);
    h2_worker_exit(w);
    if (!w->set->quiet) {
        report_closes(w);
        tls_worker_report(w);
        h3_worker_report(w);
    }
    h3_worker_exit(w);
    if (w->loop->exit)
        w->loop->exit(w);
    return 0;
}

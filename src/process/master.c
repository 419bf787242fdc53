/* SPDX-License-Identifier: MIT */
/*
 * master.c - the supervising process: forks one worker per listener,
 * restarts a worker that dies (and says so in the error log), reopens the
 * log for the workers on HUP/USR1, and runs the graceful stop: on TERM/INT it
 * closes its copies of the listeners (so new connections are refused once
 * the workers close theirs), asks the workers to drain, and waits up to
 * --grace seconds; a second TERM/INT, or the end of the grace period, kills
 * them.
 *
 * A worker that dies is replaced at once, unless it died soon after it
 * started more than once in a row: then the delay doubles each time (1 s up
 * to 30 s), so a worker that cannot start does not spin. Replaced at once,
 * the new worker takes over the dead one's listener and the connections
 * queued on it. Replaced later, the listener is closed at once and a fresh
 * one opened for the replacement: with SO_REUSEPORT the kernel hashes each
 * new connection to one listener of the group, and one nobody accepts on
 * would hold its share of clients for the whole delay. Closed, it leaves
 * the group: new connections go to the live workers (or are refused when
 * there are none), and those already queued on it are reset, not left
 * hanging.
 *
 * Where the workers share listeners (inherited from systemd or an upgrade,
 * or a Unix socket: srv->listen_shared), a replacement simply takes the
 * shared socket again; it is never closed or reopened, as the other
 * workers keep accepting on it.
 *
 * systemd (sd.h): READY=1 once every worker reported on the ready pipe,
 * RELOADING=1 then READY=1 around a log reopen, STOPPING=1 at a stop.
 * SIGUSR2 is the zero-downtime upgrade (upgrade.c, docs/DESIGN.md §8): a
 * child executes the binary now at srv->exe_path on our listeners; once
 * its workers serve it sends us SIGTERM, and we stop as on any TERM, but
 * leave the pidfile and the Unix socket to it and say no STOPPING=1.
 *
 * Signals are blocked here and taken synchronously with sigtimedwait, so no
 * handler and no global flag is needed.
 */
#include "process/master.h"

#include "acme/acme.h"
#include "base/clients.h"
#include "base/log.h"
#include "base/stats.h"
#include "core/bytes.h"
#include "core/respawn.h"
#include "process/status.h"
#include "process/upgrade.h"
#include "process/worker.h"
#include "sys/sd.h"
#include "sys/sys.h"
#include "tls/tls.h"

#include <errno.h>
#include <signal.h>

/* SIGIO: a worker wrote on the ready pipe; SIGUSR2: upgrade. */
static const int master_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGCHLD, SIGUSR2, SIGIO};

struct slot {
    int pid;            /* 0: not running */
    int64_t started;    /* ms */
    int64_t restart_at; /* ms; 0: none scheduled */
    int32_t backoff;    /* respawn_delay()'s state */
    bool ready;         /* this pid reported on the ready pipe */
};

struct master {
    struct server *srv;
    struct slot slots[SETTINGS_WORKERS_MAX];
    bool stopping;
    int64_t kill_at;
    int status_pid;            /* the --status process; 0: none running */
    int64_t status_restart_at; /* ms; 0: none scheduled */
    bool status_stop_sent;
    int acme_pid;            /* the ACME process (issue 35); 0: none running */
    int64_t acme_restart_at; /* ms; 0: none scheduled */
    int64_t acme_backoff;    /* ms: the delay after its next death */
    bool announced;          /* READY=1 was sent */
    struct upgrade up;       /* SIGUSR2 (upgrade.c) */
};

/* ---- the --status process (status.c): started after the workers, restarted
 * a second after it dies, stopped once the workers are gone ---------------- */

static void start_status(struct master *m)
{
    m->status_restart_at = 0;
    if (m->srv->status_fd < 0)
        return;
    int pid = sys_fork();
    if (pid == 0)
        sys_exit(status_run(m->srv));
    if (pid < 0) {
        log_error_errno("start the status process", NULL, pid);
        m->status_restart_at = sys_now_ms() + 1000;
        return;
    }
    m->status_pid = pid;
}

/* True when pid was the status process (then handled). */
static bool status_died(struct master *m, int pid)
{
    if (pid != m->status_pid)
        return false;
    m->status_pid = 0;
    if (!m->stopping) {
        log_error("the status process died; starting a new one in 1 s");
        m->status_restart_at = sys_now_ms() + 1000;
    }
    return true;
}

/* ---- the ACME process (issue 35, src/acme/): started after the workers,
 * restarted after a delay doubling from 1 s to a minute when it dies,
 * stopped at once when the server stops (it serves no one) ------------- */

static void start_acme(struct master *m)
{
    m->acme_restart_at = 0;
    if (!ACME_BUILT || !m->srv->acme)
        return; /* pith-tiny: none of this is built */
    int pid = sys_fork();
    if (pid == 0) {
        /* The ACME process serves no TLS: it keeps none of the contexts'
         * keys (it makes its own, which only it holds). */
        tls_server_forget(m->srv->tls);
        sys_exit(acme_run(m->srv));
    }
    if (pid < 0) {
        log_error_errno("start the ACME process", NULL, pid);
        m->acme_restart_at = sys_now_ms() + 1000;
        return;
    }
    m->acme_pid = pid;
}

static bool acme_died(struct master *m, int pid, int status)
{
    if (!ACME_BUILT || pid != m->acme_pid)
        return false;
    m->acme_pid = 0;
    if (!m->stopping) {
        int st = sys_exit_status(status);
        m->acme_backoff = m->acme_backoff ? m->acme_backoff * 2 : 1000;
        if (m->acme_backoff > 60000)
            m->acme_backoff = 60000;
        char line[160];
        struct buf b = buf_make(line, sizeof line - 1);
        buf_put_cstr(&b, st < 0 ? "the ACME process was killed by signal "
                                : "the ACME process exited with status ");
        buf_put_u64(&b, (uint64_t)(st < 0 ? -st : st));
        buf_put_cstr(&b, "; starting a new one in ");
        buf_put_u64(&b, (uint64_t)m->acme_backoff / 1000);
        buf_put_cstr(&b, " s");
        line[b.full ? 0 : b.len] = '\0';
        log_error(line);
        m->acme_restart_at = sys_now_ms() + m->acme_backoff;
    }
    return true;
}

/* A fresh listener in the reuseport group of the others, into *fd. */
static int reopen_one(const struct sockaddr_storage *addr, socklen_t len, int *fd)
{
    if (*fd >= 0)
        return 0;
    int r = sys_listen_tcp(addr, len, 4096, true);
    if (r < 0) {
        log_error_errno("listen again for a new worker", NULL, r);
        return r;
    }
    *fd = r;
    return 0;
}

/* Worker i's listeners: plain (unless --tls-only) and TLS (with HTTPS). */
static int reopen_listener(struct master *m, unsigned i)
{
    struct server *srv = m->srv;
    if (srv->listen_shared)
        return 0; /* inherited: the other workers accept on them */
    int r = 0;
    if (!srv->set.tls_only)
        r = reopen_one(&srv->listen_addr, srv->listen_len, &srv->listen_fds[i]);
    if (!r && srv->tls)
        r = reopen_one(&srv->tls_listen_addr, srv->tls_listen_len, &srv->tls_listen_fds[i]);
    return r;
}

static int start_worker(struct master *m, unsigned i)
{
    struct slot *s = &m->slots[i];
    int pid = reopen_listener(m, i);
    if (pid == 0)
        pid = sys_fork();
    if (pid < 0) {
        log_error_errno("start a worker", NULL, pid);
        s->restart_at = sys_now_ms() + RESPAWN_FIRST_MS;
        return pid;
    }
    if (pid == 0)
        sys_exit(worker_run(m->srv, i));
    s->pid = pid;
    s->ready = false;
    s->started = sys_now_ms();
    s->restart_at = 0;
    return 0;
}

/* "worker 0 (pid 12) was killed by signal 11; starting a new one in 2 s" */
static void report_exit(unsigned i, int pid, int status, int64_t delay_ms)
{
    char line[160];
    struct buf b = buf_make(line, sizeof line - 1);
    buf_put_cstr(&b, "worker ");
    buf_put_u64(&b, i);
    buf_put_cstr(&b, " (pid ");
    buf_put_u64(&b, (uint64_t)pid);
    int st = sys_exit_status(status);
    buf_put_cstr(&b, st < 0 ? ") was killed by signal " : ") exited with status ");
    buf_put_u64(&b, (uint64_t)(st < 0 ? -st : st));
    buf_put_cstr(&b, "; starting a new one in ");
    buf_put_u64(&b, (uint64_t)delay_ms / 1000); /* 0..30 s; unsigned: no libgcc call */
    buf_put_cstr(&b, " s");
    line[b.full ? 0 : b.len] = '\0';
    log_error(line);
}

static void close_listener(struct master *m, unsigned i)
{
    if (m->srv->listen_shared)
        return; /* the other workers accept on it */
    if (m->srv->listen_fds[i] >= 0) {
        sys_close(m->srv->listen_fds[i]);
        m->srv->listen_fds[i] = -1;
    }
    if (m->srv->tls && m->srv->tls_listen_fds[i] >= 0) {
        sys_close(m->srv->tls_listen_fds[i]);
        m->srv->tls_listen_fds[i] = -1;
    }
}

static void worker_died(struct master *m, unsigned i, int pid, int status)
{
    struct slot *s = &m->slots[i];
    s->pid = 0;
    /* Its connections are gone; it can no longer say so itself. */
    stats_set(&m->srv->stats->w[i].open_conns, 0);
    stats_set(&m->srv->stats->w[i].h3_open, 0);
    stats_set(&m->srv->stats->w[i].up, 0);
    if (m->srv->clients)
        clients_reset(m->srv->clients, i); /* nor count for their clients */
    if (m->stopping)
        return;
    stats_add(&m->srv->stats->restarts, 1);
    int64_t now = sys_now_ms();
    int64_t delay = respawn_delay(&s->backoff, now - s->started);
    s->restart_at = now + delay;
    /* Out of the group before the line says so: whoever reads "starting a
     * new one in 4 s" may count on new connections going to the live
     * workers, not on being queued here and reset a moment later. */
    if (delay != 0)
        close_listener(m, i); /* nobody accepts on it for a while */
    report_exit(i, pid, status, delay);
    if (delay == 0)
        start_worker(m, i); /* takes over the listener and its queue */
}

static void reap(struct master *m)
{
    int status, pid;
    while ((pid = sys_waitpid_any(&status)) > 0) {
        if (pid == m->up.pid)
            upgrade_child_exited(&m->up, m->srv, status);
        if (status_died(m, pid) || acme_died(m, pid, status))
            continue;
        for (unsigned i = 0; i < m->srv->nlisten; i++)
            if (m->slots[i].pid == pid)
                worker_died(m, i, pid, status);
    }
}

static void signal_workers(struct master *m, int sig)
{
    for (unsigned i = 0; i < m->srv->nlisten; i++)
        if (m->slots[i].pid > 0)
            sys_kill(m->slots[i].pid, sig);
}

static bool any_running(const struct master *m)
{
    for (unsigned i = 0; i < m->srv->nlisten; i++)
        if (m->slots[i].pid > 0)
            return true;
    return false;
}

/* Sends msg to systemd's NOTIFY_SOCKET, if any; a failure is reported once
 * per message and changes nothing else. */
static void notify(const char *msg)
{
    int r = sd_notify_send(msg);
    if (r < 0)
        log_error_errno("notify systemd (NOTIFY_SOCKET)", msg, r);
}

/* Closes fds[0..n), each descriptor once (shared ones repeat), and marks
 * them -1. */
static void close_all(int *fds, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        int fd = fds[i];
        for (unsigned j = i; fd >= 0 && j < n; j++)
            if (fds[j] == fd)
                fds[j] = -1;
        if (fd >= 0)
            sys_close(fd);
    }
}

static void begin_stop(struct master *m)
{
    m->stopping = true;
    stats_set(&m->srv->stats->draining, 1); /* /healthz answers 503 from now */
    /* The new master of an upgrade is the service now: a STOPPING=1 from
     * us would stop it. */
    if (!m->up.handed_over)
        notify("STOPPING=1\nSTATUS=stopping: finishing the responses in flight");
    /* ... and its status process answers on the status listener it
     * inherited; ours would say 503 beside it until our workers are done. */
    if (m->up.handed_over && m->status_pid > 0 && !m->status_stop_sent) {
        sys_kill(m->status_pid, SIGTERM);
        m->status_stop_sent = true;
    }
    if (m->acme_pid > 0)
        sys_kill(m->acme_pid, SIGTERM); /* an order in flight is taken up by the next start */
    /* Our copies of the listeners would keep the ports open (connections
     * queued but never accepted); closing them lets the kernel refuse.
     * Shared ones repeat in listen_fds: each is closed once. */
    close_all(m->srv->listen_fds, m->srv->nlisten);
    if (m->srv->tls)
        close_all(m->srv->tls_listen_fds, m->srv->nlisten);
    signal_workers(m, SIGTERM);
    m->kill_at = sys_now_ms() + (int64_t)m->srv->set.grace * 1000 + 1000;
}

/* After logrotate: the workers reopen the log by its name, as --user. The
 * file a rotation left (or none) may belong to root, so the master, still
 * root, opens (creating) it first and gives it to the workers' user, as
 * nginx does. */
static void prepare_log_reopen(struct master *m)
{
    const struct server *srv = m->srv;
    const char *path = srv->set.log;
    if (!path || (path[0] == '-' && path[1] == '\0'))
        return;
    /* Created here in any case: a sandboxed worker may write files in the
     * log's directory but not create them (Landlock, docs/DESIGN.md). */
    int fd = sys_open_log(path);
    if (fd < 0) {
        log_error_errno("reopen the access log", path, fd);
        return;
    }
    int r = srv->log_chown ? sys_fchown(fd, srv->log_uid, srv->log_gid) : 0;
    if (r < 0)
        log_error_errno("give the access log to --user", path, r);
    sys_close(fd);
}

/* HUP (without --config) and USR1: the log reopened; HUP also reloads the
 * certificates and keys. */
static void reopen(struct master *m, int sig)
{
    /* Before READY=1, a reload says nothing: READY=1 comes anyway. */
    if (sig == SIGHUP && m->announced)
        notify("RELOADING=1\nSTATUS=reopening the access log");
    prepare_log_reopen(m);
    /* HUP: the master (which keeps its privileges) re-reads the
     * certificates and keys; the workers build from what it read. */
    if (sig == SIGHUP && m->srv->tls)
        tls_server_reload(m->srv->tls, &m->srv->set);
    signal_workers(m, sig);
    if (sig == SIGHUP && m->announced)
        notify("READY=1\nSTATUS=serving");
}

/* SIGHUP with --config (issue 22): the configuration is read again by a new
 * master, started on our listeners exactly as a SIGUSR2 upgrade starts one
 * (the binary at the same path): it checks everything as at any start, and
 * once its workers serve it sends us TERM and we drain. A file it refuses
 * makes it exit before that, saying why on the error log it inherited, and
 * we keep serving as we were (upgrade_child_exited). The log is reopened
 * meanwhile, as HUP always does, for logrotate. systemd sees RELOADING=1,
 * then the new master's MAINPID= and READY=1, or our READY=1 after a
 * refused file. */
static void reload(struct master *m)
{
    if (m->announced && m->up.pid == 0 && !m->stopping)
        notify("RELOADING=1\nSTATUS=reloading the configuration");
    prepare_log_reopen(m);
    signal_workers(m, SIGUSR1);
    upgrade_start(&m->up, m->srv, m->stopping, true);
}

static void on_signal(struct master *m, int sig)
{
    switch (sig) {
    case SIGTERM:
    case SIGINT:
        if (m->stopping) {
            signal_workers(m, SIGKILL); /* the second signal: now */
        } else {
            /* During an upgrade, TERM comes from the new master once it
             * serves (or from an operator who chose the new one). */
            upgrade_take_over(&m->up, m->srv);
            begin_stop(m);
        }
        break;
    case SIGHUP:
        if (m->srv->set.config_path)
            reload(m);
        else
            reopen(m, sig);
        break;
    case SIGUSR1: reopen(m, sig); break;
    case SIGUSR2: upgrade_start(&m->up, m->srv, m->stopping, false); break;
    default: break; /* SIGCHLD: reaped below */
    }
}

/* The ACME process stored a new certificate (issue 35): it goes live the
 * way SIGHUP's TLS reload takes, without dropping a connection: the master
 * reads the pairs, publishes them, and the workers build new contexts for
 * new handshakes while those in flight keep theirs. systemd hears of it as
 * of a HUP: RELOADING=1, then READY=1. */
static void acme_certs(struct master *m)
{
    if (!m->srv->tls)
        return;
    if (m->announced)
        notify("RELOADING=1\nSTATUS=a new certificate from the ACME CA: reloading the "
               "certificates");
    if (tls_server_reload(m->srv->tls, &m->srv->set) == 0) {
        prepare_log_reopen(m); /* the workers' HUP reopens the log too */
        signal_workers(m, SIGHUP);
    }
    if (m->announced)
        notify("READY=1\nSTATUS=serving");
}

/* Marks the workers that reported on the ready pipe; once all serve, tells
 * systemd (and the master this one replaces, which then drains). */
static void collect_ready(struct master *m)
{
    struct server *srv = m->srv;
    int32_t pid;
    bool certs = false;
    while (srv->ready_pipe[0] >= 0 &&
           sys_read(srv->ready_pipe[0], &pid, sizeof pid) == (ssize_t)sizeof pid)
        if (pid == ACME_READY_CERTS)
            certs = true;
        else
            for (unsigned i = 0; i < srv->nlisten; i++)
                if (m->slots[i].pid == pid)
                    m->slots[i].ready = true;
    if (ACME_BUILT && certs && !m->stopping)
        acme_certs(m);
    for (unsigned i = 0; i < srv->nlisten && srv->ready_pipe[0] < 0; i++)
        m->slots[i].ready = m->slots[i].pid > 0; /* no pipe: started counts */
    if (m->announced || m->stopping)
        return;
    for (unsigned i = 0; i < srv->nlisten; i++)
        if (!m->slots[i].ready)
            return;
    m->announced = true;
    char msg[PATH_MAX + 256];
    struct buf b = buf_make(msg, sizeof msg - 1);
    buf_put_cstr(&b, "READY=1\nMAINPID=");
    buf_put_u64(&b, (uint64_t)sys_getpid());
    buf_put_cstr(&b, "\nSTATUS=serving ");
    buf_put_cstr(&b, srv->sites[0].root_path);
    if (srv->set.nsites > 1) {
        buf_put_cstr(&b, " and ");
        buf_put_u64(&b, srv->set.nsites - 1);
        buf_put_cstr(&b, srv->set.nsites == 2 ? " more site" : " more sites");
    }
    buf_put_cstr(&b, " on ");
    buf_put_cstr(&b, srv->url);
    msg[b.full ? 0 : b.len] = '\0';
    notify(msg);
    if (srv->upgrade_from > 0 && sys_getppid() == srv->upgrade_from)
        sys_kill(srv->upgrade_from, SIGTERM); /* the old master drains and exits */
}

static void restart_due(struct master *m)
{
    int64_t now = sys_now_ms();
    for (unsigned i = 0; i < m->srv->nlisten; i++) {
        struct slot *s = &m->slots[i];
        if (s->pid == 0 && s->restart_at && now >= s->restart_at)
            start_worker(m, i);
    }
    if (m->status_restart_at && now >= m->status_restart_at)
        start_status(m);
    if (m->acme_restart_at && now >= m->acme_restart_at)
        start_acme(m);
}

/* How long to wait for a signal: until the next restart is due, at most
 * half a second (100 ms while stopping, to notice the end). */
static int wait_ms(const struct master *m)
{
    if (m->stopping)
        return 100;
    int64_t now = sys_now_ms(), t = 500;
    for (unsigned i = 0; i < m->srv->nlisten; i++)
        if (m->slots[i].pid == 0 && m->slots[i].restart_at)
            t = m->slots[i].restart_at - now < t ? m->slots[i].restart_at - now : t;
    return t < 1 ? 1 : (int)t;
}

int master_run(struct server *srv)
{
    struct master m = {.srv = srv};
    srv->master_pid = sys_getpid();
    if (sys_pipe_notify(srv->ready_pipe) < 0)
        srv->ready_pipe[0] = srv->ready_pipe[1] = -1; /* READY=1 once forked */
    for (unsigned i = 0; i < srv->nlisten; i++)
        start_worker(&m, i);
    start_status(&m);
    start_acme(&m);
    for (;;) {
        int sig = sys_sigwait(master_signals, ARRAY_LEN(master_signals), wait_ms(&m));
        if (sig > 0)
            on_signal(&m, sig);
        reap(&m);
        collect_ready(&m);
        if (m.stopping) {
            /* The status process answers 503 until the last worker is
             * gone, then goes too. */
            if (!any_running(&m) && m.status_pid > 0 && !m.status_stop_sent) {
                sys_kill(m.status_pid, SIGTERM);
                m.status_stop_sent = true;
            }
            if (!any_running(&m) && m.status_pid == 0 && m.acme_pid == 0)
                break;
            if (sys_now_ms() >= m.kill_at) {
                signal_workers(&m, SIGKILL);
                if (m.status_pid > 0)
                    sys_kill(m.status_pid, SIGKILL);
                if (m.acme_pid > 0)
                    sys_kill(m.acme_pid, SIGKILL);
            }
            continue;
        }
        restart_due(&m);
        if (srv->tls)
            tls_server_tick(srv->tls, sys_now_real()); /* ticket key rotation */
    }
    /* Handed over, the pidfile and the Unix socket are the new master's. */
    upgrade_cleanup(&m.up, srv);
    tls_server_free(srv->tls);
    return 0;
}

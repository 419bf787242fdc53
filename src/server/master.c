/* SPDX-License-Identifier: MIT */
/*
 * master.c - the supervising process: forks one worker per listener, restarts
 * a worker that dies (and says so in the error log), forwards HUP/USR1, and
 * runs the graceful stop: on TERM/INT it closes its copies of the listeners
 * (so new connections are refused once the workers close theirs), asks the
 * workers to drain, and waits up to --grace seconds; a second TERM/INT, or
 * the end of the grace period, kills them.
 *
 * Signals are blocked here and taken synchronously with sigtimedwait, so no
 * handler and no global flag is needed.
 */
#include "core/bytes.h"
#include "server/server.h"
#include "sys/sys.h"

#include <errno.h>
#include <signal.h>

static const int master_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGCHLD};

struct slot {
    int pid;            /* 0: not running */
    int64_t started;    /* ms */
    int64_t restart_at; /* ms; 0: none scheduled */
};

struct master {
    struct server *srv;
    struct slot slots[SERVER_MAX_LISTENERS];
    bool stopping;
    int64_t kill_at;
};

static int start_worker(struct master *m, unsigned i)
{
    int pid = sys_fork();
    if (pid < 0) {
        log_error_errno("fork a worker", NULL, pid);
        m->slots[i].restart_at = sys_now_ms() + 1000;
        return pid;
    }
    if (pid == 0)
        sys_exit(worker_run(m->srv, i));
    m->slots[i].pid = pid;
    m->slots[i].started = sys_now_ms();
    m->slots[i].restart_at = 0;
    return 0;
}

static void report_exit(unsigned i, int pid, int status)
{
    char a[64], b[64];
    struct buf x = buf_make(a, sizeof a - 1), y = buf_make(b, sizeof b - 1);
    buf_put_cstr(&x, "worker ");
    buf_put_u64(&x, i);
    buf_put_cstr(&x, " (pid ");
    buf_put_u64(&x, (uint64_t)pid);
    int st = sys_exit_status(status);
    buf_put_cstr(&y, st < 0 ? ") was killed by signal " : ") exited with status ");
    buf_put_u64(&y, (uint64_t)(st < 0 ? -st : st));
    a[x.len] = '\0';
    b[y.len] = '\0';
    log_error3(a, b, "; starting a new one");
}

static void reap(struct master *m)
{
    int status, pid;
    while ((pid = sys_waitpid_any(&status)) > 0) {
        for (unsigned i = 0; i < m->srv->nlisten; i++) {
            struct slot *s = &m->slots[i];
            if (s->pid != pid)
                continue;
            s->pid = 0;
            if (m->stopping)
                break;
            report_exit(i, pid, status);
            /* A worker that dies right after starting would otherwise be
             * restarted in a tight loop. */
            int64_t now = sys_now_ms();
            s->restart_at = now - s->started < 1000 ? now + 1000 : now;
        }
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

static void begin_stop(struct master *m)
{
    m->stopping = true;
    /* Our copies of the listeners would keep the ports open (connections
     * queued but never accepted); closing them lets the kernel refuse. */
    for (unsigned i = 0; i < m->srv->nlisten; i++) {
        sys_close(m->srv->listen_fds[i]);
        m->srv->listen_fds[i] = -1;
    }
    signal_workers(m, SIGTERM);
    m->kill_at = sys_now_ms() + (int64_t)m->srv->cfg.grace * 1000 + 1000;
}

static void on_signal(struct master *m, int sig)
{
    switch (sig) {
    case SIGTERM:
    case SIGINT:
        if (m->stopping)
            signal_workers(m, SIGKILL); /* the second signal: now */
        else
            begin_stop(m);
        break;
    case SIGHUP:
    case SIGUSR1: signal_workers(m, sig); break;
    default: break; /* SIGCHLD: reaped below */
    }
}

static void restart_due(struct master *m)
{
    int64_t now = sys_now_ms();
    for (unsigned i = 0; i < m->srv->nlisten; i++) {
        struct slot *s = &m->slots[i];
        if (s->pid == 0 && s->restart_at && now >= s->restart_at)
            start_worker(m, i);
    }
}

int master_run(struct server *srv)
{
    struct master m = {.srv = srv};
    for (unsigned i = 0; i < srv->nlisten; i++)
        start_worker(&m, i);
    for (;;) {
        int sig = sys_sigwait(master_signals, ARRAY_LEN(master_signals), m.stopping ? 100 : 500);
        if (sig > 0)
            on_signal(&m, sig);
        reap(&m);
        if (m.stopping) {
            if (!any_running(&m))
                break;
            if (sys_now_ms() >= m.kill_at)
                signal_workers(&m, SIGKILL);
            continue;
        }
        restart_due(&m);
    }
    if (srv->cfg.pidfile)
        sys_unlink(srv->cfg.pidfile);
    return 0;
}

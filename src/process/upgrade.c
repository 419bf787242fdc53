/* SPDX-License-Identifier: MIT */
/*
 * upgrade.c - the old master's side of a binary upgrade (see upgrade.h).
 * The new binary inherits the listening sockets, so none is ever closed:
 * connections queue on them while the new master starts, and are accepted
 * by whichever workers, old or new, take them. The pidfile follows nginx:
 * FILE.oldbin holds the old master's pid while the new one writes FILE.
 */
#include "process/upgrade.h"

#include "base/log.h"
#include "core/bytes.h"
#include "http3/h3.h" /* H3_BUILT */
#include "sys/sd.h"
#include "sys/sys.h"

static void notify(const char *msg)
{
    int r = sd_notify_send(msg);
    if (r < 0)
        log_error_errno("notify systemd (NOTIFY_SOCKET)", msg, r);
}

/* Renames the pidfile to FILE.oldbin (aside) or back. */
static void pidfile_move(struct upgrade *u, const struct server *srv, bool aside)
{
    const char *pidfile = srv->set.pidfile;
    if (!pidfile)
        return;
    struct buf b = buf_make(u->oldbin, sizeof u->oldbin - 1);
    buf_put_cstr(&b, pidfile);
    buf_put_cstr(&b, ".oldbin");
    u->oldbin[b.full ? 0 : b.len] = '\0';
    int r = aside ? sys_rename(pidfile, u->oldbin) : sys_rename(u->oldbin, pidfile);
    if (r < 0)
        log_error_errno("upgrade: rename the pidfile", pidfile, r);
}

/* Appends the distinct descriptors of have[0..k) (shared ones repeat) to
 * fds[n..], named name; returns the new count. */
static unsigned collect_distinct(const int *have, unsigned k, const char *name, int *fds,
                                 const char **names, unsigned n)
{
    for (unsigned i = 0; i < k && n < SD_LISTEN_MAX; i++) {
        bool seen = have[i] < 0;
        for (unsigned j = 0; j < n && !seen; j++)
            seen = fds[j] == have[i];
        if (!seen) {
            fds[n] = have[i];
            names[n++] = name;
        }
    }
    return n;
}

/* The distinct listeners, plain and TLS, and the status one, with their
 * LISTEN_FDNAMES names. */
static unsigned collect_listeners(const struct server *srv, int *fds, const char **names)
{
    unsigned n = 0;
    n = collect_distinct(srv->listen_fds, srv->nlisten, "http", fds, names, n);
    if (srv->tls)
        n = collect_distinct(srv->tls_listen_fds, srv->nlisten, "https", fds, names, n);
    /* --status's listener is no SO_REUSEPORT socket: the new master could
     * not bind its port while this one holds it. */
    if (srv->status_fd >= 0 && n < SD_LISTEN_MAX) {
        fds[n] = srv->status_fd;
        names[n++] = "status";
    }
    return n;
}

void upgrade_start(struct upgrade *u, const struct server *srv, bool stopping, bool reload)
{
    int fds[SD_LISTEN_MAX];
    const char *names[SD_LISTEN_MAX];
    if (u->pid > 0 || stopping) {
        log_error(reload ? "HUP: no reload: a reload, an upgrade or a stop is under way"
                         : "upgrade: SIGUSR2 ignored: an upgrade or a stop is under way");
        return;
    }
    unsigned n = collect_listeners(srv, fds, names);
    char extra[96];
    struct buf b = buf_make(extra, sizeof extra - 1);
    buf_put_cstr(&b, "PITH_UPGRADE_FROM=");
    buf_put_u64(&b, (uint64_t)sys_getpid());
    if (reload)
        buf_put_cstr(&b, ",reload");
    if (!srv->listeners_own)
        buf_put_cstr(&b, ",systemd");
    if (H3_BUILT && srv->h3_map_fd >= 0) { /* HTTP/3's steering map, at 3 + n (h3_bpf.c) */
        buf_put_cstr(&b, ",h3map=");
        buf_put_u64(&b, SD_LISTEN_FDS_START + n);
        buf_put_char(&b, ':');
        buf_put_u64(&b, srv->h3_cid_base);
    }
    extra[b.len] = '\0';
    u->reload = reload;
    pidfile_move(u, srv, true);
    int pid = sys_fork();
    if (pid == 0) {
        int r =
            sd_exec_with_listeners(srv->exe_path, srv->argv, fds, names, n, srv->h3_map_fd, extra);
        log_error_errno("upgrade: execute the new binary", srv->exe_path, r);
        sys_exit(127);
    }
    if (pid < 0) {
        log_error_errno("upgrade: fork", NULL, pid);
        pidfile_move(u, srv, false);
        return;
    }
    u->pid = pid;
    if (reload) {
        log_error3("HUP: reading ", srv->set.config_path,
                   " again; new workers take over once they all serve");
        notify("STATUS=reloading: a new master reads the configuration");
    } else {
        notify("STATUS=upgrading: the new binary starts on the same listeners");
    }
}

void upgrade_child_exited(struct upgrade *u, const struct server *srv, int status)
{
    char line[160];
    struct buf b = buf_make(line, sizeof line - 1);
    int st = sys_exit_status(status);
    buf_put_cstr(&b, u->reload ? "HUP: the new master (pid " : "upgrade: the new master (pid ");
    buf_put_u64(&b, (uint64_t)u->pid);
    buf_put_cstr(&b, st < 0 ? ") was killed by signal " : ") exited with status ");
    buf_put_u64(&b, (uint64_t)(st < 0 ? -st : st));
    buf_put_cstr(&b, u->handed_over ? ""
                     : u->reload    ? " before it served: the configuration above was not loaded; "
                                      "this one keeps serving the one it has"
                                    : " before it served; this one keeps serving");
    line[b.full ? 0 : b.len] = '\0';
    log_error(line);
    if (!u->handed_over) {
        pidfile_move(u, srv, false);
        /* A reload began with RELOADING=1: say it is over. */
        notify(u->reload ? "READY=1\nSTATUS=serving (the reload failed; see the error log)"
                         : "STATUS=serving (the upgrade failed; see the error log)");
    }
    u->pid = 0;
}

/* "upgrade: pid 4242 serves now; pid 4200 finishes its responses and exits" */
bool upgrade_take_over(struct upgrade *u, const struct server *srv)
{
    u->handed_over = u->pid > 0;
    if (!u->handed_over || srv->set.quiet)
        return u->handed_over;
    char line[160];
    struct buf b = buf_make(line, sizeof line - 1);
    buf_put_cstr(&b, u->reload ? "HUP: pid " : "upgrade: pid ");
    buf_put_u64(&b, (uint64_t)u->pid);
    buf_put_cstr(&b, u->reload ? " serves the new configuration now; pid " : " serves now; pid ");
    buf_put_u64(&b, (uint64_t)sys_getpid());
    buf_put_cstr(&b, " finishes its responses and exits");
    line[b.full ? 0 : b.len] = '\0';
    log_error(line);
    return true;
}

void upgrade_cleanup(const struct upgrade *u, const struct server *srv)
{
    if (u->handed_over && srv->set.pidfile)
        sys_unlink(u->oldbin);
    else if (srv->set.pidfile)
        sys_unlink(srv->set.pidfile);
    if (!u->handed_over && srv->unix_path[0])
        sys_unlink(srv->unix_path);
}

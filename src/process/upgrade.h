/* SPDX-License-Identifier: MIT */
/*
 * upgrade.h - the old master's side of a zero-downtime binary upgrade
 * (SIGUSR2, nginx's model; docs/DESIGN.md §8): starting the new binary on
 * our listeners, noticing it failed, and what a handed-over stop leaves to
 * the new master. The new master's side is socket activation (src/cli) plus
 * the SIGTERM master.c sends its parent once ready.
 */
#ifndef PITH_UPGRADE_H
#define PITH_UPGRADE_H

#include "base/server.h"

#include <limits.h>
#include <stdbool.h>

struct upgrade {
    int pid;                   /* the new master while the upgrade is under way; 0 */
    bool reload;               /* it reads --config again (SIGHUP), on this same binary's path */
    bool handed_over;          /* we stop because the new master serves */
    char oldbin[PATH_MAX + 8]; /* "<pidfile>.oldbin" while the new master owns the pidfile */
};

/* SIGUSR2, or SIGHUP with --config (reload: issue 22): moves the pidfile
 * aside and forks a child that executes srv->exe_path with srv->argv, the
 * listeners passed as LISTEN_FDS ("http", "https" for the TLS one, "status")
 * and PITH_UPGRADE_FROM=<our pid>[,reload][,systemd] (a reload; listeners
 * systemd made, which a reload keeps as they are; the others, pith's own,
 * a reload replaces as the file says). Logs and does
 * nothing more if one is under way already or `stopping`. */
void upgrade_start(struct upgrade *u, const struct server *srv, bool stopping, bool reload);

/* The new master (u->pid) exited with a waitpid status: before it took
 * over, the pidfile gets its name back and we keep serving. */
void upgrade_child_exited(struct upgrade *u, const struct server *srv, int status);

/* A TERM arrived: during an upgrade it is the handover (from the new
 * master, or an operator who chose it). Returns u->handed_over. */
bool upgrade_take_over(struct upgrade *u, const struct server *srv);

/* At the end of the master: the pidfile (or, handed over, FILE.oldbin) and
 * the Unix socket pith bound (unless handed over) are removed. */
void upgrade_cleanup(const struct upgrade *u, const struct server *srv);

#endif

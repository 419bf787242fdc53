/* SPDX-License-Identifier: MIT */
/*
 * status.h - the --status listener's process: GET /metrics (Prometheus text
 * format 0.0.4, the sum over every worker slot of the shared counters) and
 * GET /healthz (200 while the server accepts, 503 while it drains or has no
 * worker up). A small process of its own, forked and restarted by the
 * master; see status.c for why.
 */
#ifndef PITH_STATUS_H
#define PITH_STATUS_H

#include "base/server.h"

/* Runs the status process on srv->status_fd until SIGTERM or the master's
 * death; returns the exit code. */
int status_run(const struct server *srv);

/* The /metrics body for srv's counters into b (for status.c and tests of
 * the format). */
struct buf;
void status_metrics(const struct server *srv, struct buf *b);

#endif

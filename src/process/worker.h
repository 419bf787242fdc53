/* SPDX-License-Identifier: MIT */
/*
 * worker.h - one worker process: its setup, its loop, its exit. The state
 * every room reaches is struct worker (base/worker.h); what only the
 * worker process uses (the free and closing lists, the drain's deadline,
 * the accept pause) is worker.c's own.
 */
#ifndef PITH_WORKER_H
#define PITH_WORKER_H

#include "base/worker.h"

/* Runs worker `index` of srv until it drains or is told to exit; returns the
 * process's exit code. */
int worker_run(const struct server *srv, unsigned index);

#endif

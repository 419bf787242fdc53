/* SPDX-License-Identifier: MIT */
/*
 * master.h - the supervising process (see master.c).
 */
#ifndef PITH_MASTER_H
#define PITH_MASTER_H

#include "base/server.h"

/* Forks the workers and supervises them until a graceful stop ends; returns
 * the process's exit code. srv->listen_fds are replaced as workers die. */
int master_run(struct server *srv);

#endif

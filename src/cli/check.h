/* SPDX-License-Identifier: MIT */
/*
 * check.h - `pith --check`: the summary of what pith would do, printed on
 * stdout once main has validated everything (see start.c, check_run).
 */
#ifndef PITH_CHECK_H
#define PITH_CHECK_H

#include "base/server.h"
#include "cli/config.h"

/* Prints the plan: root, listener (listen: its description), workers and
 * loop, limits, caching, timeouts, files, user, mode. */
void check_print(const struct config *cfg, const struct server *s, const char *listen);

#endif

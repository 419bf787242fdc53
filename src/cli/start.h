/* SPDX-License-Identifier: MIT */
/*
 * start.h - the start-up both entry points share (main.c for the full build,
 * main_tiny.c for pith-tiny): the command line, the start-up checks, the
 * listeners, --check, the start line, --daemon, the pidfile, then the
 * master. What an entry point keeps for itself is its subcommands (`pith
 * compress`) and the choice of event loop (io_uring is the full build's).
 */
#ifndef PITH_START_H
#define PITH_START_H

#include "base/server.h"
#include "cli/config.h"

/* Sets s->loop as --io (cfg->io) asks and this build allows. Returns 0, or
 * 1 after one line on stderr when the loop asked for cannot run. It may
 * write a note to stderr (unless cfg->quiet) when it falls back. */
typedef int (*start_loop_chooser)(const struct config *cfg, struct server *s);

/* `pith [options] [ROOT]`, after the entry point has taken its subcommands:
 * parses argv (--help and --version go to stdout, a usage error to stderr),
 * then runs --check, or every start-up check, binds or takes the listeners,
 * prints the start line and hands over to the master, which returns when
 * the server stops. choose_loop picks the event loop before anything else
 * is checked. Every failure says why in one line on stderr. Returns the exit
 * status: 0 success, 1 runtime failure (missing root, busy port), 2 bad
 * usage (and --check's "not valid"). */
int start_main(int argc, char **argv, start_loop_chooser choose_loop);

#endif

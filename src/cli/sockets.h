/* SPDX-License-Identifier: MIT */
/*
 * sockets.h - the listeners pith does not bind from --addr/--port: sockets
 * inherited from systemd's socket activation or from the master of an
 * upgrade (LISTEN_FDS), and Unix sockets (--addr unix:PATH).
 */
#ifndef PITH_SOCKETS_H
#define PITH_SOCKETS_H

#include "base/server.h"
#include "cli/config.h"

#define SOCKETS_NOT_MINE (-1) /* nothing inherited and no unix:PATH: bind TCP */

/* Takes inherited sockets, or binds --addr unix:PATH, into s (listen_fds
 * for every worker, tls_listen_fds and tls_url for sockets named "https",
 * status_fd for one named "status", url, listen_shared). Returns
 * SOCKETS_NOT_MINE, 0, or an exit code (1 runtime, 2 usage) after one line
 * on stderr. */
int sockets_open(const struct config *cfg, struct server *s);

/* For --check: what sockets_open would do, without taking or binding
 * anything. Writes a description into what[cap] ("" when not mine) and
 * returns 0 or an exit code after one line on stderr. */
int sockets_check(const struct config *cfg, char *what, size_t cap);

/* "unix:PATH" -> PATH, or NULL for anything else. */
const char *sockets_unix_path(const char *addr);

#endif

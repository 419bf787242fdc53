/* SPDX-License-Identifier: MIT */
/*
 * lockdown.h - the worker's sandbox policy (docs/DESIGN.md "Lockdown"):
 * what the master probes at start, what the start line says, and what each
 * worker restricts itself to once its setup is done: Landlock (read beneath
 * the root, write the access log's directory; no TCP bind or connect) and
 * a seccomp allow-list built from one table per event loop. The mechanisms
 * are src/sys/sandbox.c's; this file only decides.
 */
#ifndef PITH_LOCKDOWN_H
#define PITH_LOCKDOWN_H

#include <stdbool.h>
#include <stddef.h>

#include "sys/sandbox.h"

struct server;
struct worker;

/* Fills srv->landlock_abi and srv->seccomp_ok from the kernel (once, at
 * start, in the master). */
void lockdown_probe(struct server *srv);

/* The start line's words for the sandbox, e.g. "sandbox: Landlock ABI 7,
 * seccomp", "sandbox: seccomp (no Landlock: ...)", "no sandbox". */
void lockdown_describe(const struct server *srv, char *out, size_t cap);

/* Confines the calling worker: chroot and privilege drop (when asked),
 * then Landlock and seccomp (unless --no-sandbox). Every descriptor the
 * worker will use must be open already. 0, or -1 after logging why (the
 * worker then exits, and the master says so). */
int lockdown_worker(struct worker *w);

/* Confines the --status process once its loop is set up (it dropped
 * privileges itself): Landlock with no file allowed, and the epoll
 * worker's seccomp allow-list, a superset of its calls (accept4, recvfrom,
 * sendto, epoll, the signalfd read, close, shutdown, log writes). Nothing
 * with --no-sandbox. 0, or -1 after logging why. */
int lockdown_status(const struct server *srv);

#endif

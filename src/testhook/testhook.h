/* SPDX-License-Identifier: MIT */
/*
 * testhook.h - requests that only the test builds understand, to prove the
 * sandbox holds in every build from the outside (tests/test_sandbox.py):
 * pith-asan (-DPITH_ASAN=1), pith-testhook (the release objects) and
 * build/tiny-ARCH/pith-tiny-testhook (pith-tiny's; the aarch64 one for
 * tests/test_tiny_arm64_kernel.py). The Makefile links src/testhook/common.c
 * (reads the requests) with src/testhook/libc.c (the calls, through libc's
 * syscall()) into the first two and with src/testhook/raw.c (raw system
 * calls) into the third, and src/testhook/none.c (which recognises nothing)
 * into pith and pith-tiny, so the release binaries have no trace of them.
 */
#ifndef PITH_TESTHOOK_H
#define PITH_TESTHOOK_H

#include "core/core.h"

struct worker;
struct exchange;

/* Answers x and returns true when target is a test request:
 *   /.pith-test/forbidden/NAME     makes the system call NAME, one no
 *                                  allow-list has (getcwd, execve, socket,
 *                                  connect; ptrace but in pith-tiny):
 *                                  seccomp kills the worker with SIGSYS;
 *                                  200 if the call returned;
 *   /.pith-test/forbidden-syscall  the same for getcwd;
 *   /.pith-test/asan-report        reads past a stack array: ASan must
 *                                  report it from inside the sandbox;
 *   /.pith-test/heap               pith-asan: 200 with X-Heap-Bytes, the
 *                                  bytes the worker's heap holds by ASan's
 *                                  count (tests/test_h2_floods.py's memory
 *                                  bounds, where RSS counts the quarantine);
 *   /.pith-test/open-outside       opens /etc/passwd directly (not beneath
 *                                  the root): Landlock refuses, and the
 *                                  refusal is logged; 403, or 200 when the
 *                                  open worked (no Landlock).
 * The release build's version returns false. */
bool testhook_request(struct worker *w, struct exchange *x, struct span target);

/* The --status process's test requests (the forbidden calls and the open
 * outside the root above, not the ASan report): the status to answer, or
 * 0 for any other target (and always in the release build). */
int testhook_status_request(struct span target);

/* Called by each worker just before it confines itself, at the end of its
 * setup: with PITH_TEST_SETUP_DELAY_MS=N in the environment it waits N ms
 * there (at most 10 s), so a test can tell a READY=1 sent before the
 * workers serve from one sent after (tests/test_systemd_notify.py).
 * Nothing in the release build. */
void testhook_worker_setup(void);

#endif

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
 *
 * The hooks never answer or log themselves: they say what to answer (and
 * what to log) in a struct testhook_answer, and the server, which includes
 * this header, does it. So the hooks include nothing of the server (only
 * core and sys), and the server reaches them through this one header.
 */
#ifndef PITH_TESTHOOK_H
#define PITH_TESTHOOK_H

#include "core/core.h"
#include "sys/sandbox.h"

/* What a test request asks the server to answer, and to log. */
struct testhook_answer {
    int status;         /* the status to answer with */
    char heap[24];      /* pith-asan's /.pith-test/heap: X-Heap-Bytes' value; "" for none */
    const char *opened; /* /.pith-test/open-outside: the file it opened or tried; NULL */
    int open_err;       /* ... -errno when refused (logged as a failure), 0 when it opened */
};

/* True, with *a filled, when target is a test request:
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
bool testhook_request(struct span target, struct testhook_answer *a);

/* The --status process's test requests (the forbidden calls and the open
 * outside the root above, not the ASan report): true with *a filled, false
 * for any other target (and always in the release build). */
bool testhook_status_request(struct span target, struct testhook_answer *a);

/* The test build's extra allow-list (libc.c under ASan: what the ASan
 * runtime calls when it reports), empty in the release build. */
extern const struct lockdown_syscall testhook_syscalls[];
extern const size_t testhook_nsyscalls;

/* Called by each worker just before it confines itself, at the end of its
 * setup: with PITH_TEST_SETUP_DELAY_MS=N in the environment it waits N ms
 * there (at most 10 s), so a test can tell a READY=1 sent before the
 * workers serve from one sent after (tests/test_systemd_notify.py).
 * Nothing in the release build. */
void testhook_worker_setup(void);

#endif

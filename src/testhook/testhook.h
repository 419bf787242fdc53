/* SPDX-License-Identifier: MIT */
/*
 * testhook.h - requests that only the test builds understand, to prove the
 * sandbox holds: pith-asan (-DPITH_ASAN=1, tests/test_sandbox.py) and
 * pith-tiny-testhook (tests/test_tiny_arm64_kernel.py). The Makefile links
 * src/testhook/asan.c into pith-asan, src/testhook/raw.c (the first and
 * last request below, over raw system calls) into
 * build/tiny-ARCH/pith-tiny-testhook, and src/testhook/none.c (which
 * recognises nothing) into pith and pith-tiny, so the release binaries have
 * no trace of them.
 */
#ifndef PITH_TESTHOOK_H
#define PITH_TESTHOOK_H

#include "core/core.h"

struct worker;
struct exchange;

/* Answers x and returns true when target is a test request:
 *   /.pith-test/forbidden-syscall  makes a system call no allow-list
 *                                  has (getcwd): seccomp kills the worker;
 *   /.pith-test/asan-report        reads past a stack array: ASan must
 *                                  report it from inside the sandbox;
 *   /.pith-test/open-outside       opens /etc/passwd directly (not beneath
 *                                  the root): Landlock refuses, and the
 *                                  refusal is logged; 403, or 200 when the
 *                                  open worked (no Landlock).
 * The release build's version returns false. */
bool testhook_request(struct worker *w, struct exchange *x, struct span target);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * hooks.h - what each test build's hook file (libc.c for the libc builds,
 * raw.c for pith-tiny's) gives common.c, which reads the requests
 * (testhook.h) and answers them.
 */
#ifndef PITH_TESTHOOK_HOOKS_H
#define PITH_TESTHOOK_HOOKS_H

#include "testhook/testhook.h"

/* Makes the system call called name, one no allow-list has (getcwd,
 * execve, socket, connect, ptrace), with arguments that do no harm where
 * the filter lets it through after all; false for a name it does not
 * know. Under seccomp the process dies of SIGSYS inside. */
bool testhook_forbidden_call(struct span name);

/* Opens /etc/passwd directly (not beneath the root): 403 when refused
 * (Landlock), 200 when it opened, with what the server is to log in *a. */
void testhook_open_outside(struct testhook_answer *a);

/* A request only this build knows (pith-asan's /.pith-test/asan-report
 * and /.pith-test/heap): true with *a filled; false for any other. */
bool testhook_own_request(struct span target, struct testhook_answer *a);

#endif

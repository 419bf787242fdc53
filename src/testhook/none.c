/* SPDX-License-Identifier: MIT */
/*
 * none.c - the release build's test hook: no request is special (see
 * testhook.h), and no system call is added to the allow-lists.
 */
#include "testhook/testhook.h"

bool testhook_request(struct span target, struct testhook_answer *a)
{
    (void)target;
    (void)a;
    return false;
}

bool testhook_status_request(struct span target, struct testhook_answer *a)
{
    (void)target;
    (void)a;
    return false;
}

void testhook_worker_setup(void)
{
}

const struct lockdown_syscall testhook_syscalls[1] = {
    LOCKDOWN_ALLOW(-1, "none: a number no call has")};
const size_t testhook_nsyscalls = 0;

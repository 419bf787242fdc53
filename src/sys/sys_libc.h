/* SPDX-License-Identifier: MIT */
/*
 * sys_libc.h - what the four files that implement sys.h over glibc for the
 * full build share (sys_libc_files.c, sys_libc_net.c, sys_libc_proc.c,
 * sys_libc_users.c); included by nothing else. Each wrapper makes one call
 * and turns errno into a negative return; EINTR is returned to the caller
 * rather than retried, because the event loop wants to see signals. The
 * split by job is pith-tiny's (sys_raw_*.c), so a name is found in the
 * same job's file in either build.
 */
#ifndef PITH_SYS_LIBC_H
#define PITH_SYS_LIBC_H

#include <errno.h>

/* A libc call's result as sys.h returns it: r, or -errno where r < 0. */
static inline long ret(long r)
{
    return r < 0 ? -errno : r;
}

#endif

/* SPDX-License-Identifier: MIT */
/*
 * sys_raw.h - what the four files that implement sys.h over raw system
 * calls for pith-tiny share (sys_raw_files.c, sys_raw_net.c,
 * sys_raw_proc.c, sys_raw_users.c); included by nothing else. They keep
 * sys_libc_*.c's contract (n >= 0 or -errno, EINTR returned, never retried)
 * without a libc. Only calls that Linux 3.2 has are on the required path:
 * fstatat64 (not statx) on 32-bit ABIs, clock_gettime (not
 * clock_gettime64), *at() forms everywhere (aarch64 and riscv64 have no
 * open/stat/dup2), and openat2 and getrandom only where the kernel answers
 * (-ENOSYS falls back). File offsets are 64-bit on every ABI (O_LARGEFILE,
 * pread64, sendfile64), so a 32-bit build serves files above 2 GiB; times
 * are the ABI's time_t, so on 32-bit ABIs they end in January 2038
 * (docs/DESIGN.md, the tiny build).
 */
#ifndef PITH_SYS_RAW_H
#define PITH_SYS_RAW_H

#include "sys/arch/arch.h"

/* The size of the kernel's sigset, which rt_sigprocmask, rt_sigaction,
 * signalfd4 and epoll_pwait take as an argument. */
#define KSIGSET_BYTES (KSIGSET_BITS / 8)

#endif

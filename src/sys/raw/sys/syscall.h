/* SPDX-License-Identifier: MIT */
/*
 * sys/syscall.h for pith-tiny: the kernel's __NR_ names that lockdown.c's
 * allow-lists use, as this architecture's numbers from src/sys/arch/ (so
 * the same tables filter the raw build). Where pith-tiny calls the 64-bit
 * variant under another kernel name (fstatat64 for newfstatat, sendfile64,
 * mmap2, fstat64 on 32-bit ABIs), the name stands for that variant: the
 * filter must allow the call the binary makes.
 */
#ifndef PITH_RAW_SYS_SYSCALL_H
#define PITH_RAW_SYS_SYSCALL_H

#include "sys/arch/arch.h"

#define __NR_write           SYS_write
#define __NR_close           SYS_close
#define __NR_openat          SYS_openat
#define __NR_openat2         SYS_openat2
#define __NR_newfstatat      SYS_fstatat
#define __NR_fstat           SYS_fstat
#define __NR_statx           SYS_statx
#define __NR_dup3            SYS_dup3
#define __NR_readlinkat      SYS_readlinkat
#define __NR_getdents64      SYS_getdents64
#define __NR_lseek           SYS_lseek
#define __NR_pread64         SYS_pread64
#define __NR_sendfile        SYS_sendfile
#define __NR_setsockopt      SYS_setsockopt
#define __NR_getsockopt      SYS_getsockopt
#define __NR_getpeername     SYS_getpeername
#define __NR_shutdown        SYS_shutdown
#define __NR_clock_gettime   SYS_clock_gettime
#define __NR_gettimeofday    SYS_gettimeofday
#define __NR_getpid          SYS_getpid
#define __NR_getrandom       SYS_getrandom
#define __NR_exit_group      SYS_exit_group
#define __NR_restart_syscall SYS_restart_syscall
#define __NR_mmap            SYS_mmap
#define __NR_munmap          SYS_munmap
#define __NR_mremap          SYS_mremap
#define __NR_brk             SYS_brk
#define __NR_madvise         SYS_madvise
#define __NR_epoll_pwait     SYS_epoll_pwait
#define __NR_epoll_ctl       SYS_epoll_ctl
#define __NR_accept4         SYS_accept4
#define __NR_read            SYS_read
#define __NR_recvfrom        SYS_recvfrom
#define __NR_sendto          SYS_sendto
#define __NR_sendmsg         SYS_sendmsg
#define __NR_io_uring_enter  SYS_io_uring_enter
/* Not on every architecture (lockdown.c tests for them). */
#ifdef SYS_time
#define __NR_time SYS_time
#endif
#ifdef SYS_epoll_wait
#define __NR_epoll_wait SYS_epoll_wait
#endif

#endif

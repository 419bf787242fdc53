/* SPDX-License-Identifier: MIT */
/*
 * sandbox.h - the kernel's confinement mechanisms, as a worker uses them
 * once its setup is done: Landlock (Linux 5.13+: which files a process may
 * open, enforced in the VFS for every open the task makes, io_uring's
 * included), seccomp-bpf (which system calls it may make, checked on entry
 * to each one; io_uring operations never enter through it, see
 * loop_uring.c), no_new_privs, and chroot for kernels without Landlock.
 * Each function is a thin door to the kernel: policy (which paths, which
 * system calls) is the caller's (src/process/lockdown.c).
 */
#ifndef PITH_SANDBOX_H
#define PITH_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One allowed system call and why a worker needs it. The reasons are for
 * the reader (and a debugger): nothing prints them, so pith-tiny's tables
 * hold the numbers alone (its src/sys/raw/sys/syscall.h gives them), and
 * LOCKDOWN_ALLOW writes an entry either way. */
struct lockdown_syscall {
    int nr;
#ifndef PITH_TINY
    const char *why;
#endif
};
#ifdef PITH_TINY
#define LOCKDOWN_ALLOW(nr, why)                                                                    \
    {                                                                                              \
        nr                                                                                         \
    }
#else
#define LOCKDOWN_ALLOW(nr, why)                                                                    \
    {                                                                                              \
        nr, why                                                                                    \
    }
#endif

/* The Landlock ABI version the kernel offers (1, 2, ...), or -errno:
 * -ENOSYS (kernel built without it, or older than 5.13), -EOPNOTSUPP
 * (built in but not enabled at boot: lsm= lacks "landlock"). */
int sys_landlock_abi(void);

/* What a rule grants beneath a directory (or on a file). */
enum sys_landlock_access {
    SYS_LL_READ = 1,  /* open files for reading, list directories */
    SYS_LL_WRITE = 2, /* open existing files for writing (no create, no truncate) */
};

struct sys_landlock_rule {
    int fd; /* a directory (or file), any open mode, O_PATH included */
    unsigned access;
};

/* Restricts this process, for good, to the rules: every file system right
 * the ABI knows is handled (so denied unless a rule grants it), and from
 * ABI 4 on, binding and connecting TCP sockets too (no rule allows them),
 * and from ABI 6 on, signals and abstract Unix sockets outside the
 * domain. Sets no_new_privs. 0 or -errno. */
int sys_landlock_restrict(int abi, const struct sys_landlock_rule *rules, size_t n);

/* Whether seccomp filters with SECCOMP_RET_KILL_PROCESS can be installed
 * (Linux 4.14+, this architecture known): 0, or -errno / -ENOSYS. */
int sys_seccomp_probe(void);

/* Installs a filter that allows exactly the system calls nrs[0..n) of this
 * architecture and kills the whole process (SIGSYS) on any other, or on a
 * call made with another architecture's convention (x32, i386 on x86-64).
 * Sets no_new_privs. n <= 250. 0 or -errno. */
int sys_seccomp_allow_only(const int *nrs, size_t n);

/* chroot(dir) then chdir("/"): needs CAP_SYS_CHROOT. 0 or -errno. */
int sys_chroot(const char *dir);

/* Opens dir as an O_PATH directory descriptor (for a Landlock rule, or to
 * open names beneath it after a chroot). fd or -errno. */
int sys_open_path_dir(const char *dir);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * libc.c - the test hooks (see testhook.h) of the libc builds: linked into
 * pith-asan (-DPITH_ASAN=1) and pith-testhook (the release objects with
 * this file for none.c), never into pith. Under ASan it also adds the
 * system calls the ASan/UBSan runtime makes in a worker (to report an
 * error, which the tests must see rather than a SIGSYS) to the
 * allow-lists; pith-testhook adds none, so its filter is the release one.
 * It calls the kernel directly because that is the point: a compromised
 * worker would not go through src/sys.
 */
#include "testhook/testhook.h"

#include "core/bytes.h"
#include "sys/sys.h"
#include "testhook/hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef PITH_ASAN
/* The ASan runtime's (sanitizer/allocator_interface.h, which GCC 12 does
 * not install). */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

#define ALLOW(name, why) LOCKDOWN_ALLOW(__NR_##name, why)

#ifdef PITH_ASAN
const struct lockdown_syscall testhook_syscalls[] = {
#ifdef __NR_open
    ALLOW(open, "ASan: /proc/self/cmdline, /proc/self/maps for a report (its own raw open)"),
#endif
    ALLOW(read, "ASan: /proc/self/maps for a report (the io_uring loop has no read)"),
    ALLOW(ioctl, "ASan: isatty(2) (TCGETS) to choose colours for a report"),
    ALLOW(futex, "ASan: its internal locks under contention"),
    ALLOW(sched_yield, "ASan: spin locks"),
    ALLOW(gettid, "ASan: the thread's id in a report"),
    ALLOW(readlink, "ASan: /proc/self/exe for a report"),
    ALLOW(rt_sigprocmask, "ASan/UBSan: abort() on an error"),
    ALLOW(rt_sigaction, "ASan/UBSan: abort() on an error"),
    ALLOW(tgkill, "ASan/UBSan: abort() raises SIGABRT"),
    ALLOW(sigaltstack, "ASan: its signal stack"),
    ALLOW(prctl, "ASan: PR_GET_DUMPABLE and friends while reporting"),
    ALLOW(mprotect, "ASan: guard pages of its allocator"),
};
const size_t testhook_nsyscalls = ARRAY_LEN(testhook_syscalls);
#else
const struct lockdown_syscall testhook_syscalls[1] = {
    LOCKDOWN_ALLOW(-1, "pith-testhook: a number no call has")};
const size_t testhook_nsyscalls = 0;
#endif

bool testhook_forbidden_call(struct span name)
{
    char cwd[256];
    static char *const argv[] = {NULL};
    if (span_eq_cstr(name, "getcwd"))
        (void)syscall(__NR_getcwd, cwd, sizeof cwd);
    else if (span_eq_cstr(name, "execve"))
        (void)syscall(__NR_execve, "/nonexistent/pith-test", argv, argv);
    else if (span_eq_cstr(name, "socket")) {
        long fd = syscall(__NR_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0)
            close((int)fd);
    } else if (span_eq_cstr(name, "connect"))
        (void)syscall(__NR_connect, -1, NULL, 0);
    else if (span_eq_cstr(name, "ptrace"))
        (void)syscall(__NR_ptrace, PTRACE_PEEKDATA, 0, NULL, NULL);
    else
        return false;
    return true; /* seccomp: SIGSYS before this */
}

void testhook_open_outside(struct testhook_answer *a)
{
    /* PITH_TEST_OPEN_OUTSIDE names another file (issue 35: the ACME account
     * key, which no worker may read). */
    const char *path = sys_getenv("PITH_TEST_OPEN_OUTSIDE");
    if (!path)
        path = "/etc/passwd";
    int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    a->opened = path;
    if (fd < 0) {
        a->open_err = -errno;
        a->status = 403;
        return;
    }
    close(fd);
    a->status = 200;
}

bool testhook_own_request(struct span target, struct testhook_answer *a)
{
#ifdef PITH_ASAN
    if (span_eq_cstr(target, "/.pith-test/asan-report")) {
        /* A stack overflow ASan must report from inside the sandbox. */
        char small[8];
        char *volatile p = small; /* through a pointer: ASan's check, not UBSan's */
        size_t at = target.n;     /* > 8: past the end */
        small[0] = 0;
        a->status = 200 + p[at];
        return true;
    }
    if (span_eq_cstr(target, "/.pith-test/heap")) {
        /* The bytes malloc handed out and did not get back, by ASan's own
         * count: blocks in its quarantine and redzones are not in it. Under
         * ASan the worker's RSS grows with every block freed (the
         * quarantine), so this is what says how much it holds. */
        struct buf b = buf_make(a->heap, sizeof a->heap - 1);
        buf_put_u64(&b, __sanitizer_get_current_allocated_bytes());
        a->heap[b.len] = '\0';
        a->status = 200;
        return true;
    }
#endif
    (void)target;
    (void)a;
    return false;
}

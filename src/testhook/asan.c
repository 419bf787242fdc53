/* SPDX-License-Identifier: MIT */
/*
 * asan.c - the test build's hooks (see testhook.h), and the system calls
 * the ASan/UBSan runtime makes in a worker (to report an error, which the
 * tests must see rather than a SIGSYS), added to its allow-list. Linked
 * into pith-asan only; it calls the kernel directly because that is the
 * point: a compromised worker would not go through src/sys.
 */
#include "testhook/testhook.h"

#include "core/bytes.h"
#include "server/lockdown.h"
#include "server/log.h"
#include "server/reply.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ALLOW(name, why) LOCKDOWN_ALLOW(__NR_##name, why)

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

static void open_outside(struct worker *w, struct exchange *x)
{
    static const char path[] = "/etc/passwd";
    int fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        log_error_errno("test hook: open outside the root", path, -errno);
        reply_error(w, x, 403);
        return;
    }
    close(fd);
    log_error3("test hook: opened ", path, " outside the root");
    reply_small(w, x, 200, NULL, (struct span){0}, false);
}

bool testhook_request(struct worker *w, struct exchange *x, struct span target)
{
    if (span_eq_cstr(target, "/.pith-test/forbidden-syscall")) {
        char cwd[256];
        (void)syscall(__NR_getcwd, cwd, sizeof cwd); /* seccomp: SIGSYS here */
        reply_small(w, x, 200, NULL, (struct span){0}, false);
        return true;
    }
    if (span_eq_cstr(target, "/.pith-test/asan-report")) {
        /* A stack overflow ASan must report from inside the sandbox. */
        char small[8];
        char *volatile p = small; /* through a pointer: ASan's check, not UBSan's */
        size_t at = target.n;     /* > 8: past the end */
        small[0] = 0;
        reply_small(w, x, 200 + p[at], NULL, (struct span){0}, false);
        return true;
    }
    if (span_eq_cstr(target, "/.pith-test/open-outside")) {
        open_outside(w, x);
        return true;
    }
    return false;
}

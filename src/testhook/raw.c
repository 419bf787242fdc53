/* SPDX-License-Identifier: MIT */
/*
 * raw.c - the test hooks (hooks.h) for pith-tiny: linked with common.c
 * instead of none.c into build/tiny-ARCH/pith-tiny-testhook only, never
 * into pith-tiny, so the sandbox of the freestanding build is proven here
 * (tests/test_sandbox.py, build/tiny/pith-tiny-testhook) and on a kernel
 * of another architecture (tests/test_tiny_arm64_kernel.py boots one).
 * There is no sanitizer runtime, so no call is added to the allow-lists.
 * It calls the kernel directly (src/sys/arch/), as a compromised worker
 * would. src/sys/arch/ has no ptrace: the other four calls stand for it.
 */
#include "testhook/hooks.h"

#include "core/bytes.h"
#include "sys/arch/arch.h"

const struct lockdown_syscall testhook_syscalls[1] = {
    LOCKDOWN_ALLOW(-1, "raw: a number no call has")};
const size_t testhook_nsyscalls = 0;

bool testhook_forbidden_call(struct span name)
{
    char cwd[256];
    static const char *const argv[] = {0};
    if (span_eq_cstr(name, "getcwd"))
        (void)SC2(getcwd, cwd, sizeof cwd);
    else if (span_eq_cstr(name, "execve"))
        (void)SC3(execve, "/nonexistent/pith-test", argv, argv);
    else if (span_eq_cstr(name, "socket")) {
        long fd = SC3(socket, AF_INET, SOCK_STREAM, 0);
        if (fd >= 0)
            SC1(close, fd);
    } else if (span_eq_cstr(name, "connect"))
        (void)SC3(connect, -1, 0, 0);
    else
        return false;
    return true; /* seccomp: SIGSYS before this */
}

void testhook_open_outside(struct testhook_answer *a)
{
    static const char path[] = "/etc/passwd";
    long fd = SC4(openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
    a->opened = path;
    if (fd < 0) {
        a->open_err = (int)fd;
        a->status = 403;
        return;
    }
    SC1(close, fd);
    a->status = 200;
}

bool testhook_own_request(struct span target, struct testhook_answer *a)
{
    (void)target;
    (void)a;
    return false;
}

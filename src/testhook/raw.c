/* SPDX-License-Identifier: MIT */
/*
 * raw.c - the test hooks (see testhook.h) for pith-tiny: linked instead of
 * none.c into build/tiny-ARCH/pith-tiny-testhook only, never into
 * pith-tiny, so the sandbox can be proven on a kernel of another
 * architecture (tests/test_tiny_arm64_kernel.py boots one). The forbidden
 * system call and the open outside the root, as in asan.c; there is no
 * sanitizer runtime, so no call is added to the allow-lists. It calls the
 * kernel directly (src/sys/arch/), as a compromised worker would.
 */
#include "testhook/testhook.h"

#include "core/bytes.h"
#include "server/lockdown.h"
#include "server/log.h"
#include "server/reply.h"
#include "sys/arch/arch.h"

const struct lockdown_syscall testhook_syscalls[1] = {
    LOCKDOWN_ALLOW(-1, "raw: a number no call has")};
const size_t testhook_nsyscalls = 0;

static void open_outside(struct worker *w, struct exchange *x)
{
    static const char path[] = "/etc/passwd";
    long fd = SC4(openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        log_error_errno("test hook: open outside the root", path, (int)fd);
        reply_error(w, x, 403);
        return;
    }
    SC1(close, fd);
    log_error3("test hook: opened ", path, " outside the root");
    reply_small(w, x, 200, NULL, (struct span){0}, false);
}

bool testhook_request(struct worker *w, struct exchange *x, struct span target)
{
    if (span_eq_cstr(target, "/.pith-test/forbidden-syscall")) {
        char cwd[256];
        (void)SC2(getcwd, cwd, sizeof cwd); /* seccomp: SIGSYS here */
        reply_small(w, x, 200, NULL, (struct span){0}, false);
        return true;
    }
    if (span_eq_cstr(target, "/.pith-test/open-outside")) {
        open_outside(w, x);
        return true;
    }
    return false;
}

/* SPDX-License-Identifier: MIT */
/*
 * common.c - the test requests of testhook.h, read and answered here for
 * every test build (pith-asan, pith-testhook, pith-tiny-testhook); the
 * calls themselves are the build's own (hooks.h). Never linked into a
 * release binary (none.c stands in).
 */
#include "testhook/hooks.h"

#include "core/bytes.h"
#include "sys/sys.h"

static bool starts_with(struct span s, struct span prefix, struct span *rest)
{
    if (s.n < prefix.n || !mem_eq(s.p, prefix.p, prefix.n))
        return false;
    *rest = span_make(s.p + prefix.n, s.n - prefix.n);
    return true;
}

bool testhook_status_request(struct span target, struct testhook_answer *a)
{
    struct span name;
    *a = (struct testhook_answer){0};
    if (span_eq_cstr(target, "/.pith-test/open-outside")) {
        testhook_open_outside(a);
        return true;
    }
    if (span_eq_cstr(target, "/.pith-test/forbidden-syscall")) /* the first name of it */
        target = SPAN_LIT("/.pith-test/forbidden/getcwd");
    if (starts_with(target, SPAN_LIT("/.pith-test/forbidden/"), &name) &&
        testhook_forbidden_call(name)) {
        a->status = 200; /* it returned: the filter let it through */
        return true;
    }
    return false;
}

bool testhook_request(struct span target, struct testhook_answer *a)
{
    *a = (struct testhook_answer){0};
    return testhook_own_request(target, a) || testhook_status_request(target, a);
}

void testhook_worker_setup(void)
{
    const char *v = sys_getenv("PITH_TEST_SETUP_DELAY_MS");
    int64_t ms = 0;
    for (; v && *v >= '0' && *v <= '9' && ms < 10000; v++)
        ms = ms * 10 + (*v - '0');
    /* A busy wait: both builds have the clock, not every one a sleep. */
    int64_t until = sys_now_ms() + (ms < 10000 ? ms : 10000);
    while (sys_now_ms() < until) {
    }
}

/* SPDX-License-Identifier: MIT */
/*
 * common.c - the test requests of testhook.h, read and answered here for
 * every test build (pith-asan, pith-testhook, pith-tiny-testhook); the
 * calls themselves are the build's own (hooks.h). Never linked into a
 * release binary (none.c stands in).
 */
#include "testhook/hooks.h"

#include "core/bytes.h"
#include "server/reply.h"

static bool starts_with(struct span s, struct span prefix, struct span *rest)
{
    if (s.n < prefix.n || !mem_eq(s.p, prefix.p, prefix.n))
        return false;
    *rest = span_make(s.p + prefix.n, s.n - prefix.n);
    return true;
}

int testhook_status_request(struct span target)
{
    struct span name;
    if (span_eq_cstr(target, "/.pith-test/open-outside"))
        return testhook_open_outside();
    if (span_eq_cstr(target, "/.pith-test/forbidden-syscall")) /* the first name of it */
        target = SPAN_LIT("/.pith-test/forbidden/getcwd");
    if (starts_with(target, SPAN_LIT("/.pith-test/forbidden/"), &name) &&
        testhook_forbidden_call(name))
        return 200; /* it returned: the filter let it through */
    return 0;
}

bool testhook_request(struct worker *w, struct exchange *x, struct span target)
{
    if (testhook_own_request(w, x, target))
        return true;
    int status = testhook_status_request(target);
    if (status == 0)
        return false;
    if (status == 200)
        reply_small(w, x, 200, NULL, (struct span){0}, false);
    else
        reply_error(w, x, status);
    return true;
}

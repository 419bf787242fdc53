/* SPDX-License-Identifier: MIT */
/*
 * router.c - what main_router.c hands a worker (router.h): the settings,
 * the signal mask a worker waits with, the master's pid, and the one way
 * either says something on stderr.
 */
#include "router/router.h"

#include "core/bytes.h"
#include "sys/sys.h"

struct router_set router;
sigset_t router_unblocked;
int router_master_pid;

void router_say(const char *a, const char *b)
{
    char line[512];
    struct buf o = buf_make(line, sizeof line - 1);
    buf_put_cstr(&o, "pith: ");
    buf_put(&o, a, cstr_len(a) > 200 ? 200 : cstr_len(a));
    buf_put_cstr(&o, b);
    buf_put_char(&o, '\n');
    sys_write(2, line, o.len);
}

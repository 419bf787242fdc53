/* SPDX-License-Identifier: MIT */
/*
 * lockdown_tiny.c - lockdown.h for pith-tiny, which leaves the worker
 * sandbox out: its Landlock and seccomp policy (lockdown.c) names system
 * calls and libc's and OpenSSL's needs by the libc headers' numbers, and
 * pith-tiny has neither. What stays is what --user, --group and --chroot
 * ask for: a worker drops its privileges (into the chroot) before it
 * serves, as in the full build. The start line says "no sandbox".
 */
#include "server/lockdown.h"

#include "core/bytes.h"
#include "server/log.h"
#include "server/server.h"
#include "server/worker.h"
#include "sys/sys.h"

#include <errno.h>

void lockdown_probe(struct server *srv)
{
    srv->landlock_abi = -ENOSYS;
    srv->seccomp_err = -ENOSYS;
}

/* No parentheses or commas: see lockdown.c. */
void lockdown_describe(const struct server *srv, char *out, size_t cap)
{
    struct buf b = buf_make(out, cap - 1);
    buf_put_cstr(&b, "no sandbox in pith-tiny");
    if (srv->set.chroot_dir)
        buf_put_cstr(&b, " + chroot");
    out[b.full ? 0 : b.len] = '\0';
}

int lockdown_worker(struct worker *w)
{
    const struct settings *set = w->set;
    int r;
    if (set->user && (r = sys_drop_privileges(set->user, set->group, set->chroot_dir)) < 0) {
        log_error_errno("drop privileges to", set->user, r);
        return -1;
    }
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * lockdown.c - see lockdown.h. The allow-lists are tables, one per event
 * loop plus what both share, each system call with the reason a worker
 * makes it after setup (setup itself: memory reservation, the ring or
 * epoll instance, the signalfd, the log, happens before the filter). A
 * new feature that makes a new call in a worker adds one line to a table
 * here; forgetting it kills the worker with SIGSYS on first use, which
 * the test suite (run with the sandbox on) catches.
 */
#include "process/lockdown.h"

#include "base/log.h"
#include "base/server.h"
#include "core/bytes.h"
#include "event/loop.h"
#include "process/worker.h"
#include "sys/sandbox.h"
#include "sys/sys.h"
#include "testhook/testhook.h"

#include <errno.h>
#include <sys/syscall.h>

/* pith-tiny keeps the numbers and leaves the reasons out (lockdown.h). */
#define ALLOW(name, why) LOCKDOWN_ALLOW(__NR_##name, why)

/* Both loops. */
static const struct lockdown_syscall common[] = {
    ALLOW(write, "access log lines, error log lines on stderr"),
    ALLOW(close, "connections, files, directories"),
    ALLOW(openat, "the component walk beneath the root (kernels without openat2); the log reopen"),
    ALLOW(openat2, "files beneath the root (RESOLVE_BENEATH)"),
    ALLOW(newfstatat, "fstat/fstatat of files beneath the root, cache revalidation"),
    ALLOW(fstat, "fstat where libc does not map it to newfstatat"),
    ALLOW(statx, "fstat where libc maps it to statx"),
    ALLOW(dup3, "the component walk: a directory's O_PATH descriptor becomes a readable one"),
    ALLOW(readlinkat, "--follow-symlinks: links followed by hand beneath the root"),
    ALLOW(getdents64, "directory listings"),
    ALLOW(lseek, "rewinding a directory for the listing's second pass"),
    ALLOW(pread64, "small files read into the cache"),
    ALLOW(sendfile, "file bodies"),
    ALLOW(setsockopt,
          "TCP_NODELAY on accept, SO_LINGER for a reset; kTLS (OpenSSL), TCP_CORK (HTTPS), "
          "TCP_NOTSENT_LOWAT (HTTP/2)"),
    ALLOW(getsockopt, "OpenSSL (HTTPS): kTLS and socket state"),
    ALLOW(getpeername, "the peer's address for the access log (io_uring's accept gives none)"),
    ALLOW(shutdown, "the write side ends before a lingering close"),
    ALLOW(clock_gettime, "the clock, when the vDSO cannot answer"),
    ALLOW(gettimeofday, "the clock, when the vDSO cannot answer"),
#ifdef __NR_time
    ALLOW(time, "the clock, when the vDSO cannot answer (OpenSSL's time(); user-mode Linux)"),
#endif
    ALLOW(getpid, "the error log's [pid]"),
    ALLOW(getrandom, "multipart/byteranges boundaries; OpenSSL (HTTPS)'s random numbers"),
    ALLOW(exit_group, "the end of a worker"),
    ALLOW(restart_syscall, "the kernel restarts an interrupted wait after SIGSTOP/SIGCONT"),
    ALLOW(mmap, "OpenSSL (HTTPS): malloc's large blocks; basic auth: yescrypt's 16 MiB"),
    ALLOW(munmap, "OpenSSL (HTTPS): malloc's large blocks; basic auth: yescrypt's 16 MiB"),
    ALLOW(mremap, "OpenSSL (HTTPS): realloc of large blocks"),
    ALLOW(brk, "OpenSSL (HTTPS): malloc's heap"),
    ALLOW(madvise, "OpenSSL (HTTPS): free() gives pages back"),
};

/* The epoll loop: readiness, then the calls themselves. */
static const struct lockdown_syscall epoll_table[] = {
#ifdef __NR_epoll_wait
    ALLOW(epoll_wait, "waiting for readiness (libc may use it for epoll_wait)"),
#endif
    ALLOW(epoll_pwait, "waiting for readiness"),
    ALLOW(epoll_ctl, "connections and the listener in and out of the set"),
    ALLOW(accept4, "new connections"),
    ALLOW(read, "the signalfd: TERM, INT, HUP, USR1"),
    ALLOW(recvfrom, "request bytes"),
    ALLOW(sendto, "response heads and cached bodies (one buffer)"),
    ALLOW(sendmsg, "response heads and cached bodies (gathered)"),
};

/* The io_uring loop: accept, recv, send, poll, the signalfd read and
 * cancels go through the ring (restricted to those opcodes, see
 * loop_uring.c); only sendfile and the wait itself are system calls. */
static const struct lockdown_syscall uring_table[] = {
    ALLOW(io_uring_enter, "submitting and reaping the ring's operations"),
    ALLOW(epoll_ctl, "a socket whose peer ended its stream waits for room in the room set"),
#ifdef __NR_epoll_wait
    ALLOW(epoll_wait, "the room set's ready sockets (libc may use it for epoll_wait)"),
#endif
    ALLOW(epoll_pwait, "the room set's ready sockets, once the ring says it has some"),
    ALLOW(sendto, "HTTPS: the plain-text 400 to plain HTTP on the TLS port, sent at once"),
    ALLOW(sendmsg, "HTTPS with kernel TLS: OpenSSL's own records (tickets, alerts) with a cmsg"),
};

/* HTTP/3 (issue 34; src/http3/h3_udp.c), on both loops: the UDP socket's
 * datagrams are received and sent by system calls (io_uring only polls it). */
#ifndef PITH_TINY /* (no HTTP/3 there, and no numbers for these in its arch headers) */
static const struct lockdown_syscall h3_table[] = {
    ALLOW(recvmmsg, "HTTP/3: datagrams in batches, with their local address and ECN"),
    ALLOW(sendmsg, "HTTP/3: datagrams, a GSO train at a time, from the right local address"),
    ALLOW(getsockname, "HTTP/3: the UDP socket's own address, once"),
    ALLOW(futex, "HTTP/3: GnuTLS's once-only initialisations and locks (one thread: no wait)"),
};
#define H3_TABLE_LEN ARRAY_LEN(h3_table)
#else
#define h3_table     ((const struct lockdown_syscall *)0)
#define H3_TABLE_LEN 0
#endif

#define SYSCALLS_MAX 128

static size_t add_table(int *nrs, size_t n, const struct lockdown_syscall *t, size_t count)
{
    for (size_t i = 0; i < count && n < SYSCALLS_MAX; i++)
        nrs[n++] = t[i].nr;
    return n;
}

void lockdown_probe(struct server *srv)
{
    srv->landlock_abi = sys_landlock_abi();
    srv->seccomp_err = sys_seccomp_probe();
}

/* Why Landlock is not there, from the probe's error. */
static const char *landlock_absence(int err)
{
    switch (err) {
    case -ENOSYS: return "no Landlock in this kernel";
    case -EOPNOTSUPP: return "Landlock disabled at boot";
    default: return "Landlock refused by a seccomp profile or policy"; /* containers: EPERM */
    }
}

/* No parentheses or commas of its own: the start line is "(1 worker,
 * epoll, openat2, <this>)" and tools split it there. */
void lockdown_describe(const struct server *srv, char *out, size_t cap)
{
    struct buf b = buf_make(out, cap - 1);
    bool ll = srv->landlock_abi > 0, sc = srv->seccomp_err == 0;
    if (!srv->set.sandbox) {
        buf_put_cstr(&b, "no sandbox");
    } else if (ll) {
        buf_put_cstr(&b, "sandbox: Landlock ABI ");
        buf_put_u64(&b, (uint64_t)srv->landlock_abi);
        buf_put_cstr(&b, sc ? " + seccomp" : " only - no seccomp here");
    } else {
        buf_put_cstr(&b, sc ? "sandbox: seccomp only - " : "sandbox: none - ");
        buf_put_cstr(&b, landlock_absence(srv->landlock_abi));
    }
    if (srv->set.chroot_dir)
        buf_put_cstr(&b, " + chroot");
    out[b.full ? 0 : b.len] = '\0';
}

static int fail(const char *what, int err)
{
    log_error_errno(what, NULL, err);
    return -1;
}

static int restrict_files(struct worker *w)
{
    const struct server *srv = w->srv;
    struct sys_landlock_rule rules[2 * SETTINGS_SITES_MAX + 1];
    size_t n = 0;
    /* Every site's root, and its --precompressed DIR (the variants' mirror
     * tree), read-only. */
    for (unsigned i = 0; i < srv->set.nsites; i++) {
        rules[n++] = (struct sys_landlock_rule){srv->sites[i].root_fd, SYS_LL_READ};
        if (srv->sites[i].precomp_fd >= 0)
            rules[n++] = (struct sys_landlock_rule){srv->sites[i].precomp_fd, SYS_LL_READ};
    }
    if (w->log.dir_fd >= 0)
        rules[n++] = (struct sys_landlock_rule){w->log.dir_fd, SYS_LL_WRITE};
    int r = sys_landlock_restrict(srv->landlock_abi, rules, n);
    return r < 0 ? fail("worker: Landlock", r) : 0;
}

static int restrict_syscalls(struct worker *w)
{
    int nrs[SYSCALLS_MAX];
    size_t n = add_table(nrs, 0, common, ARRAY_LEN(common));
    if (w->srv->loop == &loop_epoll) /* (pith-tiny has no io_uring loop) */
        n = add_table(nrs, n, epoll_table, ARRAY_LEN(epoll_table));
    else
        n = add_table(nrs, n, uring_table, ARRAY_LEN(uring_table));
    if (w->udp_fd >= 0)
        n = add_table(nrs, n, h3_table, H3_TABLE_LEN);
    n = add_table(nrs, n, testhook_syscalls, testhook_nsyscalls);
    int r = sys_seccomp_allow_only(nrs, n);
    return r < 0 ? fail("worker: seccomp", r) : 0;
}

int lockdown_status(const struct server *srv)
{
    if (!srv->set.sandbox)
        return 0;
    /* No file at all: it serves none, and its log lines go to the
     * descriptors it inherited. */
    int r = srv->landlock_abi > 0 ? sys_landlock_restrict(srv->landlock_abi, NULL, 0) : 0;
    if (r < 0)
        return fail("status: Landlock", r);
    if (srv->seccomp_err != 0)
        return 0;
    int nrs[SYSCALLS_MAX];
    size_t n = add_table(nrs, 0, common, ARRAY_LEN(common));
    n = add_table(nrs, n, epoll_table, ARRAY_LEN(epoll_table)); /* its loop is always epoll */
    n = add_table(nrs, n, testhook_syscalls, testhook_nsyscalls);
    r = sys_seccomp_allow_only(nrs, n);
    return r < 0 ? fail("status: seccomp", r) : 0;
}

int lockdown_worker(struct worker *w)
{
    const struct settings *set = w->set;
    int r;
    if (set->user && (r = sys_drop_privileges(set->user, set->group, set->chroot_dir)) < 0) {
        log_error_errno("drop privileges to", set->user, r);
        return -1;
    }
    if (!set->sandbox)
        return 0;
    if (w->srv->landlock_abi > 0 && restrict_files(w) < 0)
        return -1;
    if (w->srv->seccomp_err == 0 && restrict_syscalls(w) < 0)
        return -1;
    return 0;
}

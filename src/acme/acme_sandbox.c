/* SPDX-License-Identifier: MIT */
/*
 * acme_sandbox.c - the ACME process's own confinement, applied once its
 * setup is done (privileges dropped, the state directory open, libcurl and
 * OpenSSL initialized, the account key loaded), unless --no-sandbox:
 *
 *   Landlock   the state directory read and written (files made, replaced
 *              by rename, removed: no directories, no links); read-only the
 *              system's configuration and certificates (/etc: resolv.conf,
 *              hosts, nsswitch.conf, ssl/), /usr (OpenSSL's configuration,
 *              CA bundles, the resolver's modules), /dev/urandom and
 *              --acme-ca-root; nothing else (no site root, no log, no
 *              /proc). From ABI 4, TCP connect only to the CA's port and 53
 *              (DNS over TCP), no bind; from ABI 6 signals and abstract
 *              Unix sockets scoped to itself.
 *   seccomp    an allow-list of what libcurl, OpenSSL, glibc's resolver
 *              (its threads) and pith's own loop call; anything else kills
 *              the process, and the master starts another.
 *
 * Raw system calls, as in src/sys/sandbox.c, whose rule helper refuses all
 * TCP connects (a worker makes none), which this process must make.
 */
#include "acme/acme_internal.h"

#include "base/log.h"
#include "base/server.h"
#include "sys/sandbox.h"
#include "testhook/testhook.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FS_EXECUTE     (1ULL << 0)
#define FS_WRITE_FILE  (1ULL << 1)
#define FS_READ_FILE   (1ULL << 2)
#define FS_READ_DIR    (1ULL << 3)
#define FS_REMOVE_FILE (1ULL << 5)
#define FS_MAKE_REG    (1ULL << 8)
#define FS_ABI1        ((1ULL << 13) - 1)
#define FS_REFER       (1ULL << 13) /* ABI 2 */
#define FS_TRUNCATE    (1ULL << 14) /* ABI 3 */
#define FS_IOCTL_DEV   (1ULL << 15) /* ABI 5 */
#define NET_BIND       (1ULL << 0)  /* ABI 4 */
#define NET_CONNECT    (1ULL << 1)
#define SCOPE_ALL      3ULL /* ABI 6: abstract Unix sockets, signals */
#define RULE_NET_PORT  2

struct ruleset_attr {
    uint64_t fs, net, scoped;
};
struct path_rule {
    uint64_t allowed;
    int32_t fd;
} __attribute__((packed));
struct port_rule {
    uint64_t allowed;
    uint64_t port;
};

static int path(int rs, const char *p, uint64_t allowed)
{
    int fd = open(p, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno; /* a file this system lacks: nothing to grant */
    struct path_rule r = {allowed, fd};
    long e = syscall(__NR_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &r, 0);
    if (e < 0 && errno == EINVAL) { /* a file: no directory rights */
        r.allowed &= FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE;
        e = syscall(__NR_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &r, 0);
    }
    int err = e < 0 ? -errno : 0;
    close(fd);
    return err;
}

static int port(int rs, unsigned p)
{
    struct port_rule r = {NET_CONNECT, p};
    return syscall(__NR_landlock_add_rule, rs, RULE_NET_PORT, &r, 0) < 0 ? -errno : 0;
}

/* The CA's port, from its https:// URL (443 unless it names one). */
static unsigned ca_port(const char *url)
{
    const char *h = strncmp(url, "https://", 8) == 0 ? url + 8 : url;
    size_t n = strcspn(h, "/?#");
    const char *colon = NULL;
    for (size_t i = 0; i < n; i++)
        if (h[i] == ':')
            colon = h + i;
        else if (h[i] == ']')
            colon = NULL; /* an IPv6 literal's colons */
    long p = colon ? strtol(colon + 1, NULL, 10) : 443;
    return p > 0 && p < 65536 ? (unsigned)p : 443;
}

static int landlock(const struct server *srv)
{
    int abi = srv->landlock_abi;
    const struct settings *set = &srv->set;
    struct ruleset_attr a = {.fs = FS_ABI1};
    size_t size = sizeof a.fs;
    if (abi >= 2)
        a.fs |= FS_REFER;
    if (abi >= 3)
        a.fs |= FS_TRUNCATE;
    if (abi >= 5)
        a.fs |= FS_IOCTL_DEV;
    if (abi >= 4) {
        a.net = NET_BIND | NET_CONNECT;
        size = offsetof(struct ruleset_attr, scoped);
    }
    if (abi >= 6) {
        a.scoped = SCOPE_ALL;
        size = sizeof a;
    }
    int rs = (int)syscall(__NR_landlock_create_ruleset, &a, size, 0);
    if (rs < 0)
        return -errno;
    uint64_t ro = FS_READ_FILE | FS_READ_DIR;
    uint64_t rw = ro | FS_WRITE_FILE | FS_REMOVE_FILE | FS_MAKE_REG | (abi >= 3 ? FS_TRUNCATE : 0);
    int r = path(rs, set->acme_dir, rw);
    if (!r)
        r = path(rs, "/etc", ro);
    if (!r)
        r = path(rs, "/usr", ro);
    if (!r)
        r = path(rs, "/dev/urandom", FS_READ_FILE);
    if (!r && set->acme_ca_root)
        r = path(rs, set->acme_ca_root, FS_READ_FILE);
    if (!r && abi >= 4)
        r = port(rs, ca_port(set->acme_ca));
    if (!r && abi >= 4)
        r = port(rs, 53);
    if (!r && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        r = -errno;
    if (!r && syscall(__NR_landlock_restrict_self, rs, 0) < 0)
        r = -errno;
    close(rs);
    return r;
}

/* What libcurl, OpenSSL, glibc (the resolver's thread, its files) and
 * this process's loop call once set up. */
static const int allowed[] = {
    __NR_read,
    __NR_write,
    __NR_openat,
    __NR_close,
    __NR_fstat,
    __NR_newfstatat,
    __NR_statx,
    __NR_lseek,
    __NR_pread64,
    __NR_fcntl,
    __NR_fsync,
    __NR_fdatasync,
    __NR_renameat2,
    __NR_unlinkat,
    __NR_faccessat,
    __NR_faccessat2,
    __NR_getdents64,
    __NR_readlinkat,
    __NR_ioctl, /* libcurl: FIONBIO/FIONREAD on its sockets */
    __NR_mmap,
    __NR_munmap,
    __NR_mremap,
    __NR_mprotect,
    __NR_brk,
    __NR_madvise,
    __NR_socket,
    __NR_connect,
    __NR_getsockopt,
    __NR_setsockopt,
    __NR_getsockname,
    __NR_getpeername,
    __NR_sendto,
    __NR_recvfrom,
    __NR_sendmsg,
    __NR_recvmsg,
    __NR_sendmmsg,
    __NR_socketpair,
    __NR_shutdown,
    __NR_bind, /* the resolver's UDP socket: a port 0 bind */
    __NR_ppoll,
    __NR_pselect6,
    __NR_pipe2,
    __NR_eventfd2,
    __NR_dup,
    __NR_dup3,
    __NR_clone,
    __NR_clone3,
    __NR_set_robust_list,
    __NR_rseq,
    __NR_futex,
    __NR_exit,
    __NR_sched_yield,
    __NR_sched_getaffinity,
    __NR_gettid,
    __NR_getpid,
    __NR_getppid,
    __NR_getuid,
    __NR_geteuid,
    __NR_getgid,
    __NR_getegid,
    __NR_uname,
    __NR_sysinfo,
    __NR_prlimit64,
    __NR_rt_sigprocmask,
    __NR_rt_sigaction,
    __NR_rt_sigtimedwait,
    __NR_rt_sigreturn,
    __NR_tgkill,
    __NR_getrandom,
    __NR_clock_gettime,
    __NR_gettimeofday,
    __NR_nanosleep,
    __NR_clock_nanosleep,
    __NR_exit_group,
    __NR_restart_syscall,
#ifdef __NR_time /* x86-64: what its libc and OpenSSL may still call directly */
    __NR_time,
    __NR_poll,
    __NR_readlink,
    __NR_renameat,
#endif
};

int acme_sandbox(const struct server *srv)
{
    int r = srv->landlock_abi > 0 ? landlock(srv) : 0;
    if (r < 0) {
        log_error_errno("acme: Landlock", NULL, r);
        return -1;
    }
    if (srv->seccomp_err != 0)
        return 0;
    /* The test builds' extra calls (pith-asan's runtime reporting an error
     * from inside the filter), as the workers' lists add them. */
    int nrs[sizeof allowed / sizeof allowed[0] + 32];
    size_t n = sizeof allowed / sizeof allowed[0];
    memcpy(nrs, allowed, sizeof allowed);
    for (size_t i = 0; i < testhook_nsyscalls && n < sizeof nrs / sizeof nrs[0]; i++)
        nrs[n++] = testhook_syscalls[i].nr;
    r = sys_seccomp_allow_only(nrs, n);
    if (r < 0) {
        log_error_errno("acme: seccomp", NULL, r);
        return -1;
    }
    return 0;
}

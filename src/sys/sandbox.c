/* SPDX-License-Identifier: MIT */
/*
 * sandbox.c - Landlock, seccomp-bpf and chroot (see sandbox.h). Raw system
 * calls: glibc wraps none of Landlock, and the headers of Debian 12 (Linux
 * 6.1) know Landlock ABI 1-2 only, so the later rights are defined here by
 * their kernel values (include/uapi/linux/landlock.h) and only handed to a
 * kernel whose ABI knows them.
 */
#include "sys/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- Landlock ---------------------------------------------------------------- */

#define LL_FS_ABI1    ((1ULL << 13) - 1) /* EXECUTE .. MAKE_SYM */
#define LL_FS_REFER   (1ULL << 13)       /* ABI 2 */
#define LL_FS_TRUNC   (1ULL << 14)       /* ABI 3 */
#define LL_FS_IOCTL   (1ULL << 15)       /* ABI 5 */
#define LL_NET_BIND   (1ULL << 0)        /* ABI 4 */
#define LL_NET_CONN   (1ULL << 1)        /* ABI 4 */
#define LL_SCOPE_UNIX (1ULL << 0)        /* ABI 6: abstract Unix sockets */
#define LL_SCOPE_SIG  (1ULL << 1)        /* ABI 6: signals */

#define LL_READ_FILE  (1ULL << 2)
#define LL_WRITE_FILE (1ULL << 1)
#define LL_READ_DIR   (1ULL << 3)

/* The ruleset attribute as the kernel reads it, sized by ABI. */
struct ll_ruleset {
    uint64_t handled_fs;
    uint64_t handled_net; /* ABI 4 */
    uint64_t scoped;      /* ABI 6 */
};

struct ll_beneath {
    uint64_t allowed;
    int32_t parent_fd;
} __attribute__((packed));

int sys_landlock_abi(void)
{
    long v = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return v < 0 ? -errno : (int)v;
}

static uint64_t handled_fs(int abi)
{
    uint64_t fs = LL_FS_ABI1;
    if (abi >= 2)
        fs |= LL_FS_REFER;
    if (abi >= 3)
        fs |= LL_FS_TRUNC;
    if (abi >= 5)
        fs |= LL_FS_IOCTL;
    return fs;
}

static int add_rule(int ruleset, const struct sys_landlock_rule *r)
{
    struct ll_beneath b = {0, r->fd};
    if (r->access & SYS_LL_READ)
        b.allowed |= LL_READ_FILE | LL_READ_DIR;
    if (r->access & SYS_LL_WRITE)
        b.allowed |= LL_WRITE_FILE;
    if (syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &b, 0) == 0)
        return 0;
    if (errno == EINVAL && (r->access & SYS_LL_READ)) {
        /* A file, not a directory: READ_DIR means nothing for it. */
        b.allowed &= ~LL_READ_DIR;
        if (syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &b, 0) == 0)
            return 0;
    }
    return -errno;
}

int sys_landlock_restrict(int abi, const struct sys_landlock_rule *rules, size_t n)
{
    struct ll_ruleset attr = {.handled_fs = handled_fs(abi)};
    size_t size = sizeof attr.handled_fs;
    if (abi >= 4) {
        attr.handled_net = LL_NET_BIND | LL_NET_CONN; /* a worker never binds nor connects */
        size = offsetof(struct ll_ruleset, scoped);
    }
    if (abi >= 6) {
        attr.scoped = LL_SCOPE_UNIX | LL_SCOPE_SIG;
        size = sizeof attr;
    }
    int rs = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
    if (rs < 0)
        return -errno;
    int r = 0;
    for (size_t i = 0; i < n && r == 0; i++)
        r = add_rule(rs, &rules[i]);
    if (r == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        r = -errno;
    if (r == 0 && syscall(__NR_landlock_restrict_self, rs, 0) < 0)
        r = -errno;
    close(rs);
    return r;
}

/* ---- seccomp ------------------------------------------------------------------ */

#if defined(__x86_64__)
#define AUDIT_ARCH_HERE AUDIT_ARCH_X86_64
#define X32_SYSCALL_BIT 0x40000000u
#elif defined(__aarch64__)
#define AUDIT_ARCH_HERE AUDIT_ARCH_AARCH64
#define X32_SYSCALL_BIT 0u
#endif

#define FILTER_MAX 256

#ifdef AUDIT_ARCH_HERE
int sys_seccomp_probe(void)
{
    uint32_t action = SECCOMP_RET_KILL_PROCESS;
    return syscall(__NR_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0 ? 0 : -errno;
}

int sys_seccomp_allow_only(const int *nrs, size_t n)
{
    if (n + 6 > FILTER_MAX)
        return -E2BIG;
    struct sock_filter f[FILTER_MAX];
    size_t k = 0;
    /* The architecture first: the numbers below mean nothing for another. */
    f[k++] =
        (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_HERE, 1, 0);
    f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    f[k++] =
        (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    /* x32 calls share the x86-64 audit value: refused by number (the jump
     * lands on the kill after the n compares). */
    if (X32_SYSCALL_BIT)
        f[k++] =
            (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, (uint8_t)n, 0);
    /* Compare i jumps over the n - 1 - i compares left and the kill. */
    for (size_t i = 0; i < n; i++)
        f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nrs[i],
                                              (uint8_t)(n - i), 0);
    f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {.len = (unsigned short)k, .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return -errno;
    if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
        return -errno;
    return 0;
}
#else
/* An architecture whose audit value this file does not know: no filter
 * (the start line says so) rather than one that checks nothing. */
int sys_seccomp_probe(void)
{
    return -ENOSYS;
}

int sys_seccomp_allow_only(const int *nrs, size_t n)
{
    (void)nrs;
    (void)n;
    return -ENOSYS;
}
#endif

/* ---- chroot -------------------------------------------------------------------- */

int sys_chroot(const char *dir)
{
    if (chroot(dir) < 0 || chdir("/") < 0)
        return -errno;
    return 0;
}

int sys_open_path_dir(const char *dir)
{
    int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

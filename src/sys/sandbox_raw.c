/* SPDX-License-Identifier: MIT */
/*
 * sandbox_raw.c - sandbox.h over raw system calls for pith-tiny: the same
 * Landlock ruleset, seccomp filter and chroot as sandbox.c, the numbers
 * and constants from src/sys/arch/ (scripts/tiny-arch). The filter is
 * built for x86-64 and aarch64 only, as in the full build; elsewhere the
 * probe says -ENOSYS and the start line says there is no seccomp.
 */
#include "sys/sandbox.h"

#include "sys/arch/arch.h"

/* ---- Landlock (values: include/uapi/linux/landlock.h, as in sandbox.c) ---- */

#define LL_FS_ABI1           ((1ULL << 13) - 1) /* EXECUTE .. MAKE_SYM */
#define LL_FS_REFER          (1ULL << 13)       /* ABI 2 */
#define LL_FS_TRUNC          (1ULL << 14)       /* ABI 3 */
#define LL_FS_IOCTL          (1ULL << 15)       /* ABI 5 */
#define LL_NET_BIND          (1ULL << 0)        /* ABI 4 */
#define LL_NET_CONN          (1ULL << 1)        /* ABI 4 */
#define LL_SCOPE_UNIX        (1ULL << 0)        /* ABI 6: abstract Unix sockets */
#define LL_SCOPE_SIG         (1ULL << 1)        /* ABI 6: signals */
#define LL_READ_FILE         (1ULL << 2)
#define LL_WRITE_FILE        (1ULL << 1)
#define LL_READ_DIR          (1ULL << 3)
#define LL_RULE_PATH_BENEATH 1 /* enum landlock_rule_type */

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
    return (int)SC3(landlock_create_ruleset, 0, 0, LANDLOCK_CREATE_RULESET_VERSION);
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
    long e = SC4(landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &b, 0);
    if (e == -EINVAL && (r->access & SYS_LL_READ)) {
        /* A file, not a directory: READ_DIR means nothing for it. */
        b.allowed &= ~LL_READ_DIR;
        e = SC4(landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &b, 0);
    }
    return (int)e;
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
    long rs = SC3(landlock_create_ruleset, &attr, size, 0);
    if (rs < 0)
        return (int)rs;
    long r = 0;
    for (size_t i = 0; i < n && r == 0; i++)
        r = add_rule((int)rs, &rules[i]);
    if (r == 0)
        r = SC5(prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (r == 0)
        r = SC2(landlock_restrict_self, rs, 0);
    SC1(close, rs);
    return (int)r;
}

/* ---- seccomp (classic BPF: include/uapi/linux/filter.h, seccomp.h) ------------ */

#if defined(__x86_64__)
#define AUDIT_ARCH_HERE AUDIT_ARCH_X86_64
#define X32_SYSCALL_BIT 0x40000000u
#elif defined(__aarch64__)
#define AUDIT_ARCH_HERE AUDIT_ARCH_AARCH64
#define X32_SYSCALL_BIT 0u
#endif

#define FILTER_MAX        256
#define SECCOMP_DATA_NR   0 /* struct seccomp_data: int nr, then __u32 arch */
#define SECCOMP_DATA_ARCH 4

struct sock_filter {
    uint16_t code;
    uint8_t jt, jf;
    uint32_t k;
};

struct sock_fprog {
    unsigned short len;
    struct sock_filter *filter;
};

#ifdef AUDIT_ARCH_HERE
static struct sock_filter stmt(uint16_t code, uint32_t k)
{
    return (struct sock_filter){code, 0, 0, k};
}

static struct sock_filter jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf)
{
    return (struct sock_filter){code, jt, jf, k};
}

int sys_seccomp_probe(void)
{
    uint32_t action = SECCOMP_RET_KILL_PROCESS;
    return (int)SC3(seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action);
}

int sys_seccomp_allow_only(const int *nrs, size_t n)
{
    if (n + 6 > FILTER_MAX)
        return -E2BIG;
    struct sock_filter f[FILTER_MAX];
    size_t k = 0;
    /* The architecture first: the numbers below mean nothing for another. */
    f[k++] = stmt(BPF_LD | BPF_W | BPF_ABS, SECCOMP_DATA_ARCH);
    f[k++] = jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_HERE, 1, 0);
    f[k++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    f[k++] = stmt(BPF_LD | BPF_W | BPF_ABS, SECCOMP_DATA_NR);
    /* x32 calls share the x86-64 audit value: refused by number. */
    if (X32_SYSCALL_BIT)
        f[k++] = jump(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, (uint8_t)n, 0);
    /* Compare i jumps over the n - 1 - i compares left and the kill. */
    for (size_t i = 0; i < n; i++)
        f[k++] = jump(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nrs[i], (uint8_t)(n - i), 0);
    f[k++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    f[k++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {.len = (unsigned short)k, .filter = f};
    long r = SC5(prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (r == 0)
        r = SC3(seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
    return (int)r;
}
#else
/* As sandbox.c: no filter where the audit value is not known here. */
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
    long r = SC1(chroot, dir);
    if (r == 0)
        r = SC1(chdir, "/");
    return (int)r;
}

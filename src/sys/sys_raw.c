/* SPDX-License-Identifier: MIT */
/*
 * sys_raw.c - sys.h over raw system calls for pith-tiny: the same contract
 * as sys_libc.c (n >= 0 or -errno, EINTR returned, never retried), without
 * a libc. Only calls that Linux 3.2 has are on the required path: fstatat64
 * (not statx) on 32-bit ABIs, clock_gettime (not clock_gettime64), *at()
 * forms everywhere (aarch64 and riscv64 have no open/stat/dup2), and openat2
 * and getrandom only where the kernel answers (-ENOSYS falls back). File
 * offsets are 64-bit on every ABI (O_LARGEFILE, pread64, sendfile64), so a
 * 32-bit build serves files above 2 GiB; times are the ABI's time_t, so on
 * 32-bit ABIs they end in January 2038 (docs/DESIGN.md, the tiny build).
 */
#include "sys/sys.h"

#include "core/bytes.h"
#include "sys/arch/arch.h"
#include "sys/sandbox.h" /* sys_open_path_dir */

extern char **raw_envp;          /* rt_raw.c: set by _start */
extern void raw_sigreturn(void); /* rt_raw.c: x86-64's SA_RESTORER */

#if __SIZEOF_LONG__ == 4
#define OPEN_LARGE O_LARGEFILE /* 64-bit offsets on a 32-bit ABI */
#else
#define OPEN_LARGE 0
#endif

#define KSIGSET_BYTES (KSIGSET_BITS / 8)

enum sys_file_type sys_file_type(const struct sys_stat *st)
{
    switch (st->mode & S_IFMT) {
    case S_IFREG: return SYS_FILE_REGULAR;
    case S_IFDIR: return SYS_FILE_DIR;
    case S_IFLNK: return SYS_FILE_LINK;
    default: return SYS_FILE_OTHER;
    }
}

/* One field of the kernel's stat buffer; 32-bit fields of 32-bit ABIs are
 * widened (mtime sign-extended: time_t). Copied bytewise: no alignment
 * assumption. */
static uint64_t kfield(const unsigned char *k, unsigned off, unsigned size, bool is_signed)
{
    if (size == 8) {
        uint64_t v;
        memcpy(&v, k + off, 8);
        return v;
    }
    uint32_t v;
    memcpy(&v, k + off, 4);
    return is_signed ? (uint64_t)(int64_t)(int32_t)v : v;
}

static int stat_at(int dirfd, const char *name, struct sys_stat *st, int flags)
{
    uint64_t k[(KSTAT_BYTES + 7) / 8];
    const unsigned char *b = (const unsigned char *)k;
    long r = SC4(fstatat, dirfd, name, k, flags);
    if (r < 0)
        return (int)r;
    st->dev = kfield(b, KSTAT_DEV_OFF, KSTAT_DEV_SIZE, false);
    st->ino = kfield(b, KSTAT_INO_OFF, KSTAT_INO_SIZE, false);
    st->mode = (uint32_t)kfield(b, KSTAT_MODE_OFF, KSTAT_MODE_SIZE, false);
    int64_t size = (int64_t)kfield(b, KSTAT_SIZE_OFF, KSTAT_SIZE_SIZE, true);
    st->size = size < 0 ? 0 : (uint64_t)size;
    st->mtime_sec = (int64_t)kfield(b, KSTAT_MTIME_OFF, KSTAT_MTIME_SIZE, true);
    st->mtime_nsec = (uint32_t)kfield(b, KSTAT_MTIME_NSEC_OFF, KSTAT_MTIME_NSEC_SIZE, false);
    return 0;
}

/* ---- files ----------------------------------------------------------------- */

static int open_at(int dirfd, const char *name, int flags, int mode)
{
    return (int)SC4(openat, dirfd, name, flags | O_CLOEXEC | OPEN_LARGE, mode);
}

int sys_open_dir(const char *path)
{
    return open_at(AT_FDCWD, path, O_RDONLY | O_DIRECTORY, 0);
}

int sys_openat(int dirfd, const char *name, int flags)
{
    return open_at(dirfd, name, flags, 0);
}

int sys_openat2_beneath(int dirfd, const char *path, int flags, bool no_symlinks)
{
    uint64_t how[3] = {(uint64_t)(flags | O_CLOEXEC | OPEN_LARGE), 0,
                       RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS |
                           (no_symlinks ? RESOLVE_NO_SYMLINKS : 0)};
    return (int)SC4(openat2, dirfd, path, how, sizeof how);
}

int sys_close(int fd)
{
    return (int)SC1(close, fd);
}

int sys_fstat(int fd, struct sys_stat *st)
{
    return stat_at(fd, "", st, AT_EMPTY_PATH); /* 2.6.39 */
}

int sys_fstatat(int dirfd, const char *name, struct sys_stat *st, bool follow)
{
    return stat_at(dirfd, name, st, follow ? 0 : AT_SYMLINK_NOFOLLOW);
}

ssize_t sys_readlinkat(int dirfd, const char *name, char *out, size_t cap)
{
    return SC4(readlinkat, dirfd, name, out, cap);
}

ssize_t sys_getdents(int fd, void *buf, size_t n)
{
    return SC3(getdents64, fd, buf, n);
}

int sys_rewind_dir(int fd)
{
    return (int)SC3(lseek, fd, 0, SEEK_SET);
}

/* The kernel's struct linux_dirent64, the same on every ABI. */
struct kdirent64 {
    uint64_t ino;
    int64_t off;
    uint16_t reclen;
    unsigned char type;
    char name[];
};

size_t sys_dirent_next(const void *buf, size_t n, size_t off, const char **name,
                       enum sys_file_type *type)
{
    if (off >= n)
        return 0;
    const struct kdirent64 *d = (const struct kdirent64 *)((const char *)buf + off);
    *name = d->name;
    switch (d->type) {
    case DT_REG: *type = SYS_FILE_REGULAR; break;
    case DT_DIR: *type = SYS_FILE_DIR; break;
    case DT_LNK: *type = SYS_FILE_LINK; break;
    case DT_UNKNOWN: *type = SYS_FILE_UNKNOWN; break;
    default: *type = SYS_FILE_OTHER; break;
    }
    return off + d->reclen;
}

ssize_t sys_read(int fd, void *p, size_t n)
{
    return SC3(read, fd, p, n);
}

ssize_t sys_pread(int fd, void *p, size_t n, uint64_t off)
{
#if __SIZEOF_LONG__ == 4
    return sys6(SYS_pread64, fd, (long)p, (long)n, ARG64_PADDED(off));
#else
    return SC4(pread64, fd, p, n, off);
#endif
}

ssize_t sys_write(int fd, const void *p, size_t n)
{
    return SC3(write, fd, p, n);
}

ssize_t sys_writev(int fd, const struct iovec *iov, int n)
{
    return SC3(writev, fd, iov, n);
}

int sys_open_log(const char *path)
{
    return sys_open_log_at(AT_FDCWD, path);
}

int sys_open_log_at(int dirfd, const char *name)
{
    /* O_NOFOLLOW: a link planted where the log goes must not redirect our
     * writes (nginx CVE-2016-1247). */
    return open_at(dirfd, name, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0644);
}

int sys_open_path_dir(const char *dir)
{
    return open_at(AT_FDCWD, dir, O_PATH | O_DIRECTORY, 0);
}

int sys_dup2(int from, int to)
{
    /* dup3 refuses from == to, which dup2 accepts; aarch64 has no dup2. */
    return from == to ? to : (int)SC3(dup3, from, to, 0);
}

int sys_dup_onto(int from, int to)
{
    return (int)SC3(dup3, from, to, O_CLOEXEC);
}

int sys_unlink(const char *path)
{
    return (int)SC3(unlinkat, AT_FDCWD, path, 0);
}

/* ---- sockets ----------------------------------------------------------------- */

ssize_t sys_send(int fd, const void *p, size_t n, bool more)
{
    return SC6(sendto, fd, p, n, MSG_NOSIGNAL | (more ? MSG_MORE : 0), 0, 0);
}

ssize_t sys_sendv(int fd, const struct iovec *iov, int n, bool more)
{
    if (n == 1)
        return sys_send(fd, iov[0].iov_base, iov[0].iov_len, more);
    struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n};
    return SC3(sendmsg, fd, &m, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
}

ssize_t sys_sendfile(int out_fd, int in_fd, uint64_t *off, size_t n)
{
    /* sendfile64 on 32-bit ABIs: *off is a 64-bit loff_t the kernel moves. */
    return SC4(sendfile, out_fd, in_fd, off, n);
}

ssize_t sys_recv(int fd, void *p, size_t n)
{
    return SC6(recvfrom, fd, p, n, 0, 0, 0);
}

int sys_accept(int lfd, struct sockaddr_storage *peer)
{
    socklen_t len = sizeof *peer;
    return (int)SC4(accept4, lfd, peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

static long set_int(int fd, int level, int name, int v)
{
    return SC5(setsockopt, fd, level, name, &v, sizeof v);
}

/* Kernels before 3.9 have no SO_REUSEPORT (setsockopt says ENOPROTOOPT).
 * There every worker's listener is a duplicate of one socket, the classic
 * prefork accept (a restarted worker gets another duplicate), and one copy
 * is kept here for that. The cost: during a graceful stop this copy keeps
 * the port open, so new connections wait in the backlog until the master
 * exits instead of being refused. PITH_NO_REUSEPORT=1 takes this path on
 * any kernel, so the tests exercise it. Kept as fd + 1 (0: none), so that
 * pith-tiny has no initialized data: a .data section of 4 bytes costs a
 * page-aligned segment, up to 4 KiB of the file. */
static int shared_listener_1;

int sys_listen_tcp(const struct sockaddr_storage *addr, socklen_t len, int backlog, bool share)
{
    if (share && shared_listener_1 > 0)
        return (int)SC3(fcntl, shared_listener_1 - 1, F_DUPFD_CLOEXEC, 0);
    int fd = (int)SC3(socket, addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fd;
    /* A small receive buffer, as in sys_libc.c: pith reads only heads. */
    long r = set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1);
    if (r >= 0)
        r = set_int(fd, SOL_SOCKET, SO_RCVBUF, 32768);
    bool one_socket = false;
    if (r >= 0 && share) {
        const char *off = sys_getenv("PITH_NO_REUSEPORT");
        r = off && off[0] == '1' ? -ENOPROTOOPT : set_int(fd, SOL_SOCKET, SO_REUSEPORT, 1);
        if (r == -ENOPROTOOPT)
            one_socket = true, r = 0;
    }
    if (r >= 0 && addr->ss_family == AF_INET6)
        r = set_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, 0);
    if (r >= 0)
        r = SC3(bind, fd, addr, len);
    if (r >= 0)
        r = SC2(listen, fd, backlog);
    if (r >= 0 && one_socket && (r = SC3(fcntl, fd, F_DUPFD_CLOEXEC, 0)) >= 0)
        shared_listener_1 = (int)r + 1;
    if (r < 0) {
        sys_close(fd);
        return (int)r;
    }
    return fd;
}

int sys_local_port(int fd)
{
    struct sockaddr_storage a;
    socklen_t len = sizeof a;
    long r = SC3(getsockname, fd, &a, &len);
    if (r < 0)
        return (int)r;
    if (a.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&a)->sin6_port);
    return ntohs(((struct sockaddr_in *)&a)->sin_port);
}

int sys_peer_addr(int fd, struct sockaddr_storage *peer)
{
    socklen_t len = sizeof *peer;
    return (int)SC3(getpeername, fd, peer, &len);
}

int sys_set_nodelay(int fd)
{
    return (int)set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1);
}

int sys_shutdown_write(int fd)
{
    return (int)SC2(shutdown, fd, SHUT_WR);
}

int sys_set_linger_reset(int fd)
{
    struct linger l = {.l_onoff = 1, .l_linger = 0};
    return (int)SC5(setsockopt, fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

/* ---- events -------------------------------------------------------------------- */

int sys_epoll_create(void)
{
    return (int)SC1(epoll_create1, EPOLL_CLOEXEC);
}

int sys_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data)
{
    struct epoll_event ev = {.events = events, .data.u64 = data};
    return (int)SC4(epoll_ctl, epfd, op, fd, &ev);
}

int sys_epoll_wait(int epfd, struct epoll_event *ev, int n, int timeout_ms,
                   const sigset_t *unblocked)
{
    /* epoll_pwait everywhere: aarch64 and riscv64 have no epoll_wait. */
    return (int)SC6(epoll_pwait, epfd, ev, n, timeout_ms, unblocked, KSIGSET_BYTES);
}

/* ---- time ------------------------------------------------------------------------ */

/* The ABI's struct timespec: two longs (32-bit time_t on 32-bit ABIs). */
static long clock_sec(int clock, long *nsec)
{
    long ts[2] = {0, 0};
    if (!raw_vdso_clock_gettime || raw_vdso_clock_gettime(clock, ts) != 0)
        SC2(clock_gettime, clock, ts);
    *nsec = ts[1];
    return ts[0];
}

int64_t sys_now_ms(void)
{
    long ns;
    int64_t s = clock_sec(CLOCK_MONOTONIC, &ns);
    return s * 1000 + ns / 1000000;
}

int64_t sys_now_real(void)
{
    long ns;
    return clock_sec(CLOCK_REALTIME, &ns);
}

/* ---- processes and signals ---------------------------------------------------------- */

static void fill_set(sigset_t *set, const int *sigs, size_t n)
{
    enum { BITS = 8 * sizeof set->sig[0] };
    memset(set, 0, sizeof *set);
    for (size_t i = 0; i < n; i++)
        set->sig[(sigs[i] - 1) / BITS] |= 1UL << ((sigs[i] - 1) % BITS);
}

int sys_signal(int sig, sys_signal_handler fn)
{
    struct ksigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.handler = fn;
    memset(&sa.mask, 0xff, sizeof sa.mask);
#if defined(__x86_64__)
    sa.flags = SA_RESTORER; /* x86-64 has no vDSO sigreturn to fall back on */
    sa.restorer = raw_sigreturn;
#endif
    return (int)SC4(rt_sigaction, sig, &sa, 0, KSIGSET_BYTES);
}

int sys_signal_ignore(int sig)
{
    return sys_signal(sig, SIG_IGN);
}

int sys_signal_default(int sig)
{
    return sys_signal(sig, SIG_DFL);
}

int sys_sigmask_block(const int *sigs, size_t n, sigset_t *old)
{
    sigset_t set;
    fill_set(&set, sigs, n);
    return (int)SC4(rt_sigprocmask, SIG_BLOCK, &set, old, KSIGSET_BYTES);
}

int sys_sigmask_set(const sigset_t *set)
{
    return (int)SC4(rt_sigprocmask, SIG_SETMASK, set, 0, KSIGSET_BYTES);
}

int sys_signalfd(const int *sigs, size_t n)
{
    sigset_t set;
    fill_set(&set, sigs, n);
    return (int)SC4(signalfd4, -1, &set, KSIGSET_BYTES, SFD_NONBLOCK | SFD_CLOEXEC);
}

int sys_signalfd_read(int fd)
{
    uint32_t si[32]; /* struct signalfd_siginfo: 128 bytes, ssi_signo first */
    long n = sys_read(fd, si, sizeof si);
    if (n < 0)
        return (int)n;
    return n == sizeof si ? (int)si[0] : -EAGAIN;
}

int sys_sigwait(const int *sigs, size_t n, int timeout_ms)
{
    sigset_t set;
    fill_set(&set, sigs, n);
    long ts[2] = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000};
    return (int)SC4(rt_sigtimedwait, &set, 0, ts, KSIGSET_BYTES);
}

int sys_fork(void)
{
    /* clone(SIGCHLD) is fork on every ABI (aarch64 and riscv64 have no
     * fork); the argument order differs after the flags, all zero here. */
    return (int)SC5(clone, SIGCHLD, 0, 0, 0, 0);
}

int sys_waitpid_any(int *status)
{
    return (int)SC4(wait4, -1, status, WNOHANG, 0);
}

int sys_kill(int pid, int sig)
{
    return (int)SC2(kill, pid, sig);
}

int sys_getpid(void)
{
    return (int)SC0(getpid);
}

int sys_die_with_parent(int sig)
{
    return (int)SC2(prctl, PR_SET_PDEATHSIG, sig);
}

int sys_getppid(void)
{
    return (int)SC0(getppid);
}

_Noreturn void sys_exit(int code)
{
    for (;;)
        SC1(exit_group, code);
}

int sys_nofile_limit(uint64_t need, uint64_t *cur, uint64_t *max)
{
    uint64_t rl[2]; /* struct rlimit64: cur, max */
    long r = SC4(prlimit64, 0, RLIMIT_NOFILE, 0, rl);
    if (r < 0)
        return (int)r;
    if (rl[0] < need && rl[0] < rl[1]) {
        rl[0] = need < rl[1] ? need : rl[1];
        if ((r = SC4(prlimit64, 0, RLIMIT_NOFILE, rl, 0)) < 0)
            return (int)r;
    }
    *cur = rl[0];
    *max = rl[1];
    return 0;
}

int sys_cpu_count(void)
{
    /* The CPUs this process may run on, as glibc's sysconf falls back to. */
    unsigned long mask[16];
    long r = SC3(sched_getaffinity, 0, sizeof mask, mask);
    int n = 0;
    for (long i = 0; i < r / (long)sizeof mask[0]; i++)
        for (unsigned long m = mask[i]; m; m &= m - 1)
            n++;
    return n < 1 ? 1 : n;
}

void *sys_map(size_t n)
{
    long p = SC6(mmap, 0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return (unsigned long)p > -4096UL ? NULL : (void *)p;
}

void sys_unmap(void *p, size_t n)
{
    if (p)
        SC2(munmap, p, n);
}

int sys_exit_status(int status)
{
    int sig = status & 0x7f;
    if (sig != 0 && sig != 0x7f)
        return -sig;
    return (status >> 8) & 0xff;
}

/* ---- start-up helpers ---------------------------------------------------------------- */

int sys_realpath(const char *path, char *out, size_t cap)
{
    /* The kernel's getcwd is the canonical path: step into the directory
     * and back (through a descriptor, so relative --log paths still mean
     * what they meant). */
    int here = sys_open_dir(".");
    if (here < 0)
        return here;
    int dir = sys_open_dir(path);
    long r = dir;
    if (dir >= 0) {
        r = SC1(fchdir, dir);
        if (r >= 0) {
            r = SC2(getcwd, out, cap);
            SC1(fchdir, here);
        }
        sys_close(dir);
    }
    sys_close(here);
    return r == -ERANGE ? -ENAMETOOLONG : r < 0 ? (int)r : 0;
}

/* A decimal number of at most max, at *s; advances *s. */
static bool dec(const char **s, unsigned max, unsigned *out)
{
    const char *p = *s;
    unsigned v = 0;
    if (!ascii_is_digit(*p))
        return false;
    while (ascii_is_digit(*p)) {
        v = v * 10 + (unsigned)(*p++ - '0');
        if (v > max)
            return false;
    }
    *out = v;
    *s = p;
    return true;
}

/* inet_pton(AF_INET): four decimal octets, no leading zeros (as glibc). */
static bool parse_v4(const char *s, unsigned char *out)
{
    for (int i = 0; i < 4; i++) {
        unsigned v;
        if ((s[0] == '0' && ascii_is_digit(s[1])) || !dec(&s, 255, &v))
            return false;
        out[i] = (unsigned char)v;
        if (*s++ != (i == 3 ? '\0' : '.'))
            return false;
    }
    return true;
}

/* inet_pton(AF_INET6): groups of 1-4 hex digits, one "::", an IPv4 tail. */
static bool parse_v6(const char *s, unsigned char *out)
{
    unsigned char w[16] = {0};
    int n = 0, gap = -1;
    if (s[0] == ':' && s[1] != ':')
        return false;
    if (s[0] == ':')
        s++;
    while (*s) {
        if (*s == ':') {
            if (gap >= 0)
                return false;
            gap = n;
            s++;
            continue;
        }
        unsigned v = 0;
        int digits = 0;
        const char *start = s;
        while (hex_value(*s) >= 0 && digits < 5)
            v = v << 4 | (unsigned)hex_value(*s++), digits++;
        if (*s == '.' && n <= 12) {
            if (!parse_v4(start, w + n))
                return false;
            n += 4;
            break;
        }
        if (digits == 0 || digits > 4 || n == 16)
            return false;
        w[n++] = (unsigned char)(v >> 8);
        w[n++] = (unsigned char)v;
        if (*s == ':' && *++s == '\0')
            return false;
    }
    if (gap < 0 ? n != 16 : n == 16)
        return false;
    if (gap >= 0) {
        memmove(w + 16 - (n - gap), w + gap, (size_t)(n - gap));
        memset(w + gap, 0, (size_t)(16 - n));
    }
    memcpy(out, w, 16);
    return true;
}

int sys_parse_addr(const char *text, unsigned port, struct sockaddr_storage *addr, socklen_t *len)
{
    char tmp[INET6_ADDRSTRLEN + 2];
    size_t n = strlen(text);
    memset(addr, 0, sizeof *addr);
    if (n >= 2 && text[0] == '[' && text[n - 1] == ']' && n - 2 < sizeof tmp) {
        memcpy(tmp, text + 1, n - 2);
        tmp[n - 2] = '\0';
        text = tmp;
    }
    struct sockaddr_in *a4 = (struct sockaddr_in *)addr;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)addr;
    if (parse_v4(text, (unsigned char *)&a4->sin_addr)) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *len = sizeof *a4;
        return 0;
    }
    if (parse_v6(text, a6->sin6_addr.s6_addr)) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *len = sizeof *a6;
        return 0;
    }
    return -EINVAL;
}

int sys_addr_text(const struct sockaddr_storage *addr, char *out, size_t cap)
{
    char host[INET6_ADDRSTRLEN];
    struct buf b = buf_make(out, cap ? cap - 1 : 0);
    if (addr->ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)addr)->sin6_addr, host, sizeof host);
        buf_put_char(&b, '[');
        buf_put_cstr(&b, host);
        buf_put_char(&b, ']');
    } else {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)addr)->sin_addr, host, sizeof host);
        buf_put_cstr(&b, host);
    }
    if (cap)
        out[b.len] = '\0';
    return 0;
}

/* ---- users: /etc/passwd and /etc/group, as files (no NSS in pith-tiny) ---- */

/* Calls fn on each line of path (lines longer than the buffer are skipped);
 * stops when fn returns true. Returns true if it did, false at the end. */
static bool each_line(const char *path, bool (*fn)(char *line, void *ctx), void *ctx)
{
    char buf[4096];
    size_t have = 0;
    bool found = false, eof = false, skipping = false;
    int fd = sys_openat(AT_FDCWD, path, O_RDONLY);
    if (fd < 0)
        return false;
    while (!found && !eof) {
        long n = sys_read(fd, buf + have, sizeof buf - 1 - have);
        if (n <= 0)
            eof = true, buf[have++] = '\n'; /* the last line may lack its newline */
        else
            have += (size_t)n;
        size_t start = 0;
        for (size_t i = 0; i < have && !found; i++) {
            if (buf[i] != '\n')
                continue;
            buf[i] = '\0';
            found = !skipping && fn(buf + start, ctx);
            skipping = false;
            start = i + 1;
        }
        if (start == 0 && have >= sizeof buf - 1)
            skipping = true, start = have; /* drop an overlong line's start */
        memmove(buf, buf + start, have - start);
        have -= start;
    }
    sys_close(fd);
    return found;
}

/* Where field i (0-based) of a ':'-separated line starts, or NULL. */
static char *field(char *line, int i)
{
    for (; i > 0; i--) {
        while (*line && *line != ':')
            line++;
        if (!*line)
            return NULL;
        line++;
    }
    return line;
}

/* The length of a field that ends at ':' or the end of the line. */
static size_t field_len(const char *f)
{
    size_t n = 0;
    while (f[n] && f[n] != ':')
        n++;
    return n;
}

struct user_query {
    const char *name;
    unsigned uid, gid;
    unsigned groups[64];
    unsigned ngroups;
};

static bool match_name(const char *line, const char *name)
{
    size_t n = field_len(line);
    return n == strlen(name) && mem_eq(line, name, n);
}

static bool passwd_line(char *line, void *ctx)
{
    struct user_query *q = ctx;
    const char *u, *g;
    if (!match_name(line, q->name) || !(u = field(line, 2)) || !(g = field(line, 3)))
        return false;
    return dec(&u, 0xfffffffeu, &q->uid) && *u == ':' && dec(&g, 0xfffffffeu, &q->gid);
}

/* A group whose member list (field 3) names the user. */
static bool group_line(char *line, void *ctx)
{
    struct user_query *q = ctx;
    const char *g = field(line, 2), *m = field(line, 3);
    unsigned gid;
    if (!g || !m || !dec(&g, 0xfffffffeu, &gid))
        return false;
    size_t want = strlen(q->name);
    while (*m) {
        size_t n = 0;
        while (m[n] && m[n] != ',')
            n++;
        if (n == want && mem_eq(m, q->name, n) && q->ngroups < ARRAY_LEN(q->groups)) {
            q->groups[q->ngroups++] = gid;
            break;
        }
        m += n + (m[n] == ',');
    }
    return false; /* read every group */
}

int sys_user_ids(const char *user, unsigned *uid, unsigned *gid)
{
    struct user_query q = {.name = user};
    if (!each_line("/etc/passwd", passwd_line, &q))
        return -ENOENT;
    *uid = q.uid;
    *gid = q.gid;
    return 0;
}

bool sys_is_root(void)
{
    return SC0(geteuid) == 0;
}

int sys_check_user(const char *user)
{
    unsigned uid, gid;
    if (!sys_is_root())
        return -EPERM;
    return sys_user_ids(user, &uid, &gid);
}

/* A group line named q->name: its id in q->gid. */
static bool group_name_line(char *line, void *ctx)
{
    struct user_query *q = ctx;
    const char *g;
    return match_name(line, q->name) && (g = field(line, 2)) && dec(&g, 0xfffffffeu, &q->gid);
}

int sys_group_id(const char *group, unsigned *gid)
{
    struct user_query q = {.name = group};
    if (!each_line("/etc/group", group_name_line, &q))
        return -ENOENT;
    *gid = q.gid;
    return 0;
}

int sys_drop_privileges(const char *user, const char *group, const char *chroot_dir)
{
    struct user_query q = {.name = user};
    if (!sys_is_root())
        return -EPERM;
    if (!each_line("/etc/passwd", passwd_line, &q))
        return -ENOENT;
    if (group) {
        int r = sys_group_id(group, &q.gid); /* --group: instead of the user's own */
        if (r < 0)
            return r;
    }
    q.groups[q.ngroups++] = q.gid; /* initgroups: the primary group too */
    each_line("/etc/group", group_line, &q);
    /* The names are looked up (passwd, group) before the chroot, which
     * has no /etc; the ids are set after it, which needs root. */
    long r = SC2(setgroups, q.ngroups, q.groups);
    if (r >= 0 && chroot_dir && (r = SC1(chroot, chroot_dir)) >= 0)
        r = SC1(chdir, "/");
    if (r >= 0)
        r = SC1(setgid, q.gid);
    if (r >= 0)
        r = SC1(setuid, q.uid);
    if (r < 0)
        return (int)r;
    /* setuid as root sets the saved uid too; make sure root is gone. */
    if (q.uid != 0 && SC1(setuid, 0) == 0)
        return -EPERM;
    return 0;
}

int sys_fchown(int fd, unsigned uid, unsigned gid)
{
    return (int)SC3(fchown, fd, uid, gid);
}

int sys_daemonize(void)
{
    int pid = sys_fork();
    if (pid < 0)
        return pid;
    if (pid > 0)
        sys_exit(0);
    long r = SC0(setsid);
    if (r < 0)
        return (int)r;
    int fd = open_at(AT_FDCWD, "/dev/null", O_RDWR, 0);
    if (fd < 0)
        return fd;
    for (int i = 0; i < 3; i++)
        sys_dup2(fd, i);
    if (fd > 2)
        sys_close(fd);
    return 0;
}

int sys_write_pidfile(const char *path, int pid)
{
    if (pid < 0) {
        /* Only a check: leave no file behind that a watcher could take for
         * the real one. */
        int fd = open_at(AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
        if (fd >= 0) {
            sys_close(fd);
            sys_unlink(path);
            return 0;
        }
        if (fd != -EEXIST)
            return fd;
        fd = open_at(AT_FDCWD, path, O_WRONLY | O_NOFOLLOW, 0);
        if (fd < 0)
            return fd;
        sys_close(fd);
        return 0;
    }
    char text[24];
    size_t n = u64_format((uint64_t)pid, text);
    text[n++] = '\n';
    int fd = open_at(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return fd;
    long w = sys_write(fd, text, n);
    sys_close(fd);
    return w == (long)n ? 0 : (w < 0 ? (int)w : -EIO);
}

const char *sys_getenv(const char *name)
{
    size_t n = strlen(name);
    for (char **e = raw_envp; e && *e; e++)
        if (mem_eq(*e, name, n) && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

int sys_random(void *p, size_t n)
{
    long r = SC3(getrandom, p, n, 0); /* 3.17; /dev/urandom before */
    if (r == -ENOSYS) {
        int fd = sys_openat(AT_FDCWD, "/dev/urandom", O_RDONLY);
        if (fd < 0)
            return fd;
        r = sys_read(fd, p, n);
        sys_close(fd);
    }
    return r == (long)n ? 0 : (r < 0 ? (int)r : -EIO);
}

/* ---- time, shared memory --------------------------------------------------------- */

int64_t sys_now_us(void)
{
    long ns;
    int64_t s = clock_sec(CLOCK_MONOTONIC, &ns);
    return s * 1000000 + ns / 1000;
}

void *sys_map_shared(size_t n)
{
    long p = SC6(mmap, 0, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return (unsigned long)p > -4096UL ? NULL : (void *)p;
}

/* ---- production: Unix sockets, upgrades --------------------------------------------- */

static int unix_addr(const char *path, struct sockaddr_un *sa)
{
    size_t n = strlen(path);
    *sa = (struct sockaddr_un){.sun_family = AF_UNIX};
    if (n == 0 || n >= sizeof sa->sun_path)
        return -ENAMETOOLONG;
    memcpy(sa->sun_path, path, n + 1);
    return 0;
}

int sys_unix_path_free(const char *path)
{
    struct sockaddr_un sa;
    struct sys_stat st;
    int r = unix_addr(path, &sa);
    if (r < 0)
        return r;
    if ((r = sys_fstatat(AT_FDCWD, path, &st, false)) < 0)
        return r == -ENOENT ? 0 : r;
    if ((st.mode & S_IFMT) != S_IFSOCK)
        return -EEXIST;
    /* A socket file: stale unless somebody accepts on it. */
    int fd = (int)SC3(socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return fd;
    r = (int)SC3(connect, fd, &sa, sizeof sa);
    sys_close(fd);
    if (r == 0 || r == -EAGAIN) /* EAGAIN: a listener whose queue is full */
        return -EADDRINUSE;
    return r == -ECONNREFUSED ? 0 : r;
}

int sys_listen_unix(const char *path, int backlog, unsigned mode, int uid, int gid)
{
    struct sockaddr_un sa;
    int r = unix_addr(path, &sa);
    if (r < 0 || (r = sys_unix_path_free(path)) < 0)
        return r;
    sys_unlink(path); /* a stale socket, or nothing */
    int fd = (int)SC3(socket, AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fd;
    /* Created owner-only, then opened up to `mode` once owned right, so
     * nobody can connect in between with more rights than asked for. */
    long old = SC1(umask, 0177);
    long b = SC3(bind, fd, &sa, sizeof sa);
    SC1(umask, old);
    r = (int)b;
    if (r >= 0 && uid >= 0)
        r = (int)SC5(fchownat, AT_FDCWD, path, uid, gid, 0);
    if (r >= 0)
        r = (int)SC3(fchmodat, AT_FDCWD, path, mode);
    if (r >= 0)
        r = (int)SC2(listen, fd, backlog);
    if (r < 0) {
        if (b == 0)
            sys_unlink(path);
        sys_close(fd);
        return r;
    }
    return fd;
}

int sys_local_addr(int fd, struct sockaddr_storage *addr, socklen_t *len)
{
    *len = sizeof *addr;
    return (int)SC3(getsockname, fd, addr, len);
}

int sys_is_reuseport(int fd)
{
    int on = 0;
    socklen_t len = sizeof on;
    long r = SC5(getsockopt, fd, SOL_SOCKET, SO_REUSEPORT, &on, &len);
    return r < 0 ? (int)r : on != 0;
}

int sys_exe_path(char *out, size_t cap)
{
    ssize_t n = sys_readlinkat(AT_FDCWD, "/proc/self/exe", out, cap - 1);
    if (n < 0)
        return (int)n;
    out[n] = '\0';
    return 0;
}

int sys_rename(const char *from, const char *to)
{
    /* riscv64 has only renameat2, whose flags (0) are the fifth argument. */
    return (int)SC5(renameat, AT_FDCWD, from, AT_FDCWD, to, 0);
}

static bool group_gid_line(char *line, void *ctx)
{
    struct user_query *q = ctx;
    const char *g = field(line, 2);
    return match_name(line, q->name) && g && dec(&g, 0xfffffffeu, &q->gid);
}

int sys_owner_ids(const char *spec, unsigned *uid, unsigned *gid)
{
    char user[256];
    size_t n = strcspn(spec, ":");
    if (n == 0 || n >= sizeof user)
        return -ENOENT;
    memcpy(user, spec, n);
    user[n] = '\0';
    int r = sys_user_ids(user, uid, gid);
    if (r < 0 || !spec[n])
        return r;
    struct user_query q = {.name = spec + n + 1};
    if (!each_line("/etc/group", group_gid_line, &q))
        return -ENOENT;
    *gid = q.gid;
    return 0;
}

int sys_pipe_notify(int fds[2])
{
    long r = SC2(pipe2, fds, O_CLOEXEC | O_NONBLOCK);
    if (r < 0)
        return (int)r;
    if ((r = SC3(fcntl, fds[0], F_SETOWN, sys_getpid())) >= 0)
        r = SC3(fcntl, fds[0], F_SETFL, O_NONBLOCK | O_ASYNC);
    if (r < 0) {
        sys_close(fds[0]);
        sys_close(fds[1]);
    }
    return r < 0 ? (int)r : 0;
}

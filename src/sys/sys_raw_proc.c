/* SPDX-License-Identifier: MIT */
/*
 * sys_raw_proc.c - sys.h's processes over raw system calls (pith-tiny; the
 * common rules are in sys_raw.h): the clocks (through the vDSO where
 * rt_raw.c found it), signals and their masks (the kernel's sigset, not
 * glibc's), fork, wait, exit, limits, memory maps, --daemon, the
 * environment, random bytes and the workers' ready pipe.
 */
#include "sys/sys.h"

#include "core/bytes.h"
#include "sys/sys_raw.h"

extern char **raw_envp;          /* rt_raw.c: set by _start */
extern void raw_sigreturn(void); /* rt_raw.c: x86-64's SA_RESTORER */

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

int64_t sys_now_us(void)
{
    long ns;
    int64_t s = clock_sec(CLOCK_MONOTONIC, &ns);
    return s * 1000000 + ns / 1000;
}

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

void sys_heap_trim(void)
{
}

void sys_release(void *p, size_t n)
{
    uintptr_t page = raw_page_size ? raw_page_size : 4096;
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + n) & ~(page - 1);
    if (a < e)
        SC3(madvise, a, e - a, MADV_DONTNEED);
}

int sys_exit_status(int status)
{
    int sig = status & 0x7f;
    if (sig != 0 && sig != 0x7f)
        return -sig;
    return (status >> 8) & 0xff;
}

void *sys_map_shared(size_t n)
{
    long p = SC6(mmap, 0, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return (unsigned long)p > -4096UL ? NULL : (void *)p;
}

int sys_daemonize(const char *pidfile)
{
    int go[2];
    long r = SC2(pipe2, go, O_CLOEXEC);
    if (r < 0)
        return (int)r;
    int pid = sys_fork();
    if (pid < 0) {
        sys_close(go[0]);
        sys_close(go[1]);
        return pid;
    }
    if (pid > 0) {
        sys_close(go[0]);
        int w = pidfile ? sys_write_pidfile(pidfile, pid) : 0;
        if (!w && sys_write(go[1], "", 1) == 1)
            sys_exit(0);
        sys_close(go[1]); /* the child reads the end of the pipe, and exits 1 */
        return w ? w : -EIO;
    }
    sys_close(go[1]);
    char byte;
    while ((r = sys_read(go[0], &byte, 1)) == -EINTR)
        ;
    sys_close(go[0]);
    if (r != 1)
        sys_exit(1);
    r = SC0(setsid);
    if (r < 0)
        return (int)r;
    int fd = sys_openat(AT_FDCWD, "/dev/null", O_RDWR);
    if (fd < 0)
        return fd;
    for (int i = 0; i < 3; i++)
        sys_dup2(fd, i);
    if (fd > 2)
        sys_close(fd);
    return 0;
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

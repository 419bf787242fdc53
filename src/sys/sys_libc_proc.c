/* SPDX-License-Identifier: MIT */
/*
 * sys_libc_proc.c - sys.h's processes over glibc (the full build; the
 * common rules are in sys_libc.h): the clocks, signals and their masks
 * (signalfd, sigtimedwait), fork, wait, exit, the descriptor limit, memory
 * maps, --daemon, the environment, random bytes and the workers' ready
 * pipe. The jobs are pith-tiny's (sys_raw_proc.c), so either build's file
 * is found by job.
 */
#include "sys/sys.h"

#include "sys/sys_libc.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- time ---------------------------------------------------------------- */

int64_t sys_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t sys_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t sys_now_real(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec;
}

/* ---- signals ------------------------------------------------------------- */

static void fill_set(sigset_t *set, const int *sigs, size_t n)
{
    sigemptyset(set);
    for (size_t i = 0; i < n; i++)
        sigaddset(set, sigs[i]);
}

int sys_signal(int sig, sys_signal_handler fn)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigfillset(&sa.sa_mask);
    return (int)ret(sigaction(sig, &sa, NULL));
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
    return sigprocmask(SIG_BLOCK, &set, old) < 0 ? -errno : 0;
}

int sys_sigmask_set(const sigset_t *set)
{
    return sigprocmask(SIG_SETMASK, set, NULL) < 0 ? -errno : 0;
}

int sys_signalfd(const int *sigs, size_t n)
{
    sigset_t set;
    fill_set(&set, sigs, n);
    return (int)ret(signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
}

int sys_signalfd_read(int fd)
{
    struct signalfd_siginfo si;
    ssize_t n = read(fd, &si, sizeof si);
    if (n < 0)
        return -errno;
    return n == sizeof si ? (int)si.ssi_signo : -EAGAIN;
}

int sys_sigwait(const int *sigs, size_t n, int timeout_ms)
{
    sigset_t set;
    fill_set(&set, sigs, n);
    struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000};
    return (int)ret(sigtimedwait(&set, NULL, &ts));
}

/* ---- processes ----------------------------------------------------------- */

int sys_fork(void)
{
    return (int)ret(fork());
}

int sys_waitpid_any(int *status)
{
    return (int)ret(waitpid(-1, status, WNOHANG));
}

int sys_kill(int pid, int sig)
{
    return (int)ret(kill(pid, sig));
}

int sys_getpid(void)
{
    return getpid();
}

int sys_die_with_parent(int sig)
{
    return (int)ret(prctl(PR_SET_PDEATHSIG, sig));
}

int sys_getppid(void)
{
    return getppid();
}

_Noreturn void sys_exit(int code)
{
    _exit(code);
}

int sys_exit_status(int status)
{
    if (WIFSIGNALED(status))
        return -WTERMSIG(status);
    return WEXITSTATUS(status);
}

int sys_nofile_limit(uint64_t need, uint64_t *cur, uint64_t *max)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return -errno;
    if (rl.rlim_cur < need && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = need < rl.rlim_max ? need : rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            return -errno;
    }
    *cur = rl.rlim_cur;
    *max = rl.rlim_max;
    return 0;
}

int sys_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

/* --daemon's child: waits for the parent's byte (sent once the pidfile is
 * written; none, and it exits 1), then leaves the session and points 0, 1
 * and 2 at /dev/null. */
static int daemon_child(int go[2])
{
    close(go[1]);
    char byte;
    ssize_t n;
    while ((n = read(go[0], &byte, 1)) < 0 && errno == EINTR)
        ;
    close(go[0]);
    if (n != 1)
        _exit(1);
    if (setsid() < 0)
        return -errno;
    int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    dup2(fd, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    if (fd > 2)
        close(fd);
    return 0;
}

int sys_daemonize(const char *pidfile)
{
    int go[2];
    if (pipe2(go, O_CLOEXEC) < 0)
        return -errno;
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(go[0]);
        close(go[1]);
        return -e;
    }
    if (pid > 0) {
        close(go[0]);
        int r = pidfile ? sys_write_pidfile(pidfile, pid) : 0;
        if (!r && write(go[1], "", 1) == 1)
            _exit(0);
        close(go[1]); /* the child reads the end of the pipe, and exits 1 */
        return r ? r : -EIO;
    }
    return daemon_child(go);
}

const char *sys_getenv(const char *name)
{
    return getenv(name);
}

int sys_random(void *p, size_t n)
{
    ssize_t r = getrandom(p, n, 0);
    return r == (ssize_t)n ? 0 : (r < 0 ? -errno : -EIO);
}

int sys_pipe_notify(int fds[2])
{
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
        return -errno;
    if (fcntl(fds[0], F_SETOWN, getpid()) < 0 || fcntl(fds[0], F_SETFL, O_NONBLOCK | O_ASYNC) < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return -e;
    }
    return 0;
}

/* ---- memory -------------------------------------------------------------- */

void *sys_map(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void *sys_map_shared(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int sys_map_readonly(void *p, size_t n)
{
    return mprotect(p, n, PROT_READ) == 0 ? 0 : -errno;
}

void sys_unmap(void *p, size_t n)
{
    if (p)
        munmap(p, n);
}

void sys_heap_trim(void)
{
    malloc_trim(0);
}

void sys_release(void *p, size_t n)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + n) & ~(page - 1);
    if (a < e)
        madvise((void *)a, e - a, MADV_DONTNEED);
}

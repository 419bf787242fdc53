/* SPDX-License-Identifier: MIT */
/*
 * sys_libc.c - sys.h over glibc for the full build. Each wrapper makes one
 * call and turns errno into a negative return; EINTR is returned to the
 * caller rather than retried, because the event loop wants to see signals.
 */
#include "sys/sys.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void fill_set(sigset_t *set, const int *sigs, size_t n);

static long ret(long r)
{
    return r < 0 ? -errno : r;
}

enum sys_file_type sys_file_type(const struct sys_stat *st)
{
    switch (st->mode & S_IFMT) {
    case S_IFREG: return SYS_FILE_REGULAR;
    case S_IFDIR: return SYS_FILE_DIR;
    case S_IFLNK: return SYS_FILE_LINK;
    default: return SYS_FILE_OTHER;
    }
}

static void fill_stat(const struct stat *s, struct sys_stat *st)
{
    st->dev = s->st_dev;
    st->ino = s->st_ino;
    st->size = s->st_size < 0 ? 0 : (uint64_t)s->st_size;
    st->mode = s->st_mode;
    st->mtime_sec = s->st_mtim.tv_sec;
    st->mtime_nsec = (uint32_t)s->st_mtim.tv_nsec;
}

int sys_open_dir(const char *path)
{
    return (int)ret(open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

int sys_openat(int dirfd, const char *name, int flags)
{
    return (int)ret(openat(dirfd, name, flags | O_CLOEXEC));
}

int sys_openat2_beneath(int dirfd, const char *path, int flags, bool no_symlinks)
{
    struct open_how how = {
        .flags = (uint64_t)(flags | O_CLOEXEC),
        .resolve =
            RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | (no_symlinks ? RESOLVE_NO_SYMLINKS : 0),
    };
    return (int)ret(syscall(SYS_openat2, dirfd, path, &how, sizeof how));
}

int sys_close(int fd)
{
    return (int)ret(close(fd));
}

int sys_fstat(int fd, struct sys_stat *st)
{
    struct stat s;
    if (fstat(fd, &s) < 0)
        return -errno;
    fill_stat(&s, st);
    return 0;
}

int sys_fstatat(int dirfd, const char *name, struct sys_stat *st, bool follow)
{
    struct stat s;
    if (fstatat(dirfd, name, &s, follow ? 0 : AT_SYMLINK_NOFOLLOW) < 0)
        return -errno;
    fill_stat(&s, st);
    return 0;
}

ssize_t sys_readlinkat(int dirfd, const char *name, char *out, size_t cap)
{
    return ret(readlinkat(dirfd, name, out, cap));
}

ssize_t sys_getdents(int fd, void *buf, size_t n)
{
    return ret(getdents64(fd, buf, n));
}

int sys_rewind_dir(int fd)
{
    return (int)ret(lseek(fd, 0, SEEK_SET));
}

size_t sys_dirent_next(const void *buf, size_t n, size_t off, const char **name,
                       enum sys_file_type *type)
{
    if (off >= n)
        return 0;
    const struct dirent64 *d = (const struct dirent64 *)((const char *)buf + off);
    *name = d->d_name;
    switch (d->d_type) {
    case DT_REG: *type = SYS_FILE_REGULAR; break;
    case DT_DIR: *type = SYS_FILE_DIR; break;
    case DT_LNK: *type = SYS_FILE_LINK; break;
    case DT_UNKNOWN: *type = SYS_FILE_UNKNOWN; break;
    default: *type = SYS_FILE_OTHER; break;
    }
    return off + d->d_reclen;
}

ssize_t sys_read(int fd, void *p, size_t n)
{
    return ret(read(fd, p, n));
}

ssize_t sys_pread(int fd, void *p, size_t n, uint64_t off)
{
    return ret(pread(fd, p, n, (off_t)off));
}

ssize_t sys_write(int fd, const void *p, size_t n)
{
    return ret(write(fd, p, n));
}

ssize_t sys_writev(int fd, const struct iovec *iov, int n)
{
    return ret(writev(fd, iov, n));
}

int sys_open_log(const char *path)
{
    /* O_NOFOLLOW: a link planted where the log goes must not redirect our
     * writes (nginx CVE-2016-1247, research S12). */
    return (int)ret(open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
}

int sys_dup2(int from, int to)
{
    return (int)ret(dup2(from, to));
}

int sys_dup_onto(int from, int to)
{
    return (int)ret(dup3(from, to, O_CLOEXEC));
}

int sys_unlink(const char *path)
{
    return (int)ret(unlink(path));
}

/* ---- sockets ------------------------------------------------------------- */

ssize_t sys_send(int fd, const void *p, size_t n, bool more)
{
    return ret(send(fd, p, n, MSG_NOSIGNAL | (more ? MSG_MORE : 0)));
}

ssize_t sys_sendv(int fd, const struct iovec *iov, int n, bool more)
{
    if (n == 1)
        return sys_send(fd, iov[0].iov_base, iov[0].iov_len, more);
    struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n};
    return ret(sendmsg(fd, &m, MSG_NOSIGNAL | (more ? MSG_MORE : 0)));
}

ssize_t sys_sendfile(int out_fd, int in_fd, uint64_t *off, size_t n)
{
    off_t o = (off_t)*off;
    ssize_t r = sendfile(out_fd, in_fd, &o, n);
    if (r < 0)
        return -errno;
    *off = (uint64_t)o;
    return r;
}

ssize_t sys_recv(int fd, void *p, size_t n)
{
    return ret(recv(fd, p, n, 0));
}

int sys_accept(int lfd, struct sockaddr_storage *peer)
{
    socklen_t len = sizeof *peer;
    return (int)ret(accept4(lfd, (struct sockaddr *)peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC));
}

int sys_listen_tcp(const struct sockaddr_storage *addr, socklen_t len, int backlog, bool share)
{
    int one = 1, zero = 0;
    int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    /* pith reads nothing but request heads (at most ~24 KiB), so a small
     * receive buffer, inherited by every accepted socket, costs nothing and
     * bounds what a client can push at a worker before TCP flow control
     * stops it (the io_uring backend holds what a multishot receive pulls
     * in while a connection's buffer is full). The kernel doubles it. */
    int rcvbuf = 32768;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf) < 0 ||
        (share && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0) ||
        (addr->ss_family == AF_INET6 &&
         setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) < 0) ||
        bind(fd, (const struct sockaddr *)addr, len) < 0 || listen(fd, backlog) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

int sys_local_port(int fd)
{
    struct sockaddr_storage a;
    socklen_t len = sizeof a;
    if (getsockname(fd, (struct sockaddr *)&a, &len) < 0)
        return -errno;
    if (a.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&a)->sin6_port);
    return ntohs(((struct sockaddr_in *)&a)->sin_port);
}

int sys_peer_addr(int fd, struct sockaddr_storage *peer)
{
    socklen_t len = sizeof *peer;
    return (int)ret(getpeername(fd, (struct sockaddr *)peer, &len));
}

int sys_set_nodelay(int fd)
{
    int one = 1;
    return (int)ret(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one));
}

int sys_set_cork(int fd, bool on)
{
    int v = on;
    return (int)ret(setsockopt(fd, IPPROTO_TCP, TCP_CORK, &v, sizeof v));
}

int sys_set_notsent_lowat(int fd, int bytes)
{
    return (int)ret(setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &bytes, sizeof bytes));
}

int sys_shutdown_write(int fd)
{
    return (int)ret(shutdown(fd, SHUT_WR));
}

int sys_set_linger_reset(int fd)
{
    struct linger l = {.l_onoff = 1, .l_linger = 0};
    return (int)ret(setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l));
}

/* ---- events -------------------------------------------------------------- */

int sys_epoll_create(void)
{
    return (int)ret(epoll_create1(EPOLL_CLOEXEC));
}

int sys_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data)
{
    struct epoll_event ev = {.events = events, .data.u64 = data};
    return (int)ret(epoll_ctl(epfd, op, fd, &ev));
}

int sys_epoll_wait(int epfd, struct epoll_event *ev, int n, int timeout_ms,
                   const sigset_t *unblocked)
{
    return (int)ret(epoll_pwait(epfd, ev, n, timeout_ms, unblocked));
}

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

/* ---- processes and signals ----------------------------------------------- */

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

static void fill_set(sigset_t *set, const int *sigs, size_t n)
{
    sigemptyset(set);
    for (size_t i = 0; i < n; i++)
        sigaddset(set, sigs[i]);
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

int sys_exit_status(int status)
{
    if (WIFSIGNALED(status))
        return -WTERMSIG(status);
    return WEXITSTATUS(status);
}

/* ---- start-up helpers ------------------------------------------------------ */

int sys_realpath(const char *path, char *out, size_t cap)
{
    char *p = realpath(path, NULL);
    if (!p)
        return -errno;
    size_t n = strlen(p);
    if (n >= cap) {
        free(p);
        return -ENAMETOOLONG;
    }
    memcpy(out, p, n + 1);
    free(p);
    return 0;
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
    if (inet_pton(AF_INET, text, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *len = sizeof *a4;
        return 0;
    }
    if (inet_pton(AF_INET6, text, &a6->sin6_addr) == 1) {
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
    if (addr->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)addr;
        inet_ntop(AF_INET6, &a6->sin6_addr, host, sizeof host);
        snprintf(out, cap, "[%s]", host);
    } else {
        const struct sockaddr_in *a4 = (const struct sockaddr_in *)addr;
        inet_ntop(AF_INET, &a4->sin_addr, host, sizeof host);
        snprintf(out, cap, "%s", host);
    }
    return 0;
}

int sys_drop_privileges(const char *user, const char *group, const char *chroot_dir)
{
    if (geteuid() != 0)
        return -EPERM;
    errno = 0;
    struct passwd *pw = getpwnam(user);
    if (!pw)
        return errno ? -errno : -ENOENT;
    uid_t uid = pw->pw_uid;
    gid_t gid = pw->pw_gid;
    if (group) {
        errno = 0;
        struct group *gr = getgrnam(group);
        if (!gr)
            return errno ? -errno : -ENOENT;
        gid = gr->gr_gid;
    }
    /* The names are looked up (passwd, group) before the chroot, which
     * has no /etc; the ids are set after it, which needs root. */
    if (initgroups(pw->pw_name, gid) < 0)
        return -errno;
    if (chroot_dir && (chroot(chroot_dir) < 0 || chdir("/") < 0))
        return -errno;
    if (setgid(gid) < 0 || setuid(uid) < 0)
        return -errno;
    /* setuid as root sets the saved uid too; make sure root is gone. */
    if (setuid(0) == 0)
        return -EPERM;
    return 0;
}

int sys_group_id(const char *group, unsigned *gid)
{
    errno = 0;
    struct group *gr = getgrnam(group);
    if (!gr)
        return errno ? -errno : -ENOENT;
    *gid = gr->gr_gid;
    return 0;
}

int sys_open_log_at(int dirfd, const char *name)
{
    return (int)ret(
        openat(dirfd, name, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
}

int sys_user_ids(const char *user, unsigned *uid, unsigned *gid)
{
    errno = 0;
    struct passwd *pw = getpwnam(user);
    if (!pw)
        return errno ? -errno : -ENOENT;
    *uid = pw->pw_uid;
    *gid = pw->pw_gid;
    return 0;
}

int sys_fchown(int fd, unsigned uid, unsigned gid)
{
    return (int)ret(fchown(fd, uid, gid));
}

int sys_check_user(const char *user)
{
    if (geteuid() != 0)
        return -EPERM;
    return getpwnam(user) ? 0 : -ENOENT;
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

int sys_write_pidfile(const char *path, int pid)
{
    char text[24];
    int n = snprintf(text, sizeof text, "%d\n", pid);
    if (pid < 0) {
        /* Only a check: leave no file behind that a watcher could take for
         * the real one. */
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd >= 0) {
            close(fd);
            unlink(path);
            return 0;
        }
        if (errno != EEXIST)
            return -errno;
        fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
            return -errno;
        close(fd);
        return 0;
    }
    char tmp[PATH_MAX];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return -ENAMETOOLONG;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return -errno;
    ssize_t w = write(fd, text, (size_t)n);
    int e = w == n ? 0 : (w < 0 ? -errno : -EIO);
    close(fd);
    if (!e && rename(tmp, path) < 0)
        e = -errno;
    if (e)
        unlink(tmp);
    return e;
}

bool sys_is_root(void)
{
    return geteuid() == 0;
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

/* ---- production: Unix sockets, upgrades ---------------------------------- */

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
    struct stat st;
    int r = unix_addr(path, &sa);
    if (r < 0)
        return r;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : -errno;
    if (!S_ISSOCK(st.st_mode))
        return -EEXIST;
    /* A socket file: stale unless somebody accepts on it. */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    r = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    int e = errno;
    close(fd);
    if (r == 0 || e == EAGAIN) /* EAGAIN: a listener whose queue is full */
        return -EADDRINUSE;
    return e == ECONNREFUSED ? 0 : -e;
}

int sys_listen_unix(const char *path, int backlog, unsigned mode, int uid, int gid)
{
    struct sockaddr_un sa;
    int r = unix_addr(path, &sa);
    if (r < 0 || (r = sys_unix_path_free(path)) < 0)
        return r;
    unlink(path); /* a stale socket, or nothing */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    /* Created owner-only, then opened up to `mode` once owned right, so
     * nobody can connect in between with more rights than asked for. */
    mode_t old = umask(0177);
    r = bind(fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (r < 0 || (uid >= 0 && chown(path, (uid_t)uid, (gid_t)gid) < 0) ||
        chmod(path, (mode_t)mode) < 0 || listen(fd, backlog) < 0) {
        int e = errno;
        if (r == 0)
            unlink(path);
        close(fd);
        return -e;
    }
    return fd;
}

int sys_local_addr(int fd, struct sockaddr_storage *addr, socklen_t *len)
{
    *len = sizeof *addr;
    return (int)ret(getsockname(fd, (struct sockaddr *)addr, len));
}

int sys_is_reuseport(int fd)
{
    int on = 0;
    socklen_t len = sizeof on;
    if (getsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, &len) < 0)
        return -errno;
    return on != 0;
}

int sys_exe_path(char *out, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    if (n < 0)
        return -errno;
    out[n] = '\0';
    return 0;
}

int sys_rename(const char *from, const char *to)
{
    return (int)ret(rename(from, to));
}

int sys_lock(int fd, bool on)
{
    return (int)ret(flock(fd, on ? LOCK_EX : LOCK_UN));
}

int sys_owner_ids(const char *spec, unsigned *uid, unsigned *gid)
{
    char user[256];
    const char *colon = strchr(spec, ':');
    size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
    if (n == 0 || n >= sizeof user)
        return -ENOENT;
    memcpy(user, spec, n);
    user[n] = '\0';
    errno = 0;
    struct passwd *pw = getpwnam(user);
    if (!pw)
        return errno ? -errno : -ENOENT;
    *uid = pw->pw_uid;
    *gid = pw->pw_gid;
    if (colon) {
        errno = 0;
        struct group *gr = getgrnam(colon + 1);
        if (!gr)
            return errno ? -errno : -ENOENT;
        *gid = gr->gr_gid;
    }
    return 0;
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

/* SPDX-License-Identifier: MIT */
/*
 * sys_libc_net.c - sys.h's sockets over glibc (the full build; the common
 * rules are in sys_libc.h): sending (MSG_NOSIGNAL, MSG_MORE, sendfile) and
 * receiving, TCP and Unix listeners, socket options, epoll, and the numeric
 * addresses of --addr and --status (inet_pton, no resolver). The jobs are
 * pith-tiny's (sys_raw_net.c), so either build's file is found by job.
 */
#include "sys/sys.h"

#include "sys/sys_libc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

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

/* ---- numeric addresses --------------------------------------------------- */

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

/* ---- Unix sockets, upgrades ---------------------------------------------- */

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

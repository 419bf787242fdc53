/* SPDX-License-Identifier: MIT */
/*
 * sys_raw_net.c - sys.h's sockets over raw system calls (pith-tiny; the
 * common rules are in sys_raw.h): sending and receiving, TCP and Unix
 * listeners, socket options, epoll, and the numeric addresses of --addr and
 * --status (inet_pton's rules, no resolver).
 */
#include "sys/sys.h"

#include "core/bytes.h"
#include "core/netaddr.h"
#include "sys/sys_raw.h"

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
    /* A small receive buffer, as in sys_libc_net.c: pith reads only heads. */
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

/* inet_pton's rules (glibc): four decimal octets without leading zeros, or
 * groups of 1-4 hex digits with at most one "::" and an IPv4 tail; core's
 * parser for PROXY headers and --trusted-proxy reads exactly these. */
int sys_parse_addr(const char *text, unsigned port, struct sockaddr_storage *addr, socklen_t *len)
{
    struct span s = span_make(text, strlen(text));
    struct net_addr a;
    bool v4;
    memset(addr, 0, sizeof *addr);
    if (s.n >= 2 && s.p[0] == '[' && s.p[s.n - 1] == ']')
        s = span_make(s.p + 1, s.n - 2);
    if (!net_addr_parse(s, &a, &v4))
        return -EINVAL;
    struct sockaddr_in *a4 = (struct sockaddr_in *)addr;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)addr;
    if (v4) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        memcpy(&a4->sin_addr, a.b + 12, 4); /* net_addr keeps IPv4 as ::ffff:a.b.c.d */
        *len = sizeof *a4;
    } else {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        memcpy(a6->sin6_addr.s6_addr, a.b, 16);
        *len = sizeof *a6;
    }
    return 0;
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

/* SPDX-License-Identifier: MIT */
/*
 * h3_udp.c - HTTP/3's UDP sockets: the master binds one per worker on the
 * TLS listener's address and port, all in one SO_REUSEPORT group; a worker
 * receives datagrams in batches (recvmmsg) with the local address each was
 * sent to (IP_PKTINFO / IPV6_PKTINFO: a wildcard-bound socket must answer
 * from that address, RFC 9000 §9) and its ECN bits, and sends a train of
 * equal-sized datagrams in one sendmsg with UDP GSO (UDP_SEGMENT, Linux
 * 4.18) where the kernel has it.
 *
 * Like loop_uring.c for the ring, this is the one file of src/http3 that
 * makes system calls: datagram I/O with control messages has no place in
 * src/sys's stream-shaped interface yet.
 */
#include "http3/h3_internal.h"

#include "sys/sys.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

#define CMSG_ROOM 128

struct h3_io {
    struct mmsghdr msg[H3_RECV_BATCH];
    struct iovec iov[H3_RECV_BATCH];
    struct sockaddr_storage peer[H3_RECV_BATCH];
    char cmsg[H3_RECV_BATCH][CMSG_ROOM];
    uint8_t buf[H3_RECV_BATCH][H3_RECV_BUF];
    struct sockaddr_storage bound; /* the socket's own address (a wildcard or not) */
    socklen_t bound_len;
    bool wildcard;
};

static int set_int(int fd, int level, int opt, int v)
{
    return setsockopt(fd, level, opt, &v, sizeof v) < 0 ? -errno : 0;
}

/* The options every socket of the group gets: the local address and ECN
 * of each datagram, no fragments (RFC 9000 §14: DF set), big buffers. */
static int options(int fd, int family)
{
    int r = set_int(fd, SOL_SOCKET, SO_REUSEPORT, 1);
    if (family == AF_INET6) {
        r = r ? r : set_int(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1);
        r = r ? r : set_int(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, 1);
        set_int(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, IP_PMTUDISC_PROBE);
    }
    /* Also on a dual-stack IPv6 socket: IPv4 datagrams report these. */
    set_int(fd, IPPROTO_IP, IP_PKTINFO, 1);
    set_int(fd, IPPROTO_IP, IP_RECVTOS, 1);
    set_int(fd, IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_PROBE);
    set_int(fd, SOL_SOCKET, SO_RCVBUF, 4 << 20);
    set_int(fd, SOL_SOCKET, SO_SNDBUF, 4 << 20);
    return r;
}

int h3_udp_bind(const struct sockaddr_storage *addr, socklen_t len, int *fds, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        int fd = socket(addr->ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -errno;
        int r = 0;
        if (addr->ss_family == AF_INET6)
            r = set_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, 0); /* as the TCP listener */
        r = r ? r : options(fd, addr->ss_family);
        if (!r && bind(fd, (const struct sockaddr *)addr, len) < 0)
            r = -errno;
        if (r < 0) {
            close(fd);
            return r;
        }
        fds[i] = fd;
    }
    return 0;
}

bool h3_udp_port_free(const struct sockaddr_storage *addr, socklen_t len)
{
    int fd = socket(addr->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    int r = addr->ss_family == AF_INET6 ? set_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, 0) : 0;
    if (!r && bind(fd, (const struct sockaddr *)addr, len) < 0)
        r = -errno;
    close(fd);
    return r == 0;
}

int h3_udp_probe_gso(int fd)
{
    int v = 0;
    socklen_t l = sizeof v;
    return getsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &v, &l) < 0 ? -errno : 0;
}

struct h3_io *h3_io_new(void)
{
    return sys_map(sizeof(struct h3_io));
}

void h3_io_free(struct h3_io *io)
{
    sys_unmap(io, sizeof *io);
}

/* The bound address, once: a socket bound to one address answers from it
 * without a control message. */
static void learn_bound(struct h3_worker *hw)
{
    struct h3_io *io = hw->io;
    if (io->bound_len)
        return;
    io->bound_len = sizeof io->bound;
    getsockname(hw->fd, (struct sockaddr *)&io->bound, &io->bound_len);
    if (io->bound.ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&io->bound;
        io->wildcard = IN6_IS_ADDR_UNSPECIFIED(&a->sin6_addr);
    } else {
        io->wildcard = ((struct sockaddr_in *)&io->bound)->sin_addr.s_addr == 0;
    }
}

/* The local address (the bound one, or the datagram's destination) and the
 * ECN codepoint from the control messages. */
static void read_cmsgs(struct h3_io *io, struct msghdr *m, struct h3_path *path)
{
    path->local = io->bound;
    path->local_len = io->bound_len;
    path->ecn = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
        if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO && io->wildcard) {
            struct in6_pktinfo pi;
            memcpy(&pi, CMSG_DATA(c), sizeof pi);
            ((struct sockaddr_in6 *)&path->local)->sin6_addr = pi.ipi6_addr;
        } else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO && io->wildcard) {
            struct in_pktinfo pi;
            memcpy(&pi, CMSG_DATA(c), sizeof pi);
            if (path->local.ss_family == AF_INET) {
                ((struct sockaddr_in *)&path->local)->sin_addr = pi.ipi_addr;
            } else {
                /* An IPv4 datagram on a dual-stack socket: ::ffff:a.b.c.d */
                struct in6_addr *a6 = &((struct sockaddr_in6 *)&path->local)->sin6_addr;
                memset(a6, 0, sizeof *a6);
                a6->s6_addr[10] = a6->s6_addr[11] = 0xff;
                memcpy(&a6->s6_addr[12], &pi.ipi_addr, 4);
            }
        } else if ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) ||
                   (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS)) {
            int v = 0;
            memcpy(&v, CMSG_DATA(c), c->cmsg_len > CMSG_LEN(1) ? sizeof(int) : 1);
            path->ecn = (uint8_t)(v & 3); /* RFC 3168's two bits */
        }
    }
}

bool h3_udp_path(struct h3_worker *hw, const struct msghdr *m, struct h3_path *path)
{
    if (m->msg_flags & MSG_TRUNC)
        return false; /* larger than any packet a client may send us */
    learn_bound(hw);
    read_cmsgs(hw->io, (struct msghdr *)(uintptr_t)m, path);
    socklen_t len = m->msg_namelen < sizeof path->peer ? m->msg_namelen : sizeof path->peer;
    memset(&path->peer, 0, sizeof path->peer);
    memcpy(&path->peer, m->msg_name, len);
    path->peer_len = len;
    return true;
}

int h3_udp_recv(struct h3_worker *hw,
                void (*got)(struct h3_worker *hw, uint8_t *p, size_t n, const struct h3_path *path))
{
    struct h3_io *io = hw->io;
    for (unsigned i = 0; i < H3_RECV_BATCH; i++) {
        io->iov[i] = (struct iovec){io->buf[i], H3_RECV_BUF};
        io->msg[i].msg_hdr = (struct msghdr){
            .msg_name = &io->peer[i],
            .msg_namelen = sizeof io->peer[i],
            .msg_iov = &io->iov[i],
            .msg_iovlen = 1,
            .msg_control = io->cmsg[i],
            .msg_controllen = CMSG_ROOM,
        };
    }
    int n = recvmmsg(hw->fd, io->msg, H3_RECV_BATCH, MSG_DONTWAIT, NULL);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -errno;
    for (int i = 0; i < n; i++) {
        struct h3_path path;
        if (h3_udp_path(hw, &io->msg[i].msg_hdr, &path))
            got(hw, io->buf[i], io->msg[i].msg_len, &path);
    }
    return n;
}

/* An IPv4 peer, or one an IPv6 socket reaches by a v4-mapped address (its
 * datagrams take IPv4's control messages). */
static bool peer_is_ipv4(const struct h3_path *path)
{
    if (path->peer.ss_family == AF_INET)
        return true;
    const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&path->peer;
    return IN6_IS_ADDR_V4MAPPED(&a->sin6_addr);
}

/* The ECN codepoint as IP_TOS or IPV6_TCLASS (the rest of the byte 0). */
static size_t write_ecn(const struct h3_path *path, struct cmsghdr *c, uint8_t ecn)
{
    int v = ecn & 3;
    bool v4 = peer_is_ipv4(path);
    c->cmsg_level = v4 ? IPPROTO_IP : IPPROTO_IPV6;
    c->cmsg_type = v4 ? IP_TOS : IPV6_TCLASS;
    c->cmsg_len = CMSG_LEN(sizeof v);
    memcpy(CMSG_DATA(c), &v, sizeof v);
    return CMSG_SPACE(sizeof v);
}

/* The source address (a wildcard-bound socket's), the ECN codepoint and the
 * GSO segment size as control messages. */
static size_t write_cmsgs(const struct h3_worker *hw, const struct h3_path *path, char *room,
                          size_t seg, size_t n, uint8_t ecn)
{
    struct msghdr m = {.msg_control = room, .msg_controllen = CMSG_ROOM};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    size_t used = 0;
    if (hw->io->wildcard && path->local.ss_family == AF_INET6) {
        struct in6_pktinfo pi = {.ipi6_addr =
                                     ((const struct sockaddr_in6 *)&path->local)->sin6_addr};
        c->cmsg_level = IPPROTO_IPV6;
        c->cmsg_type = IPV6_PKTINFO;
        c->cmsg_len = CMSG_LEN(sizeof pi);
        memcpy(CMSG_DATA(c), &pi, sizeof pi);
        used += CMSG_SPACE(sizeof pi);
        c = (struct cmsghdr *)(void *)(room + used);
    } else if (hw->io->wildcard && path->local.ss_family == AF_INET) {
        struct in_pktinfo pi = {.ipi_spec_dst =
                                    ((const struct sockaddr_in *)&path->local)->sin_addr};
        c->cmsg_level = IPPROTO_IP;
        c->cmsg_type = IP_PKTINFO;
        c->cmsg_len = CMSG_LEN(sizeof pi);
        memcpy(CMSG_DATA(c), &pi, sizeof pi);
        used += CMSG_SPACE(sizeof pi);
        c = (struct cmsghdr *)(void *)(room + used);
    }
    if (ecn) {
        used += write_ecn(path, c, ecn);
        c = (struct cmsghdr *)(void *)(room + used);
    }
    if (n > seg) {
        uint16_t s = (uint16_t)seg;
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof s);
        memcpy(CMSG_DATA(c), &s, sizeof s);
        used += CMSG_SPACE(sizeof s);
    }
    return used;
}

static ssize_t send_one(struct h3_worker *hw, const struct h3_path *path, const uint8_t *p,
                        size_t n, size_t seg, uint8_t ecn)
{
    char room[CMSG_ROOM] __attribute__((aligned(8)));
    memset(room, 0, sizeof room);
    struct iovec iov = {(void *)(uintptr_t)p, n};
    struct msghdr m = {
        .msg_name = (void *)(uintptr_t)&path->peer,
        .msg_namelen = path->peer_len,
        .msg_iov = &iov,
        .msg_iovlen = 1,
        .msg_control = room,
    };
    m.msg_controllen = write_cmsgs(hw, path, room, seg, n, ecn);
    if (!m.msg_controllen)
        m.msg_control = NULL;
    ssize_t r;
    do
        r = sendmsg(hw->fd, &m, MSG_DONTWAIT);
    while (r < 0 && errno == EINTR);
    return r < 0 ? -errno : r;
}

int h3_udp_send_marked(struct h3_worker *hw, const struct h3_path *path, const uint8_t *p, size_t n,
                       size_t seg, uint8_t ecn)
{
    if (n <= seg || hw->srv->gso) {
        ssize_t r = send_one(hw, path, p, n, seg, ecn);
        return r < 0 ? (int)r : 0;
    }
    /* No GSO: one sendmsg per datagram. */
    for (size_t at = 0; at < n; at += seg) {
        size_t len = n - at < seg ? n - at : seg;
        ssize_t r = send_one(hw, path, p + at, len, len, ecn);
        if (r < 0)
            return (int)r;
    }
    return 0;
}

int h3_udp_send(struct h3_worker *hw, const struct h3_path *path, const uint8_t *p, size_t n,
                size_t seg)
{
    return h3_udp_send_marked(hw, path, p, n, seg, 0);
}

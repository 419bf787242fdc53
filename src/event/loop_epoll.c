/* SPDX-License-Identifier: MIT */
/*
 * loop_epoll.c - the epoll backend: level-triggered readiness, and the
 * system call done on it (recv, sendmsg). An HTTP/1 connection is watched
 * for EPOLLIN or EPOLLOUT, never both: reading and writing alternate, and a
 * change of interest costs an epoll_ctl only when a response blocks. A
 * duplex one (HTTP/2) is watched for both while a send waits, and reads
 * before it writes when both are ready.
 * Everything a keep-alive request costs here is one recv and one sendmsg
 * (plus a share of one epoll_wait).
 */
#include "base/worker.h"
#include "event/conn.h"
#include "event/loop.h"
#include "event/transport.h"
#include "sys/sys.h"

#include <errno.h>
#include <sys/epoll.h>

#define TAG_LISTENER     0
#define TAG_SIGNAL       1
#define TAG_TLS_LISTENER 2 /* HTTPS (issue 10) */
#define TAG_UDP          3 /* HTTP/3's UDP socket (issue 34) */
#define TAG_CONN0        4
#define EVENTS_MAX       256
#define ACCEPT_BATCH     64 /* accepts per wake-up, so reads are not starved */

static uint64_t tag_of(const struct worker *w, const struct conn *c)
{
    return TAG_CONN0 + (uint64_t)(c - w->conns);
}

static void watch(struct worker *w, struct conn *c, uint32_t events)
{
    if (c->events != events) {
        c->events = events;
        sys_epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, events, tag_of(w, c));
    }
}

static int ep_init(struct worker *w)
{
    w->epfd = sys_epoll_create();
    if (w->epfd < 0)
        return w->epfd;
    /* HTTP/3: the UDP socket is read to EAGAIN on each readiness (h3_readable). */
    int r = w->udp_fd < 0 ? 0 : sys_epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->udp_fd, EPOLLIN, TAG_UDP);
    return r < 0 ? r : sys_epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->sigfd, EPOLLIN, TAG_SIGNAL);
}

/* EPOLLEXCLUSIVE (4.5): where workers share one listener (inherited from
 * systemd or an upgrade, or a Unix socket), a connection wakes one of them,
 * not all; with a listener of its own it changes nothing. It is only
 * allowed with EPOLL_CTL_ADD, which is why the listener is added and
 * removed rather than modified. */
static void ep_listen(struct worker *w, bool on)
{
    int op = on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL;
    if (w->listen_fd >= 0)
        sys_epoll_ctl(w->epfd, op, w->listen_fd, EPOLLIN | EPOLLEXCLUSIVE, TAG_LISTENER);
    if (w->tls_listen_fd >= 0)
        sys_epoll_ctl(w->epfd, op, w->tls_listen_fd, EPOLLIN | EPOLLEXCLUSIVE, TAG_TLS_LISTENER);
}

static int ep_conn_start(struct worker *w, struct conn *c)
{
    c->events = EPOLLIN;
    return sys_epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, EPOLLIN, tag_of(w, c));
}

static void ep_want_read(struct worker *w, struct conn *c)
{
    watch(w, c, EPOLLIN);
}

/* What a connection waits for while its send waits for room. */
static uint32_t room_events(const struct conn *c)
{
    return c->duplex ? EPOLLOUT | EPOLLIN : EPOLLOUT;
}

static void ep_want_write(struct worker *w, struct conn *c)
{
    watch(w, c, room_events(c));
}

static ssize_t ep_send(struct worker *w, struct conn *c, const struct iovec *iov, unsigned n,
                       bool more)
{
    ssize_t r = sys_sendv(c->fd, iov, (int)n, more);
    if (r == -EAGAIN)
        watch(w, c, room_events(c)); /* writable() when there is room */
    return r;
}

static ssize_t ep_sendfile(struct worker *w, struct conn *c, int fd, uint64_t *off, size_t n)
{
    ssize_t r = sys_sendfile(c->fd, fd, off, n);
    if (r == -EAGAIN)
        watch(w, c, room_events(c));
    return r;
}

static void ep_close(struct worker *w, struct conn *c)
{
    (void)w;
    sys_close(c->fd); /* also leaves the epoll set */
}

static bool ep_busy(struct worker *w, const struct conn *c)
{
    (void)w;
    (void)c;
    return false; /* every call completed before it returned */
}

static bool ep_sending(struct worker *w, const struct conn *c)
{
    (void)w;
    (void)c;
    return false; /* a send that returns -EAGAIN met a full socket */
}

static bool ep_accept_busy(struct worker *w)
{
    (void)w;
    return false; /* accept4 is ours to call: none happens after EPOLL_CTL_DEL */
}

static void accept_batch(struct worker *w, bool tls)
{
    for (int i = 0; i < ACCEPT_BATCH && w->listening; i++) {
        struct sockaddr_storage peer;
        int fd = sys_accept(tls ? w->tls_listen_fd : w->listen_fd, &peer);
        if (fd == -EAGAIN)
            return;
        if (fd == -EINTR || fd == -ECONNABORTED)
            continue;
        if (fd < 0) {
            w->events->accept_failed(w, fd);
            return;
        }
        w->events->accepted(w, fd, &peer, tls);
    }
}

/* Readiness for reading: the bytes go where the transport says, or, while
 * lingering, nowhere (up to 16 KiB a wake-up). */
static void readable(struct worker *w, struct conn *c)
{
    if (c->state == CONN_LINGER) {
        char sink[4096];
        ssize_t n = 0;
        for (int i = 0; i < 4; i++) {
            n = sys_recv(c->fd, sink, sizeof sink);
            if (n <= 0)
                break;
        }
        c->tp->received(w, c, n);
        return;
    }
    size_t room;
    char *p = c->tp->recv_room(w, c, &room);
    if (room == 0) {
        /* No room: not a read of nothing. The socket leaves the set until
         * the transport, having taken what it holds, asks again
         * (want_read); level-triggered, it would wake us at once. A send
         * waiting for room (a duplex connection's) goes on waiting. */
        watch(w, c, c->events & ~(uint32_t)EPOLLIN);
        return;
    }
    c->tp->received(w, c, sys_recv(c->fd, p, room));
}

/* A duplex connection: what the client sent first (it may change what is
 * sent next), then the room, unless the read ended the connection or the
 * send waiting for room is over. */
static void dispatch_duplex(struct worker *w, struct conn *c, uint32_t events)
{
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        readable(w, c);
        if (c->state == CONN_READ && !c->duplex && (c->events & EPOLLOUT))
            watch(w, c, EPOLLOUT); /* the peer ended its stream: room only, from now */
    }
    if ((events & EPOLLOUT) && c->state == CONN_READ && (c->events & EPOLLOUT))
        c->tp->writable(w, c);
}

static void dispatch(struct worker *w, struct conn *c, uint32_t events)
{
    switch (c->state) {
    case CONN_READ:
        if (c->duplex) {
            dispatch_duplex(w, c, events);
            break;
        }
        /* Writability while reading: a TLS handshake whose reply did not
         * fit the socket at once, or a TLS read that must send first. */
        if ((events & EPOLLOUT) && !(events & (EPOLLHUP | EPOLLERR)))
            c->tp->writable(w, c);
        else if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
            readable(w, c);
        break;
    case CONN_LINGER:
        if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
            readable(w, c);
        break;
    case CONN_WRITE:
        if (events & (EPOLLERR | EPOLLHUP))
            conn_close(w, c, CLOSE_ERROR);
        else if (events & EPOLLOUT)
            c->tp->writable(w, c);
        break;
    default: break;
    }
}

static void ep_wait(struct worker *w, int timeout_ms)
{
    struct epoll_event ev[EVENTS_MAX];
    int n = sys_epoll_wait(w->epfd, ev, EVENTS_MAX, timeout_ms, NULL);
    w->events->clock(w);
    for (int i = 0; i < n && !w->exit_now; i++) {
        uint64_t tag = ev[i].data.u64;
        if (tag == TAG_LISTENER || tag == TAG_TLS_LISTENER) {
            accept_batch(w, tag == TAG_TLS_LISTENER);
        } else if (tag == TAG_UDP) {
            w->events->datagrams(w);
        } else if (tag == TAG_SIGNAL) {
            int sig;
            while ((sig = sys_signalfd_read(w->sigfd)) > 0)
                w->events->signal(w, sig);
        } else {
            struct conn *c = &w->conns[tag - TAG_CONN0];
            if (c->state != CONN_FREE && c->state != CONN_CLOSING)
                dispatch(w, c, ev[i].events);
        }
    }
}

const struct loop_ops loop_epoll = {
    .name = "epoll",
    .init = ep_init,
    .wait = ep_wait,
    .listen = ep_listen,
    .conn_start = ep_conn_start,
    .want_read = ep_want_read,
    .want_write = ep_want_write,
    .send = ep_send,
    .sendfile = ep_sendfile,
    .close = ep_close,
    .busy = ep_busy,
    .sending = ep_sending,
    .accept_busy = ep_accept_busy,
};

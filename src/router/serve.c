/* SPDX-License-Identifier: MIT */
/*
 * serve.c - one router-profile worker's connection loop: an epoll loop
 * (level-triggered) over at most ROUTER_CONNS connections, each reading one
 * head into its own buffer, answering it (answer.c: a head written straight
 * into the out buffer, no output queue), then sending it and the body by
 * sendfile, from the out buffer (error pages) or as listing chunks; one
 * deadline per connection found by a scan; lingering closes; the drain on
 * SIGTERM. docs/DESIGN.md, "The router profile".
 */
#include "core/bytes.h"
#include "core/date.h"
#include "core/http_parse.h"
#include "router/worker.h"

#include <errno.h>

#define LINGER_MS  2000
#define GRACE_MS   10000
#define TAG_LISTEN (~(uint64_t)0)

static int ep, nconns;
static bool paused;      /* the listener is out of the epoll set */
static int64_t retry_ms; /* paused out of descriptors: watch it again then (0: no) */
static int64_t grace_end;
static volatile int got_term, got_hup;

/* ---- connections ------------------------------------------------------------------- */

/* Watches the listener or stops (at the connection cap, out of
 * descriptors, draining): a listener that stays readable in the
 * level-triggered set while accept4 fails would spin the worker. */
static void listen_on(bool on)
{
    if (paused != on)
        return;
    paused = !on;
    retry_ms = 0;
    sys_epoll_ctl(ep, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, router.listen_fd, EPOLLIN, TAG_LISTEN);
}

static void want(struct rconn *c, uint32_t ev)
{
    if (c->events != ev)
        sys_epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, ev, (uint64_t)(c - wm.conns));
    c->events = ev;
}

/* c's own buffers back to the kernel: an idle connection costs its rconn. */
static void disown(struct rconn *c)
{
    if (c->owns)
        sys_release(OWN(c), sizeof *OWN(c));
    c->owns = false;
}

static void drop(struct rconn *c)
{
    if (c->phase == P_SEND) /* an answer cut short (a reset, a timeout) is logged too */
        log_request(c);
    if (c->file_fd >= 0)
        sys_close(c->file_fd);
    if (c->dir_fd >= 0)
        sys_close(c->dir_fd);
    sys_close(c->fd);
    disown(c);
    c->phase = P_FREE;
    nconns--;
    if (!draining) /* a slot and a descriptor are free again */
        listen_on(true);
}

/* What must outlive this event moves from the scratch buffers into the
 * connection's own: the request's bytes (the log's spans rebased) and the
 * part of the head not sent yet. */
static void own(struct rconn *c)
{
    struct rbuf *o = OWN(c);
    if (c->inp == wm.scratch && c->have) {
        c->owns = true;
        mem_copy(o->in, wm.scratch, c->have);
        struct span *sp[] = {&c->method, &c->target, &c->referer, &c->user_agent};
        for (int i = 0; i < 4; i++)
            if (sp[i]->p)
                sp[i]->p = o->in + (sp[i]->p - wm.scratch);
        c->inp = o->in;
    }
    if (c->outp != o->out) { /* in the scratch buffer */
        c->owns = c->owns || c->out_len > c->out_off;
        mem_copy(o->out, c->outp + c->out_off, c->out_len - c->out_off);
        c->out_len -= c->out_off;
        c->out_off = 0;
        c->outp = o->out;
    }
}

static void done(struct rconn *c)
{
    log_request(c);
    if (c->close_after) {
        /* Unread bytes would make close() send a reset that can destroy
         * the answer in flight: shut down, then drain for a while. */
        sys_shutdown_write(c->fd);
        c->phase = P_LINGER;
        c->deadline = now_ms + LINGER_MS;
        want(c, EPOLLIN);
        return;
    }
    c->have -= c->used;
    mem_move(c->inp, c->inp + c->used, c->have);
    c->used = 0;
    c->phase = P_READ;
    c->idle = c->have == 0;
    if (c->idle)
        disown(c);
    c->deadline = now_ms + (c->idle ? router.t_keepalive : router.t_header);
}

/* Sends what is pending; at its end the exchange is done. */
static void pump(struct rconn *c)
{
    for (;;) {
        ssize_t n;
        if (c->out_off < c->out_len) {
            n = sys_send(c->fd, c->outp + c->out_off, c->out_len - c->out_off, c->file_left > 0);
            if (n > 0)
                c->out_off += (uint32_t)n;
        } else if (c->file_left) {
            size_t chunk = c->file_left > (1u << 30) ? (1u << 30) : (size_t)c->file_left;
            n = sys_sendfile(c->fd, c->file_fd, &c->file_off, chunk);
            if (n == 0)
                n = -EIO; /* the file shrank: the promised length cannot be kept */
            if (n > 0) {
                c->file_left -= (uint64_t)n;
                c->body_bytes += (uint64_t)n;
            }
        } else if (c->dir_fd >= 0) {
            if (listing_fill(c))
                continue;
            n = -EAGAIN; /* the socket is writable: epoll answers at once */
        } else {
            if (c->file_fd >= 0)
                sys_close(c->file_fd);
            c->file_fd = -1;
            done(c);
            return;
        }
        if (n == -EAGAIN) {
            own(c);
            want(c, EPOLLOUT);
            return;
        }
        if (n < 0) {
            drop(c);
            return;
        }
        c->deadline = now_ms + router.t_send;
    }
}

/* Answers the complete heads in inp, one after another (a loop, not a
 * recursion: a buffer may hold a thousand pipelined requests). */
static void drive(struct rconn *c)
{
    while (c->phase == P_READ && c->have) {
        long r = http_parse_request(c->inp, c->have, &req);
        if (r == HTTP_PARSE_AGAIN)
            break;
        answer_start(c, r);
        pump(c);
    }
    if (c->phase == P_READ) {
        own(c);
        want(c, EPOLLIN);
    }
}

static void on_input(struct rconn *c)
{
    if (!c->have)
        c->inp = wm.scratch;
    bool linger = c->phase == P_LINGER;
    char *p = linger ? wm.scratch : c->inp + c->have;
    ssize_t n = sys_recv(c->fd, p, linger ? OUT_CAP : HTTP_MAX_HEAD - c->have);
    if (n == -EAGAIN)
        return;
    if (n <= 0) {
        drop(c);
        return;
    }
    if (linger)
        return;
    if (c->idle) /* the next request's first byte: its head's deadline */
        c->deadline = now_ms + router.t_header;
    c->idle = false;
    c->have += (uint32_t)n;
    drive(c);
}

static void on_accept(void)
{
    for (;;) {
        if (nconns == router.max_conns) {
            listen_on(false);
            return;
        }
        struct sockaddr_storage peer;
        int fd = sys_accept(router.listen_fd, &peer);
        if (fd == -ECONNABORTED)
            continue;
        if (fd == -EAGAIN)
            return;
        if (fd < 0) {
            /* Out of descriptors (EMFILE, ENFILE: something else holds
             * them) or memory: asleep until a connection closes, or a
             * second passes. */
            listen_on(false);
            retry_ms = now_ms + 1000;
            return;
        }
        struct rconn *c = wm.conns;
        while (c->phase != P_FREE)
            c++;
        /* Field by field: the buffers stay untouched (and unmapped) until used. */
        c->fd = fd;
        c->file_fd = c->dir_fd = -1;
        c->phase = P_READ;
        c->idle = false;
        c->events = EPOLLIN;
        c->deadline = now_ms + router.t_header;
        c->have = c->used = 0;
        c->owns = false;
        c->peer = peer;
        sys_set_nodelay(fd);
        sys_epoll_ctl(ep, EPOLL_CTL_ADD, fd, EPOLLIN, (uint64_t)(c - wm.conns));
        nconns++;
    }
}

/* Expires deadlines (408 for a partial head, else a silent close) and
 * returns the milliseconds until the next one. */
static int sweep(void)
{
    int64_t next = draining ? grace_end : now_ms + 60000;
    if (retry_ms && !draining && now_ms >= retry_ms)
        listen_on(true);
    if (retry_ms && retry_ms < next)
        next = retry_ms;
    for (struct rconn *c = wm.conns; c < wm.conns + ROUTER_CONNS; c++) {
        if (c->phase == P_FREE)
            continue;
        bool quiet = c->phase == P_READ && (c->idle || !c->have);
        if (draining && c->phase == P_READ && c->idle)
            drop(c);
        else if (now_ms >= c->deadline && c->phase == P_READ && !quiet)
            answer_start(c, -408), pump(c), drive(c);
        else if (now_ms >= c->deadline)
            drop(c);
        if (c->phase != P_FREE && c->deadline < next)
            next = c->deadline;
    }
    return next <= now_ms ? 0 : (int)(next - now_ms);
}

static void tick(void)
{
    now_ms = sys_now_ms();
    int64_t s = sys_now_real();
    if (s != now_sec || !date[0])
        date_format_imf(s, date);
    now_sec = s;
}

static void on_term(int sig)
{
    (void)sig;
    got_term = 1;
}

static void on_hup(int sig)
{
    (void)sig;
    got_hup = 1;
}

_Noreturn void router_worker(void)
{
    sys_die_with_parent(SIGTERM);
    if (sys_getppid() != router_master_pid)
        sys_exit(0);
    sys_signal(SIGTERM, on_term);
    sys_signal(SIGINT, on_term);
    sys_signal(SIGHUP, on_hup);
    sys_signal(SIGUSR1, on_hup);
    bufs = sys_map(sizeof(struct rbuf) * ROUTER_CONNS);
    ep = sys_epoll_create();
    if (!bufs || ep < 0)
        sys_exit(1);
    if (!log_open()) {
        router_say(router.log_path, ": cannot open the log");
        sys_exit(1);
    }
    paused = true;
    listen_on(true);
    tick();
    for (;;) {
        int wait = sweep();
        if (draining && (nconns == 0 || now_ms >= grace_end))
            sys_exit(0);
        struct epoll_event ev[32];
        int n = sys_epoll_wait(ep, ev, 32, wait, &router_unblocked);
        tick();
        if (got_term && !draining) {
            draining = true;
            grace_end = now_ms + GRACE_MS;
            /* Deregistered first: the master's copy keeps the socket open. */
            listen_on(false);
            sys_close(router.listen_fd); /* the others accept what waits */
        }
        if (got_hup) {
            got_hup = 0;
            log_open();
        }
        for (int i = 0; i < n; i++) {
            uint64_t tag = ev[i].data.u64;
            if (tag == TAG_LISTEN) {
                if (!draining)
                    on_accept();
            } else if (wm.conns[tag].phase == P_SEND) {
                pump(&wm.conns[tag]);
                drive(&wm.conns[tag]);
            } else if (wm.conns[tag].phase != P_FREE) {
                on_input(&wm.conns[tag]);
            }
        }
    }
}

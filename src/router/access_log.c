/* SPDX-License-Identifier: MIT */
/*
 * access_log.c - a router worker's access log: one line per exchange in
 * the combined format (the peer as inet_ntop writes it), appended with one
 * write, reopened on HUP/USR1. Rotation (issue 36): before each line the
 * worker checks that FILE is still the file it writes into, and follows
 * it when another worker (or logrotate) moved it; the line that takes
 * FILE past --log-max is the last of it: FILE is renamed to FILE.1 (the
 * one generation kept) under an flock of that file, so that two workers
 * never rotate twice, which would throw a whole generation away.
 */
#include "core/bytes.h"
#include "core/date.h"
#include "core/escape.h"
#include "router/worker.h"

#include <fcntl.h>

static int log_fd;                /* 0: none (no initialized data, see DESIGN.md) */
static uint64_t log_ino, log_dev; /* the file log_fd writes into */

/* log_fd to what --log names now (created when missing); false when it
 * cannot be opened (the old one is kept). */
static bool log_reopen(void)
{
    int fd = sys_open_log(router.log_path);
    if (fd < 0)
        return false;
    if (!log_fd) {
        log_fd = fd;
    } else {
        sys_dup_onto(fd, log_fd);
        sys_close(fd);
    }
    struct sys_stat st;
    if (sys_fstat(log_fd, &st) == 0)
        log_ino = st.ino, log_dev = st.dev;
    return true;
}

/* Does FILE name the file log_fd writes into? st gets FILE's stat. */
static bool log_is_live(struct sys_stat *st)
{
    return sys_fstatat(AT_FDCWD, router.log_path, st, true) == 0 && st->ino == log_ino &&
           st->dev == log_dev;
}

/* FILE to FILE.1, unless another worker rotated it first (it holds the
 * lock of the file it renames, and renames it only while FILE names it);
 * name[] is free memory for FILE.1's name. */
static void log_rotate(char *name, size_t cap)
{
    struct sys_stat st;
    struct buf b = buf_make(name, cap - 1);
    buf_put_cstr(&b, router.log_path);
    buf_put_cstr(&b, ".1");
    name[b.len] = '\0';
    sys_lock(log_fd, true);
    if (!b.full && log_is_live(&st))
        sys_rename(router.log_path, name);
    sys_lock(log_fd, false);
    log_reopen();
}

/* s escaped for the log, cut to max bytes (a line stays within its buffer). */
static void put_escaped(struct buf *b, struct span s, size_t max)
{
    escape_log(b, span_make(s.p, s.n > max ? max : s.n));
}

static void put_quoted(struct buf *b, struct span s, size_t max)
{
    buf_put_char(b, '"');
    if (s.p)
        put_escaped(b, s, max);
    else
        buf_put_char(b, '-');
    buf_put_char(b, '"');
}

/* The peer as inet_ntop writes it (RFC 5952: the longest run of two or
 * more zero groups as "::"), IPv4 dotted also when mapped into IPv6. Kept
 * rather than rt_raw.c's inet_ntop, which the full build's log matches:
 * 288 bytes less on x86-64, 384 on mips (measured, issue 36). It differs
 * only for the deprecated IPv4-compatible ::a.b.c.d, written in hex here
 * (no client connects from one: they are not routed). */
static void put_peer(struct buf *b, const struct sockaddr_storage *ss)
{
    const unsigned char *ip = ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (ss->ss_family == AF_INET)
        ip = (const unsigned char *)&((const struct sockaddr_in *)ss)->sin_addr - 12;
    if (ss->ss_family == AF_INET || mem_eq(ip, mapped, 12)) {
        for (int i = 12; i < 16; i++) {
            buf_put_u64(b, ip[i]);
            if (i < 15)
                buf_put_char(b, '.');
        }
        return;
    }
    unsigned g[8];
    int best = -1, bestn = 1;
    for (int i = 0; i < 8; i++)
        g[i] = (unsigned)ip[2 * i] << 8 | ip[2 * i + 1];
    for (int i = 0, j; i < 8; i = j + 1) {
        for (j = i; j < 8 && !g[j]; j++)
            ;
        if (j - i > bestn)
            best = i, bestn = j - i;
    }
    for (int i = 0; i < 8; i++) {
        if (i == best) {
            buf_put_cstr(b, "::");
            i += bestn - 1;
            continue;
        }
        if (i && i != best + bestn)
            buf_put_char(b, ':');
        char h[16];
        buf_put(b, h, u64_format_hex(g[i], h));
    }
}

void log_request(const struct rconn *c)
{
    if (!log_fd)
        return;
    /* The line is written into the scratch after the request's bytes, free
     * by now (what the exchange sent is gone; what another connection waits
     * to send is in its own buffer): no 8 KiB on the worker's stack. */
    char *line = scratch_after(c), host[DATE_CLF_LEN];
    struct buf b = buf_make(line, LOG_LINE_MAX);
    put_peer(&b, &c->peer);
    buf_put_cstr(&b, " - - [");
    buf_put(&b, host, date_format_clf(now_sec, host));
    buf_put_cstr(&b, "] ");
    if (c->method.p) {
        buf_put_char(&b, '"');
        put_escaped(&b, c->method, 32);
        buf_put_char(&b, ' ');
        put_escaped(&b, c->target, 1024);
        buf_put_cstr(&b, c->minor ? " HTTP/1.1\" " : " HTTP/1.0\" ");
    } else {
        buf_put_cstr(&b, "\"-\" ");
    }
    buf_put_u64(&b, (uint64_t)c->status);
    buf_put_char(&b, ' ');
    buf_put_u64(&b, c->body_bytes);
    buf_put_char(&b, ' ');
    put_quoted(&b, c->referer, 256);
    buf_put_char(&b, ' ');
    put_quoted(&b, c->user_agent, 256);
    buf_put_char(&b, '\n');
    struct sys_stat st = {0};
    bool file = log_fd != 1;
    if (file && !log_is_live(&st)) /* rotated by another worker, or moved away */
        file = log_reopen() && log_is_live(&st);
    sys_write(log_fd, line, b.len);
    if (file && st.size + b.len > router.log_max)
        log_rotate(line, LOG_LINE_MAX); /* the line is written: its memory is free */
}

bool log_open(void)
{
    if (!router.log_path)
        return true;
    if (router.log_path[0] == '-' && !router.log_path[1])
        log_fd = 1;
    else if (!log_reopen())
        return log_fd != 0;
    return true;
}

/* SPDX-License-Identifier: MIT */
/*
 * access_log.c - a router worker's access log: one line per exchange in
 * the combined format (the peer as inet_ntop writes it), appended with one
 * write, the file renamed to FILE.1 and reopened past --log-max (checked
 * every 4 KiB written), reopened on HUP/USR1.
 */
#include "core/bytes.h"
#include "core/date.h"
#include "core/escape.h"
#include "router/serve.h"

#include <fcntl.h>
#include <limits.h>

static int log_fd; /* 0: none (no initialized data, see DESIGN.md) */
static uint32_t log_unchecked;

static void log_rotate(void)
{
    struct sys_stat a, p;
    if (sys_fstat(log_fd, &a) < 0 || a.size <= router.log_max)
        return;
    if (sys_fstatat(AT_FDCWD, router.log_path, &p, true) == 0 && p.ino == a.ino && p.dev == a.dev) {
        char old[PATH_MAX + 3];
        struct buf b = buf_make(old, sizeof old - 1);
        buf_put_cstr(&b, router.log_path);
        buf_put_cstr(&b, ".1");
        old[b.len] = '\0';
        sys_rename(router.log_path, old); /* another worker may have won: fine */
    }
    int fd = sys_open_log(router.log_path);
    if (fd >= 0) {
        sys_dup_onto(fd, log_fd);
        sys_close(fd);
    }
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
 * more zero groups as "::"), IPv4 dotted also when mapped into IPv6. */
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
    char line[8192], host[DATE_CLF_LEN];
    struct buf b = buf_make(line, sizeof line);
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
    sys_write(log_fd, line, b.len);
    log_unchecked += (uint32_t)b.len;
    if (log_fd != 1 && log_unchecked >= 4096) {
        log_unchecked = 0;
        log_rotate();
    }
}

bool log_open(void)
{
    if (!router.log_path)
        return true;
    int fd = router.log_path[0] == '-' && !router.log_path[1] ? 1 : sys_open_log(router.log_path);
    if (fd < 0)
        return log_fd != 0;
    if (!log_fd)
        log_fd = fd;
    else if (fd != 1) {
        sys_dup_onto(fd, log_fd);
        sys_close(fd);
    }
    return true;
}

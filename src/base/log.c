/* SPDX-License-Identifier: MIT */
/*
 * log.c - error and access logs without printf: lines are assembled with the
 * core's buffer appenders and escapers, then written with one write(2), so
 * concurrent workers appending to one file never interleave within a line.
 * Times are UTC (+0000); the access log needs no time zone database.
 */
#include "base/log.h"

#include "core/bytes.h"
#include "core/date.h"
#include "core/escape.h"
#include "core/vhost.h"
#include "sys/sandbox.h"
#include "sys/sys.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <string.h>

static void error_write(struct buf *b)
{
    buf_put_char(b, '\n');
    if (b->full) {
        b->len = b->cap - 1;
        b->p[b->len++] = '\n';
    }
    (void)sys_write(2, b->p, b->len);
}

static void error_prefix(struct buf *b)
{
    char iso[DATE_ISO_LEN];
    buf_put(b, iso, date_format_iso(sys_now_real(), iso));
    buf_put_cstr(b, " pith[");
    buf_put_u64(b, (uint64_t)sys_getpid());
    buf_put_cstr(b, "]: ");
}

void log_error3(const char *a, const char *b, const char *c)
{
    char line[1024];
    struct buf bf = buf_make(line, sizeof line);
    error_prefix(&bf);
    buf_put_cstr(&bf, a);
    buf_put_cstr(&bf, b);
    buf_put_cstr(&bf, c);
    error_write(&bf);
}

void log_error(const char *msg)
{
    log_error3(msg, "", "");
}

void log_error_errno(const char *what, const char *path, int err)
{
    char line[1024];
    struct buf bf = buf_make(line, sizeof line);
    error_prefix(&bf);
    buf_put_cstr(&bf, what);
    if (path) {
        buf_put_cstr(&bf, " \"");
        escape_log(&bf, span_make(path, cstr_len(path)));
        buf_put_char(&bf, '"');
    }
    buf_put_cstr(&bf, " failed: ");
    /* strerrordesc_np is async-signal-safe and allocation-free (glibc 2.32). */
    const char *desc = strerrordesc_np(-err);
    buf_put_cstr(&bf, desc ? desc : "unknown error");
    error_write(&bf);
}

/* ---- access log ------------------------------------------------------------------ */

/* Opens the directory of path (its part before the last '/', or ".") as
 * l->dir_fd, so the reopen on HUP works by name beneath it, after a chroot
 * and under Landlock alike. */
static int open_log_dir(struct access_log *l, const char *path)
{
    size_t n = cstr_len(path), slash = n;
    while (slash > 0 && path[slash - 1] != '/')
        slash--;
    l->base = path + slash;
    char dir[PATH_MAX];
    if (slash == 0) {
        mem_copy(dir, ".", 2);
    } else if (slash < sizeof dir) {
        size_t k = slash > 1 ? slash - 1 : 1; /* "/x.log": "/" */
        mem_copy(dir, path, k);
        dir[k] = '\0';
    } else {
        return -ENAMETOOLONG;
    }
    int fd = sys_open_path_dir(dir);
    if (fd < 0)
        return fd;
    l->dir_fd = fd;
    return 0;
}

int access_log_open(struct access_log *l, const char *path, bool json)
{
    l->path = path;
    l->json = json;
    l->fd = -1;
    l->dir_fd = -1;
    l->base = NULL;
    l->len = 0;
    l->failed_reported = false;
    if (!path)
        return 0;
    if (path[0] == '-' && path[1] == '\0') {
        l->fd = 1;
        return 0;
    }
    int r = open_log_dir(l, path);
    if (r < 0)
        return r;
    int fd = sys_open_log_at(l->dir_fd, l->base);
    if (fd < 0)
        return fd;
    l->fd = fd;
    return 0;
}

void access_log_flush(struct access_log *l)
{
    size_t off = 0;
    while (off < l->len) {
        ssize_t n = sys_write(l->fd, l->buf + off, l->len - off);
        if (n == -EINTR)
            continue;
        if (n <= 0) {
            /* Disk full, or a closed pipe: drop these lines, keep serving. */
            if (!l->failed_reported)
                log_error_errno("write to the access log", l->path, n < 0 ? (int)n : -EIO);
            l->failed_reported = true;
            break;
        }
        off += (size_t)n;
    }
    l->len = 0;
}

size_t log_format_addr(const struct sockaddr_storage *a, char *out, size_t cap)
{
    const void *src = NULL;
    int family = a->ss_family;
    if (family == AF_INET) {
        src = &((const struct sockaddr_in *)a)->sin_addr;
    } else if (family == AF_INET6) {
        const struct in6_addr *in6 = &((const struct sockaddr_in6 *)a)->sin6_addr;
        src = in6;
        if (IN6_IS_ADDR_V4MAPPED(in6)) {
            src = &in6->s6_addr[12];
            family = AF_INET;
        }
    }
    if (family == AF_UNIX && cap > 5) {
        memcpy(out, "unix:", 5); /* a client of --addr unix:PATH: no address to show */
        out[5] = '\0';
        return 5;
    }
    if (!src || !inet_ntop(family, src, out, (socklen_t)cap)) {
        out[0] = '-';
        return 1;
    }
    return strlen(out);
}

/* A field cut to a bound, so one request can never exceed LOG_LINE_MAX. */
static struct span bounded(struct span s, size_t max)
{
    if (s.n > max)
        s.n = max;
    return s;
}

static void put_quoted(struct buf *b, struct span s, size_t max)
{
    buf_put_char(b, '"');
    if (s.p)
        escape_log(b, bounded(s, max));
    else
        buf_put_char(b, '-');
    buf_put_char(b, '"');
}

/* ---- --log-format json ------------------------------------------------------------ */

/* A JSON string, or null for a field that is absent. Bounded like the
 * combined fields (6 bytes per escaped byte at most). */
static void json_string(struct buf *b, struct span s, size_t max)
{
    if (!s.p) {
        buf_put_cstr(b, "null");
        return;
    }
    buf_put_char(b, '"');
    escape_json(b, bounded(s, max));
    buf_put_char(b, '"');
}

/* The host of a line with log_host: its text in out[cap], or empty. */
static struct span host_of(const struct access_entry *e, char *out, size_t cap)
{
    long n = e->authority.n ? vhost_host_key(e->authority, out, cap) : -1;
    if (n > 0)
        return span_make(out, (size_t)n);
    return e->site_name ? span_make(e->site_name, cstr_len(e->site_name)) : (struct span){0};
}

static void json_line(struct buf *b, const struct access_entry *e)
{
    char addr[64], iso[DATE_ISO_LEN];
    buf_put_cstr(b, "{\"time\":\"");
    buf_put(b, iso, date_format_iso(e->now, iso));
    buf_put_cstr(b, "\",\"remote_addr\":\"");
    buf_put(b, addr, log_format_addr(e->peer, addr, sizeof addr));
    buf_put_cstr(b, "\",\"method\":");
    json_string(b, e->method, 32);
    buf_put_cstr(b, ",\"target\":");
    json_string(b, e->target, 1024);
    buf_put_cstr(b, ",\"protocol\":");
    buf_put_cstr(b, !e->method.p    ? "null"
                    : e->minor == 3 ? "\"HTTP/3\""
                    : e->minor == 2 ? "\"HTTP/2.0\""
                    : e->minor      ? "\"HTTP/1.1\""
                                    : "\"HTTP/1.0\"");
    buf_put_cstr(b, ",\"status\":");
    buf_put_u64(b, (uint64_t)e->status);
    buf_put_cstr(b, ",\"bytes\":");
    buf_put_u64(b, e->bytes);
    buf_put_cstr(b, ",\"referer\":");
    json_string(b, e->referer, 256);
    buf_put_cstr(b, ",\"user_agent\":");
    json_string(b, e->user_agent, 256);
    buf_put_cstr(b, ",\"duration_us\":");
    if (e->duration_us >= 0)
        buf_put_u64(b, (uint64_t)e->duration_us);
    else
        buf_put_cstr(b, "null");
    buf_put_cstr(b, ",\"encoding\":");
    json_string(b, e->encoding.n ? e->encoding : (struct span){NULL, 0}, 32);
    if (e->log_host) {
        char host[VHOST_NAME_MAX + 2];
        buf_put_cstr(b, ",\"host\":");
        json_string(b, host_of(e, host, sizeof host), VHOST_NAME_MAX + 2);
    }
    buf_put_cstr(b, ",\"tls\":");
    json_string(b,
                e->tls_version ? span_make(e->tls_version, strlen(e->tls_version))
                               : (struct span){NULL, 0},
                16);
    buf_put_cstr(b, "}\n");
}

void access_log_add(struct access_log *l, const struct access_entry *e, int64_t now_ms)
{
    if (l->fd < 0)
        return;
    if (LOG_BUF_SIZE - l->len < LOG_LINE_MAX)
        access_log_flush(l);
    if (l->len == 0)
        l->first_pending_ms = now_ms;
    struct buf b = buf_make(l->buf + l->len, LOG_LINE_MAX);
    if (l->json) {
        json_line(&b, e);
        PITH_ASSERT(!b.full);
        l->len += b.len;
        return;
    }
    char addr[64], date[DATE_CLF_LEN];
    buf_put(&b, addr, log_format_addr(e->peer, addr, sizeof addr));
    buf_put_cstr(&b, " - - [");
    buf_put(&b, date, date_format_clf(e->now, date));
    buf_put_cstr(&b, "] \"");
    /* Each field is escaped (\xHH for '"', '\\', CTLs and non-ASCII), so no
     * request can end the line or a quoted field early. Bounded sizes keep
     * the whole line under LOG_LINE_MAX (4 bytes per escaped byte). A request
     * rejected before its line was parsed is logged as "-". */
    if (e->method.p) {
        escape_log(&b, bounded(e->method, 32));
        buf_put_char(&b, ' ');
        escape_log(&b, bounded(e->target, 1024));
        buf_put_cstr(&b, e->minor == 3   ? " HTTP/3\" "
                         : e->minor == 2 ? " HTTP/2.0\" "
                         : e->minor      ? " HTTP/1.1\" "
                                         : " HTTP/1.0\" ");
    } else {
        buf_put_cstr(&b, "-\" ");
    }
    buf_put_u64(&b, (uint64_t)e->status);
    buf_put_char(&b, ' ');
    buf_put_u64(&b, e->bytes);
    buf_put_char(&b, ' ');
    put_quoted(&b, e->referer, 256);
    buf_put_char(&b, ' ');
    put_quoted(&b, e->user_agent, 256);
    /* Sites: the host as a tenth field, on every line of a server with site
     * names (a server without stays exactly combined format). */
    if (e->log_host) {
        char host[VHOST_NAME_MAX + 2];
        buf_put_char(&b, ' ');
        put_quoted(&b, host_of(e, host, sizeof host), VHOST_NAME_MAX + 2);
    }
    /* The coding of a precompressed variant, as the last field only then:
     * every other line stays exactly combined format. */
    if (e->encoding.n) {
        buf_put_char(&b, ' ');
        put_quoted(&b, e->encoding, 8);
    }
    buf_put_char(&b, '\n');
    PITH_ASSERT(!b.full);
    l->len += b.len;
}

void access_log_tick(struct access_log *l, int64_t now_ms)
{
    if (l->len && now_ms - l->first_pending_ms >= 1000)
        access_log_flush(l);
}

void access_log_reopen(struct access_log *l)
{
    if (!l->path || l->fd == 1)
        return;
    access_log_flush(l);
    int fd = sys_open_log_at(l->dir_fd, l->base);
    if (fd < 0) {
        log_error_errno("reopen the access log", l->path, fd);
        return;
    }
    sys_close(l->fd);
    l->fd = fd;
    l->failed_reported = false;
}

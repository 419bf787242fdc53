/* SPDX-License-Identifier: MIT */
/*
 * serve.c - one router-profile worker: an epoll loop over at most
 * ROUTER_CONNS connections, each reading one head into its own buffer,
 * answering it with a head written straight into its out buffer (a direct
 * writer for this feature set, no output queue), then the body by
 * sendfile, from the out buffer (error pages) or as listing chunks.
 * Every decision the full build makes comes from the same function here:
 * http_parse/http_fields (syntax, framing, Host), target (split, normalize,
 * dotfiles), resolve (open beneath the root and the error's status), cond
 * (preconditions, If-Range), range, etag, date, mime, respond (status
 * lines, error bodies). docs/DESIGN.md, "The router profile".
 */
#include "core/bytes.h"
#include "core/cond.h"
#include "core/date.h"
#include "core/escape.h"
#include "core/etag.h"
#include "core/h1.h"
#include "core/http_fields.h"
#include "core/listing.h"
#include "core/mime.h"
#include "core/range.h"
#include "core/respond.h"
#include "core/target.h"
#include "router/router.h"
#include "sys/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>

#define OUT_CAP    12288 /* a head with an 8 KiB Location, or listing chunks */
#define ALLOW      "GET, HEAD, OPTIONS"
#define SERVER     "pith/" PITH_VERSION
#define LINGER_MS  2000
#define GRACE_MS   10000
#define TAG_LISTEN (~(uint64_t)0)

enum phase { P_FREE, P_READ, P_SEND, P_LINGER };

/* A connection's state, kept apart from its buffers (struct rbuf) so that
 * an idle one costs its few hundred bytes here: a request that arrives
 * whole and is answered at once lives in the worker's scratch buffers,
 * and only what must wait (a partial head, pipelined bytes, a head not
 * sent yet, a listing) moves into the connection's own rbuf. */
struct rconn {
    int fd, file_fd, dir_fd;
    uint8_t phase;
    bool idle;        /* between requests: nothing of the next one yet */
    bool keep_alive;  /* the request allows the connection to persist */
    bool close_after; /* this response ends the connection */
    bool head_only, chunked, page_started;
    uint32_t events; /* what epoll watches for this connection */
    int64_t deadline;
    uint64_t file_off, file_left, body_bytes;
    uint32_t have, used, out_len, out_off;
    uint16_t dlen, doff;
    int status, minor;
    char *inp, *outp; /* the request's bytes and the answer's: scratch or own */
    struct span method, target, referer, user_agent; /* for the log, into inp */
    struct sockaddr_storage peer;
};

struct rbuf {
    char dbuf[1024]; /* getdents of a listing in progress */
    char out[OUT_CAP];
    char in[HTTP_MAX_HEAD];
};

static struct rconn conns[ROUTER_CONNS];
static struct rbuf *bufs; /* mapped, untouched until a connection needs it */
static char scratch_in[HTTP_MAX_HEAD], scratch_out[OUT_CAP];
#define OWN(c) (&bufs[(c)-conns])
static int ep, nconns, log_fd; /* log_fd 0: none (no initialized data, see DESIGN.md) */
static uint32_t log_unchecked;
static bool paused, draining;
static int64_t now_ms, now_sec, grace_end;
static char date[DATE_IMF_LEN];
static struct http_request req;
static struct http_info info;
static char path[PATH_MAX + 1];
static struct buf ob; /* the out buffer of the response being written */
static volatile int got_term, got_hup;
sigset_t router_unblocked;

/* ---- the writer: a head in the order the full build's h1.c writes it ---------- */

static void field(const char *name, struct span v)
{
    respond_field(&ob, name, v);
}

static void field_c(const char *name, const char *v)
{
    respond_field(&ob, name, span_make(v, cstr_len(v)));
}

static void begin(struct rconn *c, int status)
{
    c->status = status;
    respond_status_line(&ob, status);
    field("Date", span_make(date, DATE_IMF_LEN));
    field("Server", SPAN_LIT(SERVER));
}

/* Content-Length (len >= 0) or, for a listing, chunked on HTTP/1.1 and
 * close-delimited on 1.0; nothing for 204 and 304. */
static void framing(struct rconn *c, int64_t len)
{
    if (c->status == 204 || c->status == 304)
        return;
    if (len >= 0) {
        buf_put_cstr(&ob, "Content-Length: ");
        buf_put_u64(&ob, (uint64_t)len);
        buf_put(&ob, "\r\n", 2);
    } else if (c->minor) {
        buf_put_cstr(&ob, "Transfer-Encoding: chunked\r\n");
        c->chunked = true;
    } else {
        c->close_after = true;
    }
}

static void finish(struct rconn *c)
{
    c->close_after = c->close_after || !c->keep_alive || draining;
    buf_put_cstr(&ob, c->close_after  ? "Connection: close\r\n\r\n"
                      : c->minor == 0 ? "Connection: keep-alive\r\n\r\n"
                                      : "\r\n");
}

static bool closes(int status)
{
    return status == 400 || status == 408 || status == 414 || status == 431 || status == 505;
}

/* The small HTML answer (reply.c's reply_small and reply_error). */
static void small(struct rconn *c, int status, const char *name, struct span v, bool cacheable)
{
    if (closes(status))
        c->close_after = true;
    if (status == 405 && !name) {
        name = "Allow";
        v = SPAN_LIT(ALLOW);
    }
    begin(c, status);
    field_c("Content-Type", "text/html; charset=utf-8");
    if (name)
        field(name, v);
    if (cacheable)
        field_c("Cache-Control", router.cache_control);
    size_t n = respond_error_body_len(status);
    framing(c, (int64_t)n);
    finish(c);
    if (!c->head_only) {
        respond_error_body(&ob, status);
        c->body_bytes = n;
    }
}

static void error(struct rconn *c, int status)
{
    small(c, status, NULL, (struct span){0}, false);
}

static void allow(struct rconn *c)
{
    begin(c, 204);
    field("Allow", SPAN_LIT(ALLOW));
    finish(c);
}

/* ---- files ---------------------------------------------------------------------- */

/* Open small files, kept between requests with filecache.c's freshness:
 * the path checked again with resolve_stat a second after the last check
 * (a file replaced or removed, or a directory in its path swapped for a
 * link: the entry goes and the path is opened afresh, with every check),
 * the descriptor's fstat on every use (a file changed in place). Only regular files up to
 * SMALL_BODY, whose bytes are read while the request is answered, so no entry is ever in use when
 * another request evicts it. */
#define SMALL_BODY 8192
#define FDC_N      16
#define FDC_KEY    48

struct fdc {
    int fd; /* 0: empty (0, 1 and 2 are never a cached file) */
    uint8_t n;
    char key[FDC_KEY];
    int64_t checked_ms;
    struct sys_stat st;
};

static struct fdc fdc[FDC_N];
static unsigned fdc_next;
static int req_cached_1; /* 1 + the cached descriptor the request holds, or 0 (no .data) */

static bool same_file(const struct sys_stat *a, const struct sys_stat *b)
{
    return a->ino == b->ino && a->dev == b->dev && a->size == b->size &&
           a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

/* Closes a file's descriptor unless the cache keeps it. */
static void release(int fd)
{
    if (fd + 1 != req_cached_1)
        sys_close(fd);
}

static int open_stat(const char *rel, struct sys_stat *st)
{
    size_t n = cstr_len(rel);
    req_cached_1 = 0;
    for (struct fdc *e = fdc; e < fdc + FDC_N; e++) {
        if (!e->fd || e->n != n || !mem_eq(e->key, rel, n))
            continue;
        /* The descriptor's own stat on every use: a file rewritten in
         * place is the same inode with new bytes, which must never go out
         * under the old length and validators. */
        struct sys_stat now, here;
        if (sys_fstat(e->fd, &here) < 0 || !same_file(&here, &e->st) ||
            (now_ms - e->checked_ms >= 1000 &&
             (resolve_stat(router.root_fd, rel, false, router.resolve, &now) < 0 ||
              !same_file(&now, &e->st) || sys_file_type(&now) != SYS_FILE_REGULAR))) {
            sys_close(e->fd);
            e->fd = 0;
            break;
        }
        if (now_ms - e->checked_ms >= 1000)
            e->checked_ms = now_ms;
        *st = e->st;
        req_cached_1 = e->fd + 1;
        return e->fd;
    }
    int fd = resolve_open(router.root_fd, rel, false, router.resolve);
    if (fd >= 0 && sys_fstat(fd, st) < 0) {
        sys_close(fd);
        fd = -EIO;
    }
    if (fd > 2 && n < FDC_KEY && sys_file_type(st) == SYS_FILE_REGULAR && st->size <= SMALL_BODY) {
        struct fdc *e = &fdc[fdc_next++ % FDC_N];
        if (e->fd)
            sys_close(e->fd);
        *e = (struct fdc){.fd = fd, .n = (uint8_t)n, .checked_ms = now_ms, .st = *st};
        mem_copy(e->key, rel, n);
        req_cached_1 = fd + 1;
    }
    return fd;
}

static void body_file(struct rconn *c, int fd, uint64_t first, uint64_t n)
{
    if (c->head_only || n == 0) {
        release(fd);
        return;
    }
    /* A small body goes out with the head, in one send: a read costs less
     * than a sendfile. A short read (the file shrank) leaves it to sendfile,
     * which notices. */
    if (n <= SMALL_BODY && ob.cap - ob.len >= n &&
        sys_pread(fd, ob.p + ob.len, n, first) == (ssize_t)n) {
        ob.len += n;
        c->body_bytes = n;
        release(fd);
        return;
    }
    for (struct fdc *e = fdc; e < fdc + FDC_N; e++)
        if (e->fd == fd)
            e->fd = 0; /* changed under us: the connection takes the descriptor */
    c->file_fd = fd;
    c->file_off = first;
    c->file_left = n;
}

/* file.c's respond() without variants: preconditions, then one Range
 * (several: 200 with the whole file, RFC 9110 §14.2), then 200. */
static void serve_file(struct rconn *c, int fd, const struct sys_stat *st, struct span name)
{
    char tag[ETAG_MAX], lm_text[DATE_IMF_LEN], cr[80];
    struct span etag =
        span_make(tag, etag_make(st->ino, st->size, st->mtime_sec, st->mtime_nsec, tag));
    int64_t lm = st->mtime_sec > now_sec ? now_sec : st->mtime_sec;
    bool has_lm = date_format_imf(lm, lm_text) != 0;
    struct span cc = span_make(router.cache_control, cstr_len(router.cache_control));
    struct cond_input in = {&info, true, etag, lm, has_lm, now_sec};
    enum cond_verdict v = cond_evaluate(&in);
    struct range r[RANGE_MAX];
    int n = 0;
    if (v == COND_PROCEED && info.range.p && !c->head_only &&
        (!info.if_range.p ||
         cond_if_range(info.if_range, etag, lm, has_lm && lm == st->mtime_sec, now_sec)))
        n = range_parse(info.range, st->size, r, RANGE_MAX);
    if (v == COND_FAILED || n == RANGE_UNSATISFIABLE) {
        release(fd);
        struct buf b = buf_make(cr, sizeof cr);
        buf_put_cstr(&b, "bytes */");
        buf_put_u64(&b, st->size);
        if (v == COND_FAILED)
            error(c, 412);
        else
            small(c, 416, "Content-Range", span_make(cr, b.len), false);
        return;
    }
    struct span type = mime_lookup(name);
    if (v == COND_PROCEED && n != 1) { /* 200: h1.c puts the length before the block */
        begin(c, 200);
        framing(c, (int64_t)st->size);
        field("Content-Type", type);
    } else {
        begin(c, v == COND_PROCEED ? 206 : 304);
    }
    if (c->status == 206) {
        struct buf b = buf_make(cr, sizeof cr);
        buf_put_cstr(&b, "bytes ");
        buf_put_u64(&b, r[0].first);
        buf_put_char(&b, '-');
        buf_put_u64(&b, r[0].last);
        buf_put_char(&b, '/');
        buf_put_u64(&b, st->size);
        field("Content-Type", type);
        field("Content-Range", span_make(cr, b.len));
    }
    if (has_lm)
        field("Last-Modified", span_make(lm_text, DATE_IMF_LEN));
    field("ETag", etag);
    field("Cache-Control", cc);
    if (c->status != 304)
        field("Accept-Ranges", SPAN_LIT("bytes"));
    if (c->status == 206) {
        framing(c, (int64_t)(r[0].last - r[0].first + 1));
        finish(c);
        body_file(c, fd, r[0].first, r[0].last - r[0].first + 1);
        return;
    }
    finish(c);
    if (c->status == 304)
        release(fd);
    else
        body_file(c, fd, 0, st->size);
}

/* ---- directories ---------------------------------------------------------------- */

/* handler.c's redirect_to_dir: the raw path kept unless it could read as
 * another host, else the normalized one, percent-encoded. */
static void redirect(struct rconn *c, const struct target *t)
{
    char loc[HTTP_MAX_REQUEST_LINE + 8];
    struct buf b = buf_make(loc, sizeof loc);
    if (t->path.n >= 2 && t->path.p[1] != '/' &&
        mem_find(t->path.p, t->path.n, '\\') == t->path.n) {
        buf_put_span(&b, t->path);
    } else {
        buf_put_char(&b, '/');
        escape_uri_path(&b, span_make(path, cstr_len(path)), false);
    }
    buf_put_char(&b, '/');
    if (t->has_query) {
        buf_put_char(&b, '?');
        buf_put_span(&b, t->query);
    }
    if (b.full)
        error(c, 414);
    else
        small(c, 301, "Location", span_make(loc, b.len), true);
}

static void listing_start(struct rconn *c, int dirfd)
{
    begin(c, 200);
    field_c("Content-Type", "text/html; charset=utf-8");
    field_c("Cache-Control", "no-cache");
    field_c("Vary", "Accept");
    framing(c, -1);
    finish(c);
    if (c->head_only) {
        c->chunked = false;
        sys_close(dirfd);
        return;
    }
    c->dir_fd = dirfd;
    c->dlen = c->doff = 0;
    c->page_started = false;
}

/* The next piece of the listing page, as one chunk (HTTP/1.1) into out:
 * a plain list of links, names HTML-escaped and percent-encoded. */
static bool listing_fill(struct rconn *c)
{
    char *out = c->outp = OWN(c)->out;
    struct buf b = buf_make(out + 8, OUT_CAP - 8 - 8);
    bool end = false;
    if (!c->page_started)
        buf_put_cstr(&b, "<!DOCTYPE html>\n<meta charset=utf-8><title>Index</title>\n<ul>\n");
    c->page_started = true;
    /* At most 256 entries looked at per piece (a directory of dotfiles
     * writes nothing), so other connections get their turn. */
    for (int scanned = 0; b.cap - b.len > LISTING_ENTRY_MAX && scanned < 256; scanned++) {
        if (c->doff >= c->dlen) {
            ssize_t n = sys_getdents(c->dir_fd, OWN(c)->dbuf, sizeof OWN(c)->dbuf);
            if (n <= 0) {
                end = true;
                break;
            }
            c->dlen = (uint16_t)n;
            c->doff = 0;
        }
        const char *name;
        enum sys_file_type ty;
        c->doff = (uint16_t)sys_dirent_next(OWN(c)->dbuf, c->dlen, c->doff, &name, &ty);
        struct sys_stat st;
        if (name[0] == '.')
            continue;
        if (ty == SYS_FILE_UNKNOWN && sys_fstatat(c->dir_fd, name, &st, false) == 0)
            ty = sys_file_type(&st);
        if (ty != SYS_FILE_REGULAR && ty != SYS_FILE_DIR)
            continue;
        struct span nm = span_make(name, cstr_len(name));
        const char *slash = ty == SYS_FILE_DIR ? "/" : "";
        buf_put_cstr(&b, "<li><a href=\"");
        escape_uri_path(&b, nm, true);
        buf_put_cstr(&b, slash);
        buf_put_cstr(&b, "\">");
        escape_html(&b, nm);
        buf_put_cstr(&b, slash);
        buf_put_cstr(&b, "</a>\n");
    }
    if (end) {
        buf_put_cstr(&b, "</ul>\n");
        sys_close(c->dir_fd);
        c->dir_fd = -1;
    }
    if (!b.len)
        return false; /* nothing yet: the loop comes back to it */
    c->body_bytes += b.len;
    c->out_off = 8;
    c->out_len = (uint32_t)(8 + b.len);
    if (!c->chunked)
        return true;
    char head[H1_CHUNK_HEAD_MAX];
    size_t k = h1_chunk_head(b.len, head);
    c->out_off = (uint32_t)(8 - k);
    mem_copy(out + c->out_off, head, k);
    mem_copy(out + c->out_len, end ? "\r\n0\r\n\r\n" : "\r\n", end ? 7 : 2);
    c->out_len += end ? 7 : 2;
    return true;
}

static void serve_directory(struct rconn *c, int dirfd)
{
    size_t n = cstr_len(path), in = cstr_len(router.index);
    char rel[PATH_MAX + 1];
    if (n + 1 + in < sizeof rel) {
        mem_copy(rel, path, n);
        size_t at = n;
        if (n)
            rel[at++] = '/';
        mem_copy(rel + at, router.index, in + 1);
        struct sys_stat st;
        int fd = open_stat(rel, &st);
        if (fd >= 0 && sys_file_type(&st) == SYS_FILE_REGULAR) {
            sys_close(dirfd);
            serve_file(c, fd, &st, span_make(rel, at + in));
            return;
        }
        if (fd >= 0) {
            sys_close(fd); /* an index that is a directory: as if absent */
        } else if (fd != -ENOENT) {
            sys_close(dirfd); /* a link or unreadable: never a listing instead */
            error(c, resolve_error_status(fd));
            return;
        }
    }
    if (!router.listing) {
        sys_close(dirfd);
        error(c, 403);
        return;
    }
    listing_start(c, dirfd);
}

/* ---- the request (handler.c's handler_request, without site features) ------------ */

static void serve_path(struct rconn *c, const struct target *t, unsigned flags)
{
    struct sys_stat st;
    int fd = open_stat(path, &st);
    if (fd < 0) {
        error(c, resolve_error_status(fd));
        return;
    }
    enum sys_file_type ty = sys_file_type(&st);
    if (ty == SYS_FILE_REGULAR && !(flags & TARGET_TRAILING_SLASH)) {
        serve_file(c, fd, &st, span_make(path, cstr_len(path)));
        return;
    }
    if (ty == SYS_FILE_DIR && (!path[0] || (flags & TARGET_TRAILING_SLASH))) {
        serve_directory(c, fd);
        return;
    }
    release(fd);
    if (ty == SYS_FILE_DIR)
        redirect(c, t);
    else
        error(c, ty == SYS_FILE_REGULAR ? 404 : 403); /* "/file/"; fifo, socket, device */
}

static void answer(struct rconn *c)
{
    int r = http_fields_analyze(&req, &info);
    c->method = req.method;
    c->target = req.target;
    c->minor = req.minor;
    c->head_only = req.method_id == HTTP_METHOD_HEAD;
    c->referer = info.referer;
    c->user_agent = info.user_agent;
    if (r < 0) {
        c->close_after = true;
        error(c, -r);
        return;
    }
    c->keep_alive = info.keep_alive;
    struct target t;
    bool split = target_split(req.target, &t) == 0;
    enum http_method m = req.method_id;
    if (m == HTTP_METHOD_OTHER || m > HTTP_METHOD_OPTIONS) {
        c->close_after = info.has_body; /* the body is never read */
        error(c, m == HTTP_METHOD_OTHER ? 501 : 405);
        return;
    }
    if (!split || (t.form == TARGET_ASTERISK && m != HTTP_METHOD_OPTIONS)) {
        error(c, 400);
        return;
    }
    if (t.form == TARGET_ASTERISK) {
        allow(c);
        return;
    }
    unsigned flags = 0;
    long n = target_normalize_all(t.path, path, sizeof path - 1, &flags);
    if (n < 0) {
        error(c, n == -414 ? 404 : (int)-n); /* too long to name a file */
        return;
    }
    path[n] = '\0';
    if (flags & TARGET_HIDDEN)
        error(c, 403);
    else if (m == HTTP_METHOD_OPTIONS)
        allow(c);
    else
        serve_path(c, &t, flags);
}

/* ---- the access log (combined format, rotated past --log-max) -------------------- */

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

static void put_quoted(struct buf *b, struct span s, size_t max)
{
    buf_put_char(b, '"');
    if (s.p)
        escape_log(b, span_make(s.p, s.n > max ? max : s.n));
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

static void log_request(const struct rconn *c)
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
        escape_log(&b, span_make(c->method.p, c->method.n > 32 ? 32 : c->method.n));
        buf_put_char(&b, ' ');
        escape_log(&b, span_make(c->target.p, c->target.n > 1024 ? 1024 : c->target.n));
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

static void log_open(void)
{
    if (!router.log_path)
        return;
    int fd = router.log_path[0] == '-' && !router.log_path[1] ? 1 : sys_open_log(router.log_path);
    if (fd < 0)
        return;
    if (!log_fd)
        log_fd = fd;
    else if (fd != 1) {
        sys_dup_onto(fd, log_fd);
        sys_close(fd);
    }
}

/* ---- connections ------------------------------------------------------------------- */

static void want(struct rconn *c, uint32_t ev)
{
    if (c->events != ev)
        sys_epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, ev, (uint64_t)(c - conns));
    c->events = ev;
}

static void log_request(const struct rconn *c);

static void drop(struct rconn *c)
{
    if (c->phase == P_SEND) /* an answer cut short (a reset, a timeout) is logged too */
        log_request(c);
    if (c->file_fd >= 0)
        sys_close(c->file_fd);
    if (c->dir_fd >= 0)
        sys_close(c->dir_fd);
    sys_close(c->fd);
    c->phase = P_FREE;
    nconns--;
    if (paused && !draining) {
        paused = false;
        sys_epoll_ctl(ep, EPOLL_CTL_ADD, router.listen_fd, EPOLLIN, TAG_LISTEN);
    }
}

/* What must outlive this event moves from the scratch buffers into the
 * connection's own: the request's bytes (the log's spans rebased) and the
 * part of the head not sent yet. */
static void own(struct rconn *c)
{
    struct rbuf *o = OWN(c);
    if (c->inp == scratch_in) {
        mem_copy(o->in, scratch_in, c->have);
        struct span *sp[] = {&c->method, &c->target, &c->referer, &c->user_agent};
        for (int i = 0; i < 4; i++)
            if (sp[i]->p)
                sp[i]->p = o->in + (sp[i]->p - scratch_in);
        c->inp = o->in;
    }
    if (c->outp == scratch_out) {
        mem_copy(o->out, scratch_out + c->out_off, c->out_len - c->out_off);
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

/* Starts the answer to inp[0..have): a parser verdict, or 408 (status). */
static void respond_to(struct rconn *c, long verdict)
{
    c->phase = P_SEND;
    c->keep_alive = c->close_after = c->head_only = c->chunked = false;
    c->method = c->referer = c->user_agent = (struct span){0};
    c->minor = 1;
    c->body_bytes = 0;
    c->deadline = now_ms + router.t_send;
    ob = buf_make(c->outp = scratch_out, OUT_CAP);
    if (verdict > 0) {
        c->used = (uint32_t)verdict;
        answer(c);
    } else {
        error(c, (int)-verdict);
    }
    PITH_ASSERT(!ob.full);
    c->out_off = 0;
    c->out_len = (uint32_t)ob.len;
    pump(c);
}

/* Answers the complete heads in inp, one after another (a loop, not a
 * recursion: a buffer may hold a thousand pipelined requests). */
static void drive(struct rconn *c)
{
    while (c->phase == P_READ && c->have) {
        long r = http_parse_request(c->inp, c->have, &req);
        if (r == HTTP_PARSE_AGAIN)
            break;
        respond_to(c, r);
    }
    if (c->phase == P_READ) {
        own(c);
        want(c, EPOLLIN);
    }
}

static void on_input(struct rconn *c)
{
    if (!c->have)
        c->inp = scratch_in;
    bool linger = c->phase == P_LINGER;
    char *p = linger ? scratch_out : c->inp + c->have;
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
        if (nconns == ROUTER_CONNS) {
            paused = true;
            sys_epoll_ctl(ep, EPOLL_CTL_DEL, router.listen_fd, 0, 0);
            return;
        }
        struct sockaddr_storage peer;
        int fd = sys_accept(router.listen_fd, &peer);
        if (fd < 0)
            return;
        struct rconn *c = conns;
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
        c->peer = peer;
        sys_set_nodelay(fd);
        sys_epoll_ctl(ep, EPOLL_CTL_ADD, fd, EPOLLIN, (uint64_t)(c - conns));
        nconns++;
    }
}

/* Expires deadlines (408 for a partial head, else a silent close) and
 * returns the milliseconds until the next one. */
static int sweep(void)
{
    int64_t next = draining ? grace_end : now_ms + 60000;
    for (struct rconn *c = conns; c < conns + ROUTER_CONNS; c++) {
        if (c->phase == P_FREE)
            continue;
        bool quiet = c->phase == P_READ && (c->idle || !c->have);
        if (draining && c->phase == P_READ && c->idle)
            drop(c);
        else if (now_ms >= c->deadline && c->phase == P_READ && !quiet)
            respond_to(c, -408), drive(c);
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
    log_open();
    if (router.log_path && !log_fd) {
        router_say(router.log_path, ": cannot open the log");
        sys_exit(1);
    }
    sys_epoll_ctl(ep, EPOLL_CTL_ADD, router.listen_fd, EPOLLIN, TAG_LISTEN);
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
            sys_epoll_ctl(ep, EPOLL_CTL_DEL, router.listen_fd, 0, 0);
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
            } else if (conns[tag].phase == P_SEND) {
                pump(&conns[tag]);
                drive(&conns[tag]);
            } else if (conns[tag].phase != P_FREE) {
                on_input(&conns[tag]);
            }
        }
    }
}

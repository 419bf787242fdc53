/* SPDX-License-Identifier: MIT */
/*
 * handler.c - from a parsed request head to a queued response: field
 * semantics, method, target, path safety, the file or directory beneath the
 * root, and the response head (docs/DESIGN.md §2, one row at a time). Every
 * decision is a core verdict (http_fields, target, resolve); this file maps
 * verdicts to responses and sets up the body for conn.c to send.
 */
#include "core/bytes.h"
#include "core/escape.h"
#include "core/etag.h"
#include "core/mime.h"
#include "core/respond.h"
#include "core/target.h"
#include "server/server.h"
#include "sys/sys.h"

#include <errno.h>
#include <fcntl.h>

#define ALLOW "GET, HEAD, OPTIONS"

/* ---- response heads ---------------------------------------------------------------- */

static struct buf head_begin(struct worker *w, struct conn *c, int status)
{
    struct buf b = buf_make(conn_out(c), POOL_OUT_SIZE);
    respond_status_line(&b, status);
    respond_field(&b, "Date", span_make(w->date, DATE_IMF_LEN));
    respond_field_cstr(&b, "Server", SERVER_NAME);
    c->status = status;
    return b;
}

static void head_end(struct worker *w, struct conn *c, struct buf *b)
{
    if (!c->keep_alive || w->draining)
        respond_field_cstr(b, "Connection", "close");
    else if (c->log_minor == 0)
        respond_field_cstr(b, "Connection", "keep-alive");
    respond_end_head(b);
    PITH_ASSERT(!b->full);
    c->head_size = (uint32_t)b->len;
    c->out_len = (uint32_t)b->len;
}

/* An error (or redirect) with the small fixed HTML body; `extra` is one more
 * field ("Allow", "Location") or NULL. */
static void small_response(struct worker *w, struct conn *c, int status, const char *extra_name,
                           struct span extra_value, bool cacheable)
{
    struct buf b = head_begin(w, c, status);
    respond_field_cstr(&b, "Content-Type", "text/html; charset=utf-8");
    respond_field_u64(&b, "Content-Length", respond_error_body_len(status));
    if (extra_name)
        respond_field(&b, extra_name, extra_value);
    /* Errors never carry a positive max-age (a cached 404 outlives a fix). */
    if (cacheable)
        respond_field_cstr(&b, "Cache-Control", w->srv->cache_control);
    head_end(w, c, &b);
    if (!c->head_only)
        respond_error_body(&b, status);
    c->out_len = (uint32_t)b.len;
}

void handler_error(struct worker *w, struct conn *c, int status)
{
    /* 400-class framing errors, 408, 414, 431 and 505 mean the request's
     * end is unknown or untrusted: close after answering. */
    if (status == 400 || status == 408 || status == 414 || status == 431 || status == 505)
        c->keep_alive = false;
    if (status == 405)
        small_response(w, c, status, "Allow", SPAN_LIT(ALLOW), false);
    else
        small_response(w, c, status, NULL, (struct span){0}, false);
}

static void options_response(struct worker *w, struct conn *c)
{
    struct buf b = head_begin(w, c, 204);
    respond_field_cstr(&b, "Allow", ALLOW);
    head_end(w, c, &b);
}

/* ---- redirects ---------------------------------------------------------------------- */

/* 301 to the slash form of a directory. The raw path is kept (escapes and
 * all) when it is a plain absolute path; one that starts with "//" or "/\"
 * would read as another host (python/cpython#87389), so it is rebuilt from
 * the normalized path, percent-encoded. The parser admitted only VCHAR, so
 * no CR or LF can reach the field. */
static void redirect_to_dir(struct worker *w, struct conn *c, const struct target *t)
{
    char loc[HTTP_MAX_REQUEST_LINE + 8];
    struct buf b = buf_make(loc, sizeof loc);
    bool raw_ok = t->path.n >= 2 && t->path.p[1] != '/' && t->path.p[1] != '\\';
    if (raw_ok) {
        buf_put_span(&b, t->path);
    } else {
        buf_put_char(&b, '/');
        escape_uri_path(&b, span_make(w->path, cstr_len(w->path)), false);
    }
    buf_put_char(&b, '/');
    if (t->has_query) {
        buf_put_char(&b, '?');
        buf_put_span(&b, t->query);
    }
    if (b.full) {
        handler_error(w, c, 414);
        return;
    }
    small_response(w, c, 301, "Location", span_make(loc, b.len), true);
}

/* ---- files -------------------------------------------------------------------------- */

static void file_response(struct worker *w, struct conn *c, int fd, const struct sys_stat *st,
                          struct span name)
{
    struct buf b = head_begin(w, c, 200);
    respond_field(&b, "Content-Type", mime_lookup(name));
    respond_field_u64(&b, "Content-Length", st->size);
    /* RFC 9110 §8.8.2.1: never a Last-Modified later than the Date. */
    char lm[DATE_IMF_LEN];
    int64_t mtime = st->mtime_sec > w->now_sec ? w->now_sec : st->mtime_sec;
    if (date_format_imf(mtime, lm))
        respond_field(&b, "Last-Modified", span_make(lm, DATE_IMF_LEN));
    char tag[ETAG_MAX];
    size_t tn = etag_make(st->ino, st->size, st->mtime_sec, st->mtime_nsec, tag);
    respond_field(&b, "ETag", span_make(tag, tn));
    respond_field_cstr(&b, "Accept-Ranges", "bytes");
    respond_field_cstr(&b, "Cache-Control", w->srv->cache_control);
    head_end(w, c, &b);
    if (c->head_only || st->size == 0) {
        sys_close(fd);
        return;
    }
    c->body = BODY_FILE;
    c->body_fd = fd;
    c->body_off = 0;
    c->body_end = st->size;
}

/* Maps a failed open beneath the root to the contract's status. */
static int open_error_status(int err)
{
    switch (err) {
    case -ENOENT:
    case -ENOTDIR:
    case -ENAMETOOLONG:
        return 404;
    case -ELOOP: /* a symlink, not followed */
    case -EXDEV: /* a followed link that leaves the root */
    case -EACCES:
    case -EPERM:
        return 403;
    case -EMFILE:
    case -ENFILE:
    case -ENOMEM:
        return 503;
    default:
        return 500;
    }
}

/* Opens rel beneath the root; on failure queues the error and returns -1. */
static int open_beneath(struct worker *w, struct conn *c, const char *rel, struct sys_stat *st)
{
    const struct server *s = w->srv;
    int fd = resolve_open(s->root_fd, rel, s->cfg.follow_symlinks, s->resolve);
    if (fd < 0) {
        if (fd == -EMFILE || fd == -ENFILE)
            log_error_errno("open", rel, fd);
        handler_error(w, c, open_error_status(fd));
        return -1;
    }
    int r = sys_fstat(fd, st);
    if (r < 0) {
        sys_close(fd);
        handler_error(w, c, 500);
        return -1;
    }
    return fd;
}

static bool wants_json(struct worker *w, const struct target *t)
{
    if (t->has_query && t->query.n >= 11) {
        for (size_t i = 0; i + 11 <= t->query.n; i++)
            if ((i == 0 || t->query.p[i - 1] == '&') && mem_eq(t->query.p + i, "format=json", 11) &&
                (i + 11 == t->query.n || t->query.p[i + 11] == '&'))
                return true;
    }
    struct span a = w->info.accept;
    if (!a.p)
        return false;
    bool json = false, html = false;
    for (size_t i = 0; i + 16 <= a.n; i++)
        json = json || span_eq_nocase_cstr(span_make(a.p + i, 16), "application/json");
    for (size_t i = 0; i + 9 <= a.n; i++)
        html = html || span_eq_nocase_cstr(span_make(a.p + i, 9), "text/html");
    return json && !html;
}

/* A directory asked for with its trailing slash: the index file, else the
 * listing, else 403. */
static void serve_directory(struct worker *w, struct conn *c, int dirfd, const struct target *t)
{
    const struct config *cfg = &w->srv->cfg;
    size_t n = cstr_len(w->path), in = cstr_len(cfg->index);
    char rel[PATH_MAX + 1];
    if (n + 1 + in < sizeof rel) {
        mem_copy(rel, w->path, n);
        size_t at = n;
        if (n)
            rel[at++] = '/';
        mem_copy(rel + at, cfg->index, in + 1);
        int fd = resolve_open(w->srv->root_fd, rel, cfg->follow_symlinks, w->srv->resolve);
        struct sys_stat st;
        if (fd >= 0 && sys_fstat(fd, &st) == 0 && sys_file_type(&st) == SYS_FILE_REGULAR) {
            sys_close(dirfd);
            file_response(w, c, fd, &st, span_make(rel, at + in));
            return;
        }
        if (fd >= 0)
            sys_close(fd);
        else if (fd != -ENOENT) {
            /* An index that is a link (or unreadable) is refused, never
             * replaced by a listing that would show what it hides. */
            sys_close(dirfd);
            handler_error(w, c, open_error_status(fd));
            return;
        }
    }
    if (!cfg->listing) {
        sys_close(dirfd);
        handler_error(w, c, 403);
        return;
    }
    dirlist_start(w, c, dirfd, wants_json(w, t) ? LISTING_JSON : LISTING_HTML);
}

static void serve_path(struct worker *w, struct conn *c, const struct target *t, unsigned flags)
{
    struct sys_stat st;
    int fd = open_beneath(w, c, w->path, &st);
    if (fd < 0)
        return;
    switch (sys_file_type(&st)) {
    case SYS_FILE_REGULAR:
        file_response(w, c, fd, &st, span_make(w->path, cstr_len(w->path)));
        return;
    case SYS_FILE_DIR:
        if (w->path[0] && !(flags & TARGET_TRAILING_SLASH)) {
            sys_close(fd);
            redirect_to_dir(w, c, t);
            return;
        }
        serve_directory(w, c, fd, t);
        return;
    default: /* fifo, socket, device: never served */
        sys_close(fd);
        handler_error(w, c, 403);
        return;
    }
}

/* ---- the request ---------------------------------------------------------------------- */

/* Methods: GET/HEAD/OPTIONS are served, the other RFC 9110 methods are
 * known but not allowed here (405 + Allow, §15.5.6), any other token is
 * not implemented (501, §15.6.2). */
static int method_status(enum http_method m)
{
    switch (m) {
    case HTTP_METHOD_GET:
    case HTTP_METHOD_HEAD:
    case HTTP_METHOD_OPTIONS:
        return 0;
    case HTTP_METHOD_OTHER:
        return 501;
    default:
        return 405;
    }
}

void handler_request(struct worker *w, struct conn *c)
{
    const struct http_request *req = &w->req;
    c->log_method = req->method;
    c->log_target = req->target;
    c->log_minor = req->minor;
    c->head_only = req->method_id == HTTP_METHOD_HEAD;
    int r = http_fields_analyze(req, &w->info);
    c->log_referer = w->info.referer;
    c->log_ua = w->info.user_agent;
    if (r < 0) {
        handler_error(w, c, -r);
        return;
    }
    c->keep_alive = w->info.keep_alive;
    int status = method_status(req->method_id);
    if (status) {
        handler_error(w, c, status);
        return;
    }
    struct target t;
    if (target_split(req->target, &t) < 0) {
        handler_error(w, c, 400);
        return;
    }
    if (t.form == TARGET_ASTERISK) {
        if (req->method_id == HTTP_METHOD_OPTIONS)
            options_response(w, c);
        else
            handler_error(w, c, 400);
        return;
    }
    unsigned flags = 0;
    long n = target_normalize(t.path, w->path, sizeof w->path - 1, &flags);
    if (n < 0) {
        handler_error(w, c, (int)-n);
        return;
    }
    w->path[n] = '\0';
    if (req->method_id == HTTP_METHOD_OPTIONS) {
        options_response(w, c);
        return;
    }
    serve_path(w, c, &t, flags);
}

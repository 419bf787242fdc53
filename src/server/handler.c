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
#include "core/respond.h"
#include "core/target.h"
#include "server/server.h"
#include "sys/sys.h"

#include <errno.h>
#include <fcntl.h>

#define ALLOW "GET, HEAD, OPTIONS"

/* ---- response heads ---------------------------------------------------------------- */

struct buf handler_head_begin(struct worker *w, struct conn *c, int status)
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
    c->head_left = (uint32_t)b->len;
}

/* An error (or redirect) with the small fixed HTML body; `extra` is one more
 * field ("Allow", "Location") or NULL. */
void handler_small(struct worker *w, struct conn *c, int status, const char *extra_name,
                   struct span extra_value, bool cacheable)
{
    struct buf b = handler_head_begin(w, c, status);
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
    PITH_ASSERT(!b.full);
    conn_push_out(c, b.len);
}

void handler_error(struct worker *w, struct conn *c, int status)
{
    /* 400-class framing errors, 408, 414, 431 and 505 mean the request's
     * end is unknown or untrusted: close after answering. */
    if (status == 400 || status == 408 || status == 414 || status == 431 || status == 505)
        c->keep_alive = false;
    if (status == 405)
        handler_small(w, c, status, "Allow", SPAN_LIT(ALLOW), false);
    else
        handler_small(w, c, status, NULL, (struct span){0}, false);
}

static void options_response(struct worker *w, struct conn *c)
{
    struct buf b = handler_head_begin(w, c, 204);
    respond_field_cstr(&b, "Allow", ALLOW);
    head_end(w, c, &b);
    conn_push_out(c, b.len);
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
    handler_small(w, c, 301, "Location", span_make(loc, b.len), true);
}

/* Maps a failed open beneath the root to the contract's status. */
static int open_error_status(int err)
{
    switch (err) {
    case -ENOENT:
    case -ENOTDIR:
    case -ENAMETOOLONG: return 404;
    case -ELOOP: /* a symlink, not followed */
    case -EXDEV: /* a followed link that leaves the root */
    case -EACCES:
    case -EPERM:
    case -ENXIO: /* a socket file: open() refuses it */
    case -ENODEV: return 403;
    case -EMFILE:
    case -ENFILE:
    case -ENOMEM: return 503;
    default: return 500;
    }
}

/* Looks rel up in the cache (opening it beneath the root on a miss); on
 * failure queues the error and returns false. */
static bool lookup(struct worker *w, struct conn *c, const char *rel, struct fc_result *res)
{
    filecache_lookup(&w->cache, rel, w->now_ms, w->now_sec, res);
    if (res->entry || res->fd >= 0)
        return true;
    if (res->err == -EMFILE || res->err == -ENFILE)
        log_error_errno("open", rel, res->err);
    handler_error(w, c, open_error_status(res->err));
    return false;
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
        struct fc_result res;
        filecache_lookup(&w->cache, rel, w->now_ms, w->now_sec, &res);
        if (res.entry || (res.fd >= 0 && sys_file_type(&res.st) == SYS_FILE_REGULAR)) {
            sys_close(dirfd);
            file_respond(w, c, &res, span_make(rel, at + in));
            return;
        }
        if (res.fd >= 0) {
            sys_close(res.fd); /* an index that is a directory: as if absent */
        } else if (res.err != -ENOENT) {
            /* An index that is a link (or unreadable) is refused, never
             * replaced by a listing that would show what it hides. */
            sys_close(dirfd);
            handler_error(w, c, open_error_status(res.err));
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
    struct fc_result res;
    if (!lookup(w, c, w->path, &res))
        return;
    bool regular = res.entry || sys_file_type(&res.st) == SYS_FILE_REGULAR;
    if (regular && (flags & TARGET_TRAILING_SLASH)) {
        /* "/file.html/" names a directory that does not exist (nginx and
         * Apache agree): the kernel would say ENOTDIR. */
        if (res.entry)
            filecache_release(&w->cache, res.entry);
        else
            sys_close(res.fd);
        handler_error(w, c, 404);
        return;
    }
    if (res.entry) {
        file_respond(w, c, &res, span_make(w->path, cstr_len(w->path)));
        return;
    }
    switch (sys_file_type(&res.st)) {
    case SYS_FILE_REGULAR: /* not cached */
        file_respond(w, c, &res, span_make(w->path, cstr_len(w->path)));
        return;
    case SYS_FILE_DIR:
        if (w->path[0] && !(flags & TARGET_TRAILING_SLASH)) {
            sys_close(res.fd);
            redirect_to_dir(w, c, t);
            return;
        }
        serve_directory(w, c, res.fd, t);
        return;
    default: /* fifo, socket, device: never served */
        sys_close(res.fd);
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
    case HTTP_METHOD_OPTIONS: return 0;
    case HTTP_METHOD_OTHER: return 501;
    default: return 405;
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
        /* A decoded path longer than PATH_MAX names no file: 404, not 414
         * (the request line itself was within its limit). */
        handler_error(w, c, n == -414 ? 404 : (int)-n);
        return;
    }
    w->path[n] = '\0';
    if (req->method_id == HTTP_METHOD_OPTIONS) {
        options_response(w, c);
        return;
    }
    serve_path(w, c, &t, flags);
}

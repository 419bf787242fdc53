/* SPDX-License-Identifier: MIT */
/*
 * answer.c - a router worker's answer to one request: handler.c's order of
 * decisions without the site features and file.c's without variants, the
 * head written straight into the out buffer in the order the full build's
 * h1.c writes it (no output queue), then the body: the error page from the
 * same buffer, a small file read in with the head (else left to the loop's
 * sendfile), a listing in pieces. A small open-file cache spares small
 * files the resolver's system calls. Every decision the full build makes
 * comes from the same function here: http_fields (framing, Host), target
 * (split, normalize, dotfiles), resolve (open beneath the root and the
 * error's status), cond (preconditions, If-Range), range, etag, date, mime,
 * respond (status lines, error bodies). docs/DESIGN.md, "The router profile".
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
#include "core/response.h"
#include "core/target.h"
#include "router/worker.h"

#include <errno.h>
#include <limits.h>

#define ALLOW  "GET, HEAD, OPTIONS"
#define SERVER "pith/" PITH_VERSION

static struct http_info info;
/* In the scratch (serve.h): the normalized path, right after the request's
 * bytes, and the first byte that the answer may write into. */
static char *path, *free_at;
static struct buf ob;        /* the out buffer of the response being written */
static struct response resp; /* its head, until head() encodes it */

/* ---- the writer: the full build's encoder, h1.c ---------------------------------- */

static void field(const struct field_name *name, struct span v)
{
    response_add(&resp, name, v);
}

static void field_c(const struct field_name *name, const char *v)
{
    field(name, span_make(v, cstr_len(v)));
}

static void begin(struct rconn *c, int status)
{
    c->status = status;
    response_init(&resp, status);
    ob = buf_make(c->outp = free_at, OUT_CAP);
}

/* The head, by h1_encode_head (the status line, Date, Server, the fields,
 * the framing and Connection, as the full build writes them): len >= 0 is
 * the body's length, -1 a listing's (chunked on HTTP/1.1, close-delimited
 * on 1.0). block: the fields go after the length, as a cache entry's block
 * does in a 200 of the full build. */
static void head(struct rconn *c, int64_t len, bool block)
{
    struct field_block fb;
    if (block) {
        mem_copy(fb.f, resp.field, resp.nfields * sizeof *resp.field);
        fb.n = resp.nfields;
        fb.h1 = (struct span){0};
        fb.lasting = false;
        resp.nfields = 0;
        resp.block = &fb;
    }
    resp.length = (uint64_t)len;
    resp.length_known = len >= 0;
    resp.no_body = c->head_only;
    resp.close = c->close_after || draining;
    struct h1_context cx = {
        .date = span_make(date, DATE_IMF_LEN),
        .server = SPAN_LIT(SERVER),
        .minor = c->minor,
        .keep_alive = c->keep_alive,
    };
    struct h1_head h;
    h1_encode_head(&ob, &resp, &cx, &h);
    buf_put_span(&ob, h.tail);
    c->close_after = h.close;
    c->chunked = h.chunked;
}

/* The small HTML answer (reply.c's reply_small and reply_error). */
static void small(struct rconn *c, int status, const struct field_name *name, struct span v,
                  bool cacheable)
{
    if (respond_status_closes(status))
        c->close_after = true;
    if (status == 405 && !name) {
        name = FIELD(ALLOW);
        v = SPAN_LIT(ALLOW);
    }
    begin(c, status);
    field_c(FIELD(CONTENT_TYPE), "text/html; charset=utf-8");
    if (name)
        field(name, v);
    if (cacheable)
        field_c(FIELD(CACHE_CONTROL), router.cache_control);
    size_t n = respond_error_body_len(status);
    head(c, (int64_t)n, false);
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
    field(FIELD(ALLOW), SPAN_LIT(ALLOW));
    head(c, 0, false);
}

/* ---- files ---------------------------------------------------------------------- */

/* Open small files, kept between requests by filecache.c's freshness rule,
 * the same function (resolve_recheck: the path resolved again a second
 * after the last look; a file replaced, changed or removed, or a directory
 * in its path swapped for a link, and the entry goes and the path is opened
 * afresh, with every check), and the descriptor's fstat on every use (a
 * file changed in place). Only regular files up to SMALL_BODY, whose bytes
 * are read while the request is answered, so no entry is ever in use when
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
        /* filecache.c's rule (resolve_recheck), and the descriptor's own
         * stat on every use: the bytes are read now, and a file rewritten
         * in place is the same inode with new bytes, which must never go
         * out under the old length and validators. */
        struct sys_stat here;
        int r = resolve_recheck(router.root_fd, rel, false, router.resolve, &e->st, e->checked_ms,
                                now_ms);
        if (r < 0 || sys_fstat(e->fd, &here) < 0 || !resolve_same_file(&here, &e->st)) {
            sys_close(e->fd);
            e->fd = 0;
            break;
        }
        if (r > 0)
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
    char tag[ETAG_MAX], lm_text[DATE_IMF_LEN], cr[RANGE_CONTENT_RANGE_MAX];
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
        range_content_range(&b, NULL, st->size);
        if (v == COND_FAILED)
            error(c, 412);
        else
            small(c, 416, FIELD(CONTENT_RANGE), span_make(cr, b.len), false);
        return;
    }
    begin(c, v != COND_PROCEED ? 304 : n == 1 ? 206 : 200);
    if (c->status != 304)
        field(FIELD(CONTENT_TYPE), mime_lookup(name));
    if (c->status == 206) {
        struct buf b = buf_make(cr, sizeof cr);
        range_content_range(&b, &r[0], st->size);
        field(FIELD(CONTENT_RANGE), span_make(cr, b.len));
    }
    if (has_lm)
        field(FIELD(LAST_MODIFIED), span_make(lm_text, DATE_IMF_LEN));
    field(FIELD(ETAG), etag);
    field(FIELD(CACHE_CONTROL), cc);
    if (c->status != 304)
        field(FIELD(ACCEPT_RANGES), SPAN_LIT("bytes"));
    uint64_t first = c->status == 206 ? r[0].first : 0;
    uint64_t len = c->status == 206 ? r[0].last - r[0].first + 1 : st->size;
    head(c, (int64_t)len, c->status == 200); /* a 200: the fields are its block */
    if (c->status == 304)
        release(fd);
    else
        body_file(c, fd, first, len);
}

/* ---- directories ---------------------------------------------------------------- */

/* handler.c's redirect_to_dir, the same core function. The Location goes
 * into the scratch after the path and the head right after it, so a short
 * one takes no page of its own (and no 8 KiB of the stack). */
static void redirect(struct rconn *c, const struct target *t)
{
    struct buf loc = buf_make(free_at, TARGET_LOCATION_MAX);
    target_dir_location(&loc, t, span_make(path, cstr_len(path)));
    if (loc.full) {
        error(c, 414);
        return;
    }
    free_at += loc.len;
    small(c, 301, FIELD(LOCATION), span_make(loc.p, loc.len), true);
}

static void listing_start(struct rconn *c, int dirfd)
{
    begin(c, 200);
    field_c(FIELD(CONTENT_TYPE), "text/html; charset=utf-8");
    field_c(FIELD(CACHE_CONTROL), "no-cache");
    field_c(FIELD(VARY), "Accept");
    head(c, -1, false);
    if (c->head_only) {
        sys_close(dirfd);
        return;
    }
    c->dir_fd = dirfd;
    c->dlen = c->doff = 0;
    c->page_started = false;
}

/* The next piece of the listing page, as one chunk (HTTP/1.1) into out:
 * a plain list of links, names HTML-escaped and percent-encoded. */
bool listing_fill(struct rconn *c)
{
    struct rbuf *own = OWN(c);
    char *out = c->outp = own->out;
    c->owns = true;
    struct buf b = buf_make(out + 8, OUT_CAP - 8 - 8);
    bool end = false;
    if (!c->page_started)
        buf_put_cstr(&b, "<!DOCTYPE html>\n<meta charset=utf-8><title>Index</title>\n<ul>\n");
    c->page_started = true;
    /* At most 256 entries looked at per piece (a directory of dotfiles
     * writes nothing), so other connections get their turn. */
    for (int scanned = 0; b.cap - b.len > LISTING_ENTRY_MAX && scanned < 256; scanned++) {
        if (c->doff >= c->dlen) {
            ssize_t n = sys_getdents(c->dir_fd, own->dbuf, sizeof own->dbuf);
            if (n <= 0) {
                end = true;
                break;
            }
            c->dlen = (uint16_t)n;
            c->doff = 0;
        }
        const char *name;
        enum sys_file_type ty;
        c->doff = (uint16_t)sys_dirent_next(own->dbuf, c->dlen, c->doff, &name, &ty);
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
    if (n + 1 + in < PATH_MAX + 1) { /* the index's path, in place of the directory's */
        size_t at = n;
        if (n)
            path[at++] = '/';
        mem_copy(path + at, router.index, in + 1);
        struct sys_stat st;
        int fd = open_stat(path, &st);
        if (fd >= 0 && sys_file_type(&st) == SYS_FILE_REGULAR) {
            sys_close(dirfd);
            serve_file(c, fd, &st, span_make(path, at + in));
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
    long n = target_normalize_all(t.path, path, PATH_MAX, &flags);
    if (n < 0) {
        error(c, n == -414 ? 404 : (int)-n); /* too long to name a file */
        return;
    }
    path[n] = '\0';
    size_t in = cstr_len(router.index); /* room for "/" and the index (serve_directory) */
    free_at = path + ((size_t)n + 1 + in < PATH_MAX + 1 ? (size_t)n + 2 + in : (size_t)n + 1);
    if (flags & TARGET_HIDDEN)
        error(c, 403);
    else if (m == HTTP_METHOD_OPTIONS)
        allow(c);
    else
        serve_path(c, &t, flags);
}

/* Starts the answer to inp[0..have): a parser verdict, or 408 (status). */
void answer_start(struct rconn *c, long verdict)
{
    c->phase = P_SEND;
    c->keep_alive = c->close_after = c->head_only = c->chunked = false;
    c->method = c->referer = c->user_agent = (struct span){0};
    c->minor = 1;
    c->body_bytes = 0;
    c->deadline = now_ms + router.t_send;
    free_at = path = scratch_after(c);
    ob = buf_make(c->outp = free_at, OUT_CAP);
    if (verdict > 0) {
        c->used = (uint32_t)verdict;
        answer(c);
    } else {
        error(c, (int)-verdict);
    }
    PITH_ASSERT(!ob.full);
    c->out_off = 0;
    c->out_len = (uint32_t)ob.len;
}

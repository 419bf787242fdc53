/* SPDX-License-Identifier: MIT */
/*
 * handler.c - from a parsed request head to a queued response: field
 * semantics, method, target, path safety, the file or directory beneath the
 * root, and the response head (docs/DESIGN.md §2, one row at a time). Every
 * decision is a core verdict (http_fields, target, resolve); this file maps
 * verdicts to responses and sets up the body for conn.c to send.
 */
#include "http/handler.h"

#include "acme/acme.h"
#include "base/clients.h"
#include "base/log.h"
#include "base/worker.h"
#include "core/authority.h"
#include "core/bytes.h"
#include "core/escape.h"
#include "core/respond.h"
#include "core/response.h"
#include "core/site.h"
#include "core/target.h"
#include "http/auth.h"
#include "http/dirlist.h"
#include "http/exchange.h"
#include "http/file.h"
#include "http/filecache.h"
#include "http/reply.h"
#include "http/sites.h"
#include "sys/resolve.h"
#include "sys/sys.h"
#include "testhook/testhook.h"
#include "tls/tls.h"

#include <errno.h>
#include <fcntl.h>

static void options_response(struct worker *w, struct exchange *x)
{
    struct response r;
    response_init(&r, 204);
    response_add(&r, FIELD(ALLOW), SPAN_LIT(REPLY_ALLOW));
    exchange_reply(w, x, &r);
}

/* ---- redirects ---------------------------------------------------------------------- */

/* 301 to the slash form of a directory. The raw path is kept (escapes and
 * all) when it is a plain absolute path; one that starts with "//" or "/\"
 * would read as another host (python/cpython#87389), and a raw backslash
 * anywhere is read by browsers as a slash (WHATWG URL), so those are
 * rebuilt from the normalized path, percent-encoded. The parser admitted
 * only VCHAR, so no CR or LF can reach the field. */
static void redirect_to_dir(struct worker *w, struct exchange *x, const struct target *t)
{
    char loc[TARGET_LOCATION_MAX];
    struct buf b = buf_make(loc, sizeof loc);
    target_dir_location(&b, t, span_make(w->path, cstr_len(w->path)));
    if (b.full) {
        reply_error(w, x, 414);
        return;
    }
    reply_small(w, x, 301, FIELD(LOCATION), span_make(loc, b.len), true);
}

/* A failed lookup of rel beneath the root: its error (descriptor
 * exhaustion logged once per event). */
static void lookup_failed(struct worker *w, struct exchange *x, const char *rel, int err)
{
    if (err == -EMFILE || err == -ENFILE)
        log_error_errno("open", rel, err);
    reply_error(w, x, reply_open_error_status(err));
}

static bool wants_json(const struct exchange *x, const struct target *t)
{
    if (t->has_query && t->query.n >= 11) {
        for (size_t i = 0; i + 11 <= t->query.n; i++)
            if ((i == 0 || t->query.p[i - 1] == '&') && mem_eq(t->query.p + i, "format=json", 11) &&
                (i + 11 == t->query.n || t->query.p[i + 11] == '&'))
                return true;
    }
    struct span a = x->info->accept;
    if (!a.p)
        return false;
    bool json = false, html = false;
    for (size_t i = 0; i + 16 <= a.n; i++)
        json = json || span_eq_nocase_lit(span_make(a.p + i, 16), "application/json");
    for (size_t i = 0; i + 9 <= a.n; i++)
        html = html || span_eq_nocase_lit(span_make(a.p + i, 9), "text/html");
    return json && !html;
}

/* A directory asked for with its trailing slash: the index file, else the
 * listing, else 403. */
static void serve_directory(struct worker *w, struct exchange *x, int dirfd, const struct target *t)
{
    const struct vsite *vs = exchange_site(w, x);
    const struct site_conf *cfg = vs->conf;
    size_t n = cstr_len(w->path), in = cstr_len(cfg->index);
    char rel[PATH_MAX + 1];
    if (n + 1 + in < sizeof rel) {
        mem_copy(rel, w->path, n);
        size_t at = n;
        if (n)
            rel[at++] = '/';
        mem_copy(rel + at, cfg->index, in + 1);
        struct fc_result res;
        filecache_lookup(w->cache, &vs->fc, rel, w->now_ms, w->now_sec, &res);
        if (res.entry || (res.fd >= 0 && sys_file_type(&res.st) == SYS_FILE_REGULAR)) {
            sys_close(dirfd);
            file_respond(w, x, &res, span_make(rel, at + in));
            return;
        }
        if (res.fd >= 0) {
            sys_close(res.fd); /* an index that is a directory: as if absent */
        } else if (res.err != -ENOENT) {
            /* An index that is a link (or unreadable) is refused, never
             * replaced by a listing that would show what it hides. */
            sys_close(dirfd);
            reply_error(w, x, reply_open_error_status(res.err));
            return;
        }
    }
    if (!cfg->listing) {
        sys_close(dirfd);
        reply_error(w, x, 403);
        return;
    }
    dirlist_start(w, x, dirfd, wants_json(x, t) ? LISTING_JSON : LISTING_HTML);
}

/* --redirect-http: a 308 to https://host[:tls port]/path?query for a
 * request on the plain port. Only a host one of the certificates names
 * (and only hostname or IP characters) is redirected to; any other Host
 * gets a 400, so the redirect can never point elsewhere. path is the raw
 * request path (VCHAR only, starting with '/'). */
static void https_redirect(struct worker *w, struct exchange *x, struct span host, struct span path,
                           const struct span *query)
{
    char name[256], loc[HTTP_MAX_REQUEST_LINE + 320];
    bool ipv6;
    if (authority_host(host, name, sizeof name, &ipv6) < 0 || !tls_names_host(w->srv->tls, name)) {
        reply_error(w, x, 400); /* a Host none of our certificates names */
        return;
    }
    struct buf b = buf_make(loc, sizeof loc);
    buf_put_cstr(&b, ipv6 ? "https://[" : "https://");
    buf_put_cstr(&b, name);
    if (ipv6)
        buf_put_char(&b, ']');
    if (w->srv->tls_port != 443) {
        buf_put_char(&b, ':');
        buf_put_u64(&b, w->srv->tls_port);
    }
    buf_put_span(&b, path);
    if (query) {
        buf_put_char(&b, '?');
        buf_put_span(&b, *query);
    }
    if (b.full) {
        reply_error(w, x, 414);
        return;
    }
    reply_small(w, x, 308, FIELD(LOCATION), span_make(loc, b.len), false);
}

/* ---- site features (--clean-urls, --fallback) ------------------------------------------ */

/* A regular file at rel, served (with no_cache: as the fallback); false,
 * with nothing queued, when there is none. */
static bool serve_if_regular(struct worker *w, struct exchange *x, const char *rel, bool no_cache)
{
    struct fc_result res;
    filecache_lookup(w->cache, &exchange_site(w, x)->fc, rel, w->now_ms, w->now_sec, &res);
    if (!res.entry && res.fd < 0)
        return false;
    if (!res.entry && sys_file_type(&res.st) != SYS_FILE_REGULAR) {
        sys_close(res.fd);
        return false;
    }
    if (no_cache)
        file_respond_no_cache(w, x, &res, span_make(rel, cstr_len(rel)));
    else
        file_respond(w, x, &res, span_make(rel, cstr_len(rel)));
    return true;
}

/* Nothing at w->path: "/about" may be about.html (--clean-urls), and a
 * path without an extension may be the single-page app's (--fallback).
 * True when answered. */
static bool serve_missing(struct worker *w, struct exchange *x, unsigned flags)
{
    const struct site *site = &exchange_site(w, x)->conf->site;
    struct span path = span_make(w->path, cstr_len(w->path));
    char rel[PATH_MAX + 8];
    if (!(flags & TARGET_TRAILING_SLASH) && site_clean_candidate(site, path, rel, sizeof rel) &&
        serve_if_regular(w, x, rel, false))
        return true;
    return site_fallback_applies(site, SITE_GET_HEAD, path) &&
           serve_if_regular(w, x, site->fallback, true);
}

/* --clean-urls: "/about.html" moves to "/about" (301, the query kept),
 * unless "/about" names something else (a directory). The Location is
 * rebuilt from the normalized path, percent-encoded, so it is always one
 * absolute path on this host. True when answered. */
static bool clean_redirect(struct worker *w, struct exchange *x, const struct target *t,
                           unsigned flags)
{
    const struct vsite *vs = exchange_site(w, x);
    struct span path = span_make(w->path, cstr_len(w->path));
    size_t n = site_clean_redirect(&vs->conf->site, path);
    if (!n || (flags & TARGET_TRAILING_SLASH))
        return false;
    char stem[PATH_MAX + 1];
    mem_copy(stem, w->path, n);
    stem[n] = '\0';
    struct sys_stat st;
    if (resolve_stat(vs->root_fd, stem, vs->conf->follow_symlinks, w->srv->resolve, &st) != -ENOENT)
        return false;
    char loc[HTTP_MAX_REQUEST_LINE + 8];
    struct buf b = buf_make(loc, sizeof loc);
    buf_put_char(&b, '/');
    escape_uri_path(&b, span_make(stem, n), false);
    if (t->has_query) {
        buf_put_char(&b, '?');
        buf_put_span(&b, t->query);
    }
    if (b.full)
        reply_error(w, x, 414);
    else
        reply_small(w, x, 301, FIELD(LOCATION), span_make(loc, b.len), true);
    return true;
}

static void release(struct worker *w, struct fc_result *res)
{
    if (res->entry)
        filecache_release(w->cache, res->entry);
    else
        sys_close(res->fd);
}

static void serve_path(struct worker *w, struct exchange *x, const struct target *t, unsigned flags)
{
    struct fc_result res;
    filecache_lookup(w->cache, &exchange_site(w, x)->fc, w->path, w->now_ms, w->now_sec, &res);
    if (!res.entry && res.fd < 0 && res.err == -ENOENT && serve_missing(w, x, flags))
        return;
    if (!res.entry && res.fd < 0) {
        lookup_failed(w, x, w->path, res.err);
        return;
    }
    bool regular = res.entry || sys_file_type(&res.st) == SYS_FILE_REGULAR;
    if (regular && clean_redirect(w, x, t, flags)) {
        release(w, &res);
        return;
    }
    if (regular && (flags & TARGET_TRAILING_SLASH)) {
        /* "/file.html/" names a directory that does not exist (nginx and
         * Apache agree): the kernel would say ENOTDIR. */
        if (res.entry)
            filecache_release(w->cache, res.entry);
        else
            sys_close(res.fd);
        reply_error(w, x, 404);
        return;
    }
    if (res.entry) {
        file_respond(w, x, &res, span_make(w->path, cstr_len(w->path)));
        return;
    }
    switch (sys_file_type(&res.st)) {
    case SYS_FILE_REGULAR: /* not cached */
        file_respond(w, x, &res, span_make(w->path, cstr_len(w->path)));
        return;
    case SYS_FILE_DIR:
        if (w->path[0] && !(flags & TARGET_TRAILING_SLASH)) {
            sys_close(res.fd);
            redirect_to_dir(w, x, t);
            return;
        }
        serve_directory(w, x, res.fd, t);
        return;
    default: /* fifo, socket, device: never served */
        sys_close(res.fd);
        reply_error(w, x, 403);
        return;
    }
}

/* ---- ACME's http-01 (issue 35) --------------------------------------------------------- */

/* /.well-known/acme-challenge/TOKEN: the key authorization the ACME process
 * published for TOKEN, nothing else, never cached (RFC 8555 §8.3); 404 for
 * a token it did not. False, with nothing queued, for any other path. */
static bool acme_challenge(struct worker *w, struct exchange *x, struct span path)
{
    char keyauth[ACME_KEYAUTH_CAP];
    int n = acme_http01(w->srv->acme, path, keyauth, sizeof keyauth);
    if (n < 0)
        return false;
    if (n == 0) {
        reply_error(w, x, 404);
        return true;
    }
    struct response r;
    response_init(&r, 200);
    response_add(&r, FIELD(CONTENT_TYPE), SPAN_LIT("application/octet-stream"));
    response_add(&r, FIELD(CACHE_CONTROL), SPAN_LIT("no-store"));
    response_set_length(&r, (uint64_t)n);
    exchange_reply(w, x, &r);
    struct buf b = exchange_out_room(x);
    buf_put(&b, keyauth, (size_t)n);
    PITH_ASSERT(!b.full); /* the out region holds a head and far more */
    exchange_out_commit(x, b.len);
    exchange_body_mem(x, b.p, b.len);
    return true;
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

/* A test build's request (testhook.h): its answer, and its log line. */
static void test_request(struct worker *w, struct exchange *x, const struct testhook_answer *a)
{
    static const struct field_name heap = FIELD_NAME_INIT("X-Heap-Bytes", "x-heap-bytes");
    if (a->opened && a->open_err)
        log_error_errno("test hook: open outside the root", a->opened, a->open_err);
    else if (a->opened)
        log_error3("test hook: opened ", a->opened, " outside the root");
    if (a->heap[0])
        reply_small(w, x, a->status, &heap, span_make(a->heap, cstr_len(a->heap)), false);
    else if (a->status == 200)
        reply_small(w, x, 200, NULL, (struct span){0}, false);
    else
        reply_error(w, x, a->status);
}

/* What the access log shows of the request. */
static void note_request(struct exchange *x, const struct http_request *req,
                         const struct http_info *info)
{
    x->method = req->method;
    x->target = req->target;
    x->minor = req->minor;
    x->head_only = req->method_id == HTTP_METHOD_HEAD;
    x->referer = info->referer;
    x->user_agent = info->user_agent;
}

void handler_request(struct worker *w, struct exchange *x, const struct http_request *req,
                     const struct http_info *info, int verdict)
{
    x->info = info;
    note_request(x, req, info);
    if (verdict < 0) {
        /* Framing or Host in doubt: the request's end is unknown. */
        x->close = true;
        reply_error(w, x, -verdict);
        return;
    }
    x->keep_alive = info->keep_alive;
    struct testhook_answer th;
    if (testhook_request(req->target, &th)) {
        test_request(w, x, &th);
        return;
    }
    /* The site: from the absolute-form target's authority when there is
     * one (RFC 9112 §3.2.2), else from Host, which http_fields checked. */
    struct target t;
    bool split = target_split(req->target, &t) == 0;
    x->authority = split && t.form == TARGET_ABSOLUTE ? t.authority : info->host;
    if (sites_route(w->srv, x->tls_ctx, x->authority, &x->site) == SITES_MISDIRECTED) {
        reply_error(w, x, 421); /* another certificate's site: the client retries elsewhere */
        return;
    }
    /* A site's own --max-conns-per-client: the client's connections now
     * (this one included) against it (the top level's was checked when the
     * connection was counted). */
    unsigned limit = x->site->conf->max_conns_per_client;
    if (limit && x->client_key && clients_conns(w->srv->clients, x->client_key) > limit) {
        reply_client_limit(w, x);
        return;
    }
    int status = method_status(req->method_id);
    if (status) {
        /* A body is never read: the connection ends after the answer,
         * so no byte of it is taken for a request (RFC 9112 §9.6). */
        x->close = info->has_body;
        reply_error(w, x, status);
        return;
    }
    if (!split) {
        reply_error(w, x, 400);
        return;
    }
    if (t.form == TARGET_ASTERISK) {
        if (req->method_id == HTTP_METHOD_OPTIONS)
            options_response(w, x);
        else
            reply_error(w, x, 400);
        return;
    }
    /* ACME's http-01 (issue 35): before the redirect and every site rule. */
    if (unlikely(w->srv->acme) && acme_challenge(w, x, t.path))
        return;
    if (w->set->redirect_http && !x->tls) {
        https_redirect(w, x, info->host, t.path, t.has_query ? &t.query : NULL);
        return;
    }
    unsigned flags = 0;
    long n = target_normalize_all(t.path, w->path, sizeof w->path - 1, &flags);
    if (n < 0) {
        /* A decoded path longer than PATH_MAX names no file: 404, not 414
         * (the request line itself was within its limit). */
        reply_error(w, x, n == -414 ? 404 : (int)-n);
        return;
    }
    w->path[n] = '\0';
    /* Basic auth before anything about the path is told: the dotfile
     * rule's 403, the file's existence (issue 22). */
    if (!auth_allow(w, x, req, w->path))
        return;
    if (flags & TARGET_HIDDEN) {
        reply_error(w, x, 403);
        return;
    }
    if (req->method_id == HTTP_METHOD_OPTIONS) {
        options_response(w, x);
        return;
    }
    serve_path(w, x, &t, flags);
}

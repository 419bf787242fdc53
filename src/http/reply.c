/* SPDX-License-Identifier: MIT */
/*
 * reply.c - the small fixed responses every part of the server may need:
 * errors and redirects with the short HTML body, and the contract's map from
 * a failed open beneath the root to a status. Kept apart from the handler so
 * that the handler, file and dirlist modules depend on it and not on each
 * other.
 */
#include "http/reply.h"

#include "base/stats.h"
#include "base/worker.h"
#include "core/bytes.h"
#include "core/respond.h"
#include "core/response.h"
#include "core/site.h"
#include "http/exchange.h"
#include "http/filecache.h"
#include "sys/resolve.h"
#include "sys/sys.h"

#include <errno.h>

static void small(struct worker *w, struct exchange *x, int status,
                  const struct field_name *extra_name, struct span extra_value, bool cacheable,
                  bool vary)
{
    struct response r;
    response_init(&r, status);
    response_add(&r, FIELD(CONTENT_TYPE), SPAN_LIT("text/html; charset=utf-8"));
    if (extra_name)
        response_add(&r, extra_name, extra_value);
    if (vary)
        response_add(&r, FIELD(VARY), SPAN_LIT("Accept-Encoding"));
    /* Errors never carry a positive max-age (a cached 404 outlives a fix). */
    if (cacheable) {
        const char *cc = exchange_site(w, x)->conf->cache_control;
        response_add(&r, FIELD(CACHE_CONTROL), span_make(cc, cstr_len(cc)));
    }
    response_set_length(&r, respond_error_body_len(status));
    exchange_reply(w, x, &r);
    if (!x->body)
        return;
    struct buf b = exchange_out_room(x);
    respond_error_body(&b, status);
    PITH_ASSERT(!b.full);
    exchange_out_commit(x, b.len);
    exchange_body_mem(x, b.p, b.len);
}

void reply_small(struct worker *w, struct exchange *x, int status,
                 const struct field_name *extra_name, struct span extra_value, bool cacheable)
{
    small(w, x, status, extra_name, extra_value, cacheable, false);
}

void reply_small_vary(struct worker *w, struct exchange *x, int status,
                      const struct field_name *extra_name, struct span extra_value)
{
    small(w, x, status, extra_name, extra_value, false, true);
}

/* --error-page: the page's bytes with the error's status and the error's
 * own fields (Allow for 405), its Content-Type from its name, and none of
 * a file's validators or ranges (an error page is no representation of
 * the target: no ETag, Last-Modified, Accept-Ranges or Cache-Control).
 * HEAD gets the head. False, with nothing queued, when the page cannot be
 * opened: the built-in body answers instead. */
static bool error_page(struct worker *w, struct exchange *x, int status,
                       const struct field_name *name, struct span value)
{
    const struct vsite *vs = exchange_site(w, x);
    const char *path = site_page_for(&vs->conf->site, status);
    if (!path || x->entry || x->fd >= 0)
        return false;
    struct fc_result res;
    filecache_lookup(w->cache, &vs->fc, path, w->now_ms, w->now_sec, &res);
    if (!res.entry && res.fd < 0)
        return false;
    if (!res.entry && sys_file_type(&res.st) != SYS_FILE_REGULAR) {
        sys_close(res.fd);
        return false;
    }
    struct fc_entry *e = res.entry;
    if (e) {
        x->entry = e;
    } else {
        e = w->scratch_entry;
        filecache_describe(&vs->fc, e, &res.st, span_make(path, cstr_len(path)), w->now_sec);
        e->fd = -1;
        e->body = NULL;
        x->fd = res.fd;
    }
    struct response r;
    response_init(&r, status);
    response_add(&r, FIELD(CONTENT_TYPE), e->type);
    if (name) /* Allow for 405 (reply_error_with), Retry-After, WWW-Authenticate */
        response_add(&r, name, value);
    response_set_length(&r, e->st.size);
    exchange_reply(w, x, &r);
    if (e->st.size == 0)
        return true;
    if (e->body)
        exchange_body_mem(x, e->body, e->st.size);
    else
        exchange_body_file(x, res.entry ? e->fd : res.fd, 0, e->st.size);
    return true;
}

void reply_error_with(struct worker *w, struct exchange *x, int status,
                      const struct field_name *name, struct span value)
{
    if (respond_status_closes(status))
        x->close = true;
    if (status == 405 && !name) {
        name = FIELD(ALLOW);
        value = SPAN_LIT(REPLY_ALLOW);
    }
    if (error_page(w, x, status, name, value))
        return;
    reply_small(w, x, status, name, value, false);
}

void reply_error(struct worker *w, struct exchange *x, int status)
{
    reply_error_with(w, x, status, NULL, (struct span){0});
}

void reply_client_limit(struct worker *w, struct exchange *x)
{
    stats_add(&w->stats->client_limited, 1);
    x->close = true; /* the connection is the client's one too many */
    reply_error_with(w, x, 503, FIELD(RETRY_AFTER), SPAN_LIT(REPLY_LIMIT_RETRY));
}

int reply_open_error_status(int err)
{
    return resolve_error_status(err);
}

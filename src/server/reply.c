/* SPDX-License-Identifier: MIT */
/*
 * reply.c - the small fixed responses every part of the server may need:
 * errors and redirects with the short HTML body, and the contract's map from
 * a failed open beneath the root to a status. Kept apart from the handler so
 * that the handler, file and dirlist modules depend on it and not on each
 * other.
 */
#include "server/reply.h"

#include "core/bytes.h"
#include "core/respond.h"
#include "core/response.h"
#include "server/exchange.h"
#include "server/worker.h"

#include <errno.h>

static void small(struct worker *w, struct exchange *x, int status, const char *extra_name,
                  struct span extra_value, bool cacheable, bool vary)
{
    struct response r;
    response_init(&r, status);
    response_add(&r, "Content-Type", SPAN_LIT("text/html; charset=utf-8"));
    if (extra_name)
        response_add(&r, extra_name, extra_value);
    if (vary)
        response_add(&r, "Vary", SPAN_LIT("Accept-Encoding"));
    /* Errors never carry a positive max-age (a cached 404 outlives a fix). */
    if (cacheable)
        response_add(&r, "Cache-Control",
                     span_make(w->set->cache_control, cstr_len(w->set->cache_control)));
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

void reply_small(struct worker *w, struct exchange *x, int status, const char *extra_name,
                 struct span extra_value, bool cacheable)
{
    small(w, x, status, extra_name, extra_value, cacheable, false);
}

void reply_small_vary(struct worker *w, struct exchange *x, int status, const char *extra_name,
                      struct span extra_value)
{
    small(w, x, status, extra_name, extra_value, false, true);
}

/* The statuses whose request's end is unknown or untrusted: the connection
 * closes after the answer, and nothing pipelined after it is read. */
static bool status_closes(int status)
{
    return status == 400 || status == 408 || status == 414 || status == 431 || status == 505;
}

void reply_error(struct worker *w, struct exchange *x, int status)
{
    if (status_closes(status))
        x->close = true;
    if (status == 405)
        reply_small(w, x, status, "Allow", SPAN_LIT(REPLY_ALLOW), false);
    else
        reply_small(w, x, status, NULL, (struct span){0}, false);
}

int reply_open_error_status(int err)
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

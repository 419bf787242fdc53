/* SPDX-License-Identifier: MIT */
/*
 * exchange.c - see exchange.h. What every response gets whatever the
 * protocol (the site's fields, HSTS, the counts, the log line); the
 * protocol's codec encodes it.
 */
#include "http/exchange.h"

#include "base/clients.h"
#include "base/server.h"
#include "base/stats.h"
#include "base/worker.h"
#include "core/bytes.h"
#include "core/site.h"
#include "http/filecache.h"
#include "sys/sys.h"

void exchange_begin(struct exchange *x, const struct exchange_codec *codec, char *out,
                    size_t out_cap, char *scratch, size_t scratch_cap)
{
    /* Field by field, not a compound literal: the queue's segments, chunk
     * lines and iovecs need no zeroing, and this runs for every request. */
    x->active = true;
    x->method = x->target = x->referer = x->user_agent = x->encoding = (struct span){0};
    x->codec = codec;
    x->minor = 1;
    x->info = NULL;
    x->head_only = x->keep_alive = x->close = x->tls = false;
    x->tls_ctx = -1;
    x->status = 0;
    x->body = x->close_after = false;
    outq_reset(&x->q);
    x->out = buf_make(out, out_cap);
    x->scratch = scratch;
    x->scratch_cap = scratch_cap;
    x->src = NULL;
    x->src_started = x->src_finished = x->src_paused = false;
    x->entry = NULL;
    x->fd = -1;
    x->site_name = (struct span){0};
    x->site = NULL;
    x->authority = (struct span){0};
    x->head_sent = x->body_sent = 0;
    x->client_set = false;
    x->started_us = 0;
    x->client_key = 0;
}

/* The request's method, as the site options distinguish them. */
static enum site_method site_method_of(const struct exchange *x)
{
    if (span_eq_lit(x->method, "GET") || span_eq_lit(x->method, "HEAD"))
        return SITE_GET_HEAD;
    return span_eq_lit(x->method, "OPTIONS") ? SITE_OPTIONS : SITE_OTHER;
}

const struct vsite *exchange_site(const struct worker *w, const struct exchange *x)
{
    return x->site ? x->site : &w->srv->sites[0];
}

void exchange_reply(struct worker *w, struct exchange *x, struct response *r)
{
    PITH_ASSERT(x->status == 0 && outq_empty(&x->q));
    r->no_body = r->no_body || x->head_only;
    r->close = r->close || x->close || w->draining;
    const struct vsite *vs = exchange_site(w, x);
    const struct site *site = &vs->conf->site;
    /* Responses per site (/metrics): counted here, where every protocol's
     * answer is encoded. */
    stats_add(&w->stats->site_requests[vs->index], 1);
    struct exchange_extra e = {
        .date = span_make(w->date, DATE_IMF_LEN),
        .server = site->no_server_header ? (struct span){0} : SPAN_LIT(SERVER_NAME),
    };
    e.n = site_fields(site, r->status, site_method_of(x), x->site_name, e.field);
    /* --hsts: every HTTPS response carries it (RFC 6797 §7.1); with the
     * site's fields, so it takes none of the response's field slots. */
    if (x->tls && w->set->hsts)
        e.field[e.n++] = (struct response_field){
            FIELD(HSTS), span_make(w->set->hsts_value, cstr_len(w->set->hsts_value))};
    /* HTTP/3 (issue 34): responses over TCP say where QUIC is (RFC 7838 §3),
     * so browsers switch; an HTTP/3 response need not repeat it. */
    if (w->set->alt_svc[0] && x->codec->version != 3)
        e.field[e.n++] = (struct response_field){
            FIELD(ALT_SVC), span_make(w->set->alt_svc, cstr_len(w->set->alt_svc))};
    x->status = r->status;
    x->body = !response_status_has_no_content(r->status) && !r->no_body;
    x->close_after = false;
    x->codec->head(w, x, r, &e);
}

void exchange_body_mem(struct exchange *x, const char *p, size_t n)
{
    if (x->body)
        outq_push_mem(&x->q, p, n);
}

void exchange_body_file(struct exchange *x, int fd, uint64_t off, uint64_t len)
{
    if (x->body)
        outq_push_file(&x->q, fd, off, len);
}

void exchange_body_source(struct exchange *x, const struct body_source *src)
{
    x->src = src;
    x->src_finished = !x->body; /* HEAD: nothing to generate, only done() */
}

void exchange_log(struct worker *w, struct exchange *x, struct sockaddr_storage *peer, int fd)
{
    if (!x || !x->active || x->status == 0)
        return;
    stats_request(w->stats, x->status, x->method, x->head_sent + x->body_sent);
    stats_cache(w->stats, w->stats_base_hits, w->cache->hits, w->stats_base_misses,
                w->cache->misses);
    if (w->log.fd >= 0) {
        if (peer->ss_family == AF_UNSPEC)
            sys_peer_addr(fd, peer); /* io_uring accepts do not report it */
        struct sockaddr_storage real;
        if (x->client_set)
            client_addr_to(&x->client, 0, &real);
        struct access_entry e = {
            .peer = x->client_set ? &real : peer,
            .now = w->now_sec,
            .method = x->method,
            .target = x->target,
            .referer = x->referer,
            .user_agent = x->user_agent,
            .minor = x->codec->version ? x->codec->version : x->minor,
            .encoding = x->encoding,
            .status = x->status,
            .bytes = x->body_sent,
            .duration_us = x->started_us ? sys_now_us() - x->started_us : -1,
            .tls_version = x->tls_version,
            .log_host = w->set->hosts.n > 0,
            .authority = x->authority,
            .site_name = x->site && x->site->conf->named ? x->site->conf->label : NULL,
        };
        access_log_add(&w->log, &e, w->now_ms);
    }
    x->status = 0;
}

void exchange_release(struct worker *w, struct exchange *x)
{
    if (!x->active)
        return;
    if (x->src && x->src->done)
        x->src->done(w, x);
    x->src = NULL;
    if (x->fd >= 0)
        sys_close(x->fd);
    x->fd = -1;
    if (x->entry)
        filecache_release(w->cache, x->entry);
    x->entry = NULL;
    x->active = false;
}

/* SPDX-License-Identifier: MIT */
/*
 * h2_stream.c - one HTTP/2 stream (RFC 9113 §8): its request becomes the
 * same exchange and handler call an HTTP/1 request gets, and its response
 * leaves as HEADERS and DATA. So that every verdict is HTTP/1's (method,
 * Host, the target normaliser, Range, conditionals, sites), the request's
 * fields are written in their HTTP/1 form into the stream's slot and parsed
 * by the same parser; nghttp2 has already checked what RFC 9113 §8.2-§8.3
 * asks (pseudo-headers, lowercase names, connection-specific fields, te,
 * content-length against DATA) and resets a malformed stream itself. The
 * response head the exchange encoded (exchange.h) becomes the HEADERS'
 * fields, less those RFC 9113 §8.2.2 forbids; the body is the exchange's
 * output queue, copied into the connection's bounded output buffer one
 * DATA frame at a time (NGHTTP2_DATA_FLAG_NO_COPY: the frame header and the
 * payload are written there by send_data, memory by memcpy, file ranges by
 * pread), never a partial frame.
 *
 * Never: buffer a request body (DATA is counted and dropped), keep a reset
 * stream's file or cache entry past nghttp2's close of it.
 */
#include "server/h2_internal.h"

#include "core/bytes.h"
#include "core/http_parse.h"
#include "server/client.h"
#include "server/conn.h"
#include "server/exchange.h"
#include "server/handler.h"
#include "server/reply.h"
#include "server/stats.h"
#include "server/tls.h"
#include "server/transport.h"
#include "server/worker.h"
#include "sys/sys.h"

#include <errno.h>
#include <string.h>

/* The stream record, then the request's HTTP/1 form, in the slot's input
 * region: at most H2_HEADER_LIST_MAX of fields plus the request and Host
 * lines (whose values the list size counts too). */
#define STREAM_REC_SIZE 512
#define REQ_CAP         (POOL_IN_SIZE - STREAM_REC_SIZE)
_Static_assert(sizeof(struct h2_stream) <= STREAM_REC_SIZE, "a stream record fits its room");
_Static_assert(REQ_CAP >= H2_HEADER_LIST_MAX + 64, "a whole header list fits its room");
_Static_assert(POOL_OUT_SIZE >= H2_HEADER_LIST_MAX, "the pseudo-headers fit the out region");
/* Response fields: the response's, a field block's, the site's --header
 * fields, Date, Server, the length and HSTS fit with room to spare. */
#define NV_MAX 64
/* A frame header's length (RFC 9113 §4.1); nghttp2 names it only inside. */
#define FRAME_HDLEN 9

/* ---- the stream's slot ----------------------------------------------------------------- */

void h2_stream_begin(struct worker *w, struct h2_conn *hc, int32_t id)
{
    char *slot = pool_get(&w->h2->streams);
    if (!slot) {
        /* Every stream slot of the worker is in use: the client may retry. */
        nghttp2_submit_rst_stream(hc->session, NGHTTP2_FLAG_NONE, id, NGHTTP2_REFUSED_STREAM);
        return;
    }
    struct h2_stream *st = (struct h2_stream *)(void *)slot;
    *st = (struct h2_stream){
        .hc = hc,
        .id = id,
        .next = hc->first,
        .x = (struct exchange *)(void *)(slot + POOL_IN_SIZE),
        .req = slot + STREAM_REC_SIZE,
        .pseudo = slot + POOL_IN_SIZE + POOL_EXCH_SIZE,
    };
    st->x->active = false;
    if (hc->first)
        hc->first->prev = st;
    hc->first = st;
    hc->nstreams++;
    st->grant =
        nghttp2_session_get_remote_settings(hc->session, NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE);
    stats_add(&w->stats->h2_streams, 1);
    nghttp2_session_set_stream_user_data(hc->session, id, st);
}

/* The stream is done with: its log line, its work released at once (a
 * file, a cache entry: issue 20's "a reset stream's work"), its slot back. */
static void stream_free(struct worker *w, struct h2_stream *st)
{
    struct h2_conn *hc = st->hc;
    if (st->x->active) {
        exchange_log(w, st->x, &hc->c->peer, hc->c->fd);
        exchange_release(w, st->x);
    }
    if (st->prev)
        st->prev->next = st->next;
    else
        hc->first = st->next;
    if (st->next)
        st->next->prev = st->prev;
    hc->nstreams--;
    pool_put(&w->h2->streams, (char *)st);
}

void h2_stream_free_all(struct worker *w, struct h2_conn *hc)
{
    while (hc->first) {
        nghttp2_session_set_stream_user_data(hc->session, hc->first->id, NULL);
        stream_free(w, hc->first);
    }
}

void h2_stream_resume(struct h2_conn *hc)
{
    for (struct h2_stream *st = hc->first; st; st = st->next)
        if (st->deferred) {
            st->deferred = false;
            nghttp2_session_resume_data(hc->session, st->id);
        }
}

static struct h2_stream *stream_of(nghttp2_session *s, int32_t id)
{
    return nghttp2_session_get_stream_user_data(s, id);
}

/* ---- waiting for window (CVE-2019-9511) ------------------------------------------------ */

/* Whether a window allows a DATA frame of need bytes: it holds them, or
 * it is the rest (above 0) of a grant of at least H2_WINDOW_MIN, which the
 * frame then empties. */
static bool window_allows(int32_t window, uint32_t grant, uint32_t need)
{
    return window >= (int32_t)need || (window > 0 && grant >= H2_WINDOW_MIN);
}

/* Whether both windows (the stream's and the connection's) allow what the
 * stream waits for; if not, it notes which one it waits on, and the
 * connection's least need among those waiting on its window. */
static bool window_ready(struct h2_conn *hc, struct h2_stream *st)
{
    int32_t conn = nghttp2_session_get_remote_window_size(hc->session);
    int32_t own = nghttp2_session_get_stream_remote_window_size(hc->session, st->id);
    st->conn_window = !window_allows(conn, hc->conn_grant, st->window_need);
    if (!st->conn_window && window_allows(own, st->grant, st->window_need))
        return true;
    if (st->conn_window && (hc->conn_window_need == 0 || st->window_need < hc->conn_window_need))
        hc->conn_window_need = st->window_need;
    return false;
}

static void window_resume(struct h2_conn *hc, struct h2_stream *st)
{
    st->window_need = 0;
    nghttp2_session_resume_data(hc->session, st->id);
}

void h2_stream_window(struct h2_conn *hc, int32_t id, uint32_t grant)
{
    if (id > 0) {
        struct h2_stream *st = stream_of(hc->session, id);
        if (st)
            st->grant = grant;
        if (st && st->window_need && window_ready(hc, st))
            window_resume(hc, st);
        return;
    }
    if (id == 0)
        hc->conn_grant = grant;
    else
        for (struct h2_stream *st = hc->first; st; st = st->next)
            st->grant = grant;
    /* The connection's window: nothing to look at until it holds the least
     * any stream waits for, so a dribble of 1-byte updates costs one
     * comparison each. Then (or after SETTINGS, id < 0) each waiting stream
     * is looked at, and those still short are noted again. */
    if (id == 0 && (hc->conn_window_need == 0 ||
                    !window_allows(nghttp2_session_get_remote_window_size(hc->session),
                                   hc->conn_grant, hc->conn_window_need)))
        return;
    hc->conn_window_need = 0;
    for (struct h2_stream *st = hc->first; st; st = st->next)
        if (st->window_need && (id < 0 || st->conn_window) && window_ready(hc, st))
            window_resume(hc, st);
}

/* ---- the request ----------------------------------------------------------------------- */

static void put(char *to, uint32_t *len, const void *p, size_t n)
{
    mem_copy(to + *len, p, n);
    *len += (uint32_t)n;
}

static int pseudo_header(struct h2_stream *st, const uint8_t *name, size_t nlen,
                         const uint8_t *value, size_t vlen)
{
    struct span n = span_make((const char *)name, nlen), *to = NULL;
    if (span_eq_lit(n, ":method"))
        to = &st->method;
    else if (span_eq_lit(n, ":path"))
        to = &st->path;
    else if (span_eq_lit(n, ":authority"))
        to = &st->authority;
    else if (span_eq_lit(n, ":scheme"))
        to = &st->scheme;
    if (!to)
        return 0; /* nghttp2 resets a stream with an unknown one */
    *to = span_make(st->pseudo + st->pseudo_len, vlen);
    put(st->pseudo, &st->pseudo_len, value, vlen);
    return 0;
}

/* One field of a request's header list: pseudo-headers kept apart, the
 * others written in their HTTP/1 form. Past H2_HEADER_LIST_MAX nothing more
 * is kept and the answer will be 431, as for an HTTP/1 head of that size
 * (nghttp2 still decodes the rest, so HPACK stays in step). */
static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
                     const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
    (void)flags;
    struct h2_conn *hc = ud;
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0; /* trailers: a body's, which is never read */
    struct h2_stream *st = stream_of(s, f->hd.stream_id);
    if (!st || st->too_big)
        return 0;
    /* Each length is under 64 KiB (nghttp2's field limit): no overflow. */
    st->list_bytes += (uint32_t)(nlen + vlen + 32);
    if (st->list_bytes > H2_HEADER_LIST_MAX) {
        st->too_big = true;
        h2_glitch(hc->w, hc);
        return 0;
    }
    if (nlen && name[0] == ':')
        return pseudo_header(st, name, nlen, value, vlen);
    struct span n = span_make((const char *)name, nlen);
    if (span_eq_lit(n, "te") || (span_eq_lit(n, "host") && st->authority.p))
        return 0; /* te: "trailers" (nghttp2 checked); :authority wins over host */
    st->has_host = st->has_host || span_eq_lit(n, "host");
    st->has_priority = st->has_priority || span_eq_lit(n, "priority");
    put(st->req, &st->req_len, name, nlen);
    put(st->req, &st->req_len, ": ", 2);
    put(st->req, &st->req_len, value, vlen);
    put(st->req, &st->req_len, "\r\n", 2);
    return 0;
}

/* The request line and Host go before the fields: "GET /p HTTP/1.1",
 * the target being :path (CONNECT has none: its authority). Returns the
 * whole head's length, or 0 when it does not fit REQ_CAP: the list bound
 * counts :authority once, but CONNECT's is written twice (target and
 * Host), so a 16 KiB one passes the room; that head is too large (431). */
static uint32_t finish_head(struct h2_stream *st)
{
    struct span target = st->path.n ? st->path : st->authority;
    uint32_t line = (uint32_t)(st->method.n + 1 + target.n + 11);
    uint32_t host = st->authority.p ? (uint32_t)(6 + st->authority.n + 2) : 0;
    if (line + host + st->req_len + 2 > REQ_CAP)
        return 0;
    mem_move(st->req + line + host, st->req, st->req_len);
    uint32_t at = 0;
    put(st->req, &at, st->method.p, st->method.n);
    put(st->req, &at, " ", 1);
    put(st->req, &at, target.p, target.n);
    put(st->req, &at, " HTTP/1.1\r\n", 11);
    if (host) {
        put(st->req, &at, "Host: ", 6);
        put(st->req, &at, st->authority.p, st->authority.n);
        put(st->req, &at, "\r\n", 2);
    }
    at += st->req_len;
    put(st->req, &at, "\r\n", 2);
    return at;
}

static void begin_exchange(struct worker *w, struct h2_stream *st)
{
    struct conn *c = st->hc->c;
    char *out = (char *)st->x + POOL_EXCH_SIZE;
    exchange_begin(st->x, out, POOL_OUT_SIZE, out + POOL_OUT_SIZE, POOL_DIR_SIZE);
    st->x->h2 = true;
    if (w->set->log_json && w->log.fd >= 0)
        st->x->started_us = sys_now_us();
    st->x->tls = c->tp != &transport_plain;
    st->x->tls_ctx = st->x->tls ? tls_conn_ctx(w, c) : -1; /* sites: 421 for another cert */
    st->x->tls_version = st->x->tls ? tls_conn_version(w, c) : NULL; /* the JSON log's "tls" */
}

/* Runs the handler on the stream's request, as conn.c does for HTTP/1. */
static void answer(struct worker *w, struct h2_stream *st)
{
    struct conn *c = st->hc->c;
    uint32_t n = st->too_big ? 0 : finish_head(st);
    if (n == 0) {
        begin_exchange(w, st);
        reply_error(w, st->x, 431);
        return;
    }
    begin_exchange(w, st); /* from here the pseudo-headers' room is the out region */
    long r = http_parse_request(st->req, n, &w->req);
    if (r != (long)n) {
        /* A value HTTP/1 would refuse (nghttp2 admits obs-text and such):
         * the same 400 (or 414, 431) an HTTP/1 client gets. */
        reply_error(w, st->x, r < 0 ? (int)-r : 400);
        return;
    }
    client_real_ip(w, c, st->x, &w->req);
    st->x->client_key = client_key_of(w, c, st->x);
    if (c->client_limited)
        reply_client_limit(w, st->x);
    else
        handler_request(w, st->x, &w->req);
}

/* ---- the response ---------------------------------------------------------------------- */

/* Fields an HTTP/2 response must not carry (RFC 9113 §8.2.2). */
static bool connection_specific(struct span name)
{
    return span_eq_nocase_lit(name, "connection") || span_eq_nocase_lit(name, "keep-alive") ||
           span_eq_nocase_lit(name, "transfer-encoding") ||
           span_eq_nocase_lit(name, "proxy-connection") || span_eq_nocase_lit(name, "upgrade");
}

struct nv_list {
    nghttp2_nv nv[NV_MAX];
    size_t n;
    char names[4096]; /* the lowercased names (nghttp2 copies them at submit) */
    size_t names_len;
};

/* The fields of one piece of the HTTP/1 head ("Name: value\r\n" lines, the
 * status line and the empty line skipped) into l, names lowercased. */
static void head_fields(struct nv_list *l, struct span piece)
{
    if (piece.n == 0)
        return; /* an absent piece (p NULL): no pointer arithmetic on it */
    const char *p = piece.p, *stop = piece.p + piece.n;
    while (p < stop) {
        /* pith's own head: every line ends in CRLF (memchr: libc's is
         * vectorised, and this runs over every response's head) */
        const char *lf = memchr(p, '\n', (size_t)(stop - p));
        const char *end = lf ? lf : stop;
        struct span line = span_make(p, (size_t)(end - p));
        p = lf ? lf + 1 : stop;
        if (line.n && line.p[line.n - 1] == '\r')
            line.n--;
        const char *c = memchr(line.p, ':', line.n);
        size_t colon = c ? (size_t)(c - line.p) : line.n;
        if (line.n == 0 || colon == line.n || (line.n > 5 && mem_eq(line.p, "HTTP/", 5)))
            continue;
        struct span name = span_make(line.p, colon), value = span_make(line.p + colon + 1, 0);
        while (value.p < line.p + line.n && *value.p == ' ')
            value.p++;
        value.n = (size_t)(line.p + line.n - value.p);
        if (connection_specific(name))
            continue;
        PITH_ASSERT(l->n < NV_MAX && l->names_len + name.n <= sizeof l->names);
        char *lower = l->names + l->names_len;
        for (size_t k = 0; k < name.n; k++)
            lower[k] = ascii_lower(name.p[k]);
        l->names_len += name.n;
        l->nv[l->n++] = (nghttp2_nv){(uint8_t *)lower, (uint8_t *)(uintptr_t)value.p, name.n,
                                     value.n, NGHTTP2_NV_FLAG_NONE};
    }
}

static ssize_t read_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *source, void *ud);

/* HEADERS (and the body's DATA to follow) for the answered exchange. */
static int submit(struct worker *w, struct h2_stream *st)
{
    struct exchange *x = st->x;
    PITH_ASSERT(x->status >= 100 && x->status <= 999);
    struct nv_list l;
    char status[3] = {(char)('0' + x->status / 100), (char)('0' + x->status / 10 % 10),
                      (char)('0' + x->status % 10)};
    l.nv[0] = (nghttp2_nv){(uint8_t *)":status", (uint8_t *)status, 7, 3, NGHTTP2_NV_FLAG_NONE};
    l.n = 1;
    l.names_len = 0;
    for (int i = 0; i < 3; i++)
        head_fields(&l, x->h2_head[i]);
    nghttp2_data_provider body = {.source.ptr = st, .read_callback = read_body};
    st->answered = true;
    stats_add(&w->stats->h2_responses, 1);
    return nghttp2_submit_response(st->hc->session, st->id, l.nv, l.n, x->body ? &body : NULL);
}

void h2_stream_request(struct worker *w, struct h2_conn *hc, int32_t id)
{
    struct h2_stream *st = stream_of(hc->session, id);
    if (!st || st->answered)
        return;
    if (!st->has_priority) {
        /* RFC 9218's default (urgency 3) is not incremental: a 3 MiB
         * download would go out whole before a small asset asked for after
         * it. Without the client's word, streams of one urgency share the
         * connection round-robin; a priority header or PRIORITY_UPDATE
         * still decides (nghttp2 applies them). */
        const nghttp2_extpri shared = {NGHTTP2_EXTPRI_DEFAULT_URGENCY, 1};
        nghttp2_session_change_extpri_stream_priority(hc->session, id, &shared, 0);
    }
    answer(w, st);
    if (submit(w, st) != 0)
        nghttp2_submit_rst_stream(hc->session, NGHTTP2_FLAG_NONE, id, NGHTTP2_INTERNAL_ERROR);
}

/* ---- the body -------------------------------------------------------------------------- */

/* The next DATA frame's length: the front of the queue (refilled from the
 * body source when dry), at most what flow control allows (length) and
 * what the output buffer has room for; the payload is written by
 * send_data. Deferred when the window (resumed when it grows) or the room
 * left (resumed once the buffer drains) would make a small frame of a
 * bigger piece. */
static ssize_t read_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *source, void *ud)
{
    (void)s, (void)id, (void)buf;
    struct h2_conn *hc = ud;
    struct h2_stream *st = source->ptr;
    struct exchange *x = st->x;
    for (int fills = 0; outq_empty(&x->q) && x->src && !x->src_finished; fills++) {
        if (fills == 8) {
            /* A source that yields without a piece (a listing's pause):
             * back after the next write, as HTTP/1's BODY_PAUSE. */
            st->deferred = hc->resume_on_write = true; /* settle() asks for writable() */
            return NGHTTP2_ERR_DEFERRED;
        }
        /* Every queued byte is copied out already; the first piece writes
         * after what dirlist_start() left (the page's start), as in conn.c. */
        if (x->src_started)
            exchange_out_clear(x);
        int r = x->src->fill(hc->w, x);
        x->src_started = true;
        if (r < 0)
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* RST_STREAM: the body cannot end */
        x->src_finished = r == BODY_DONE;
    }
    *flags |= NGHTTP2_DATA_FLAG_NO_COPY;
    if (outq_empty(&x->q)) {
        *flags |= NGHTTP2_DATA_FLAG_EOF;
        return 0;
    }
    uint64_t avail = outq_front(&x->q)->len;
    size_t n = avail < length ? (size_t)avail : length;
    /* length is the flow-control window (or the 16 KiB frame): a frame it
     * would cut below H2_WINDOW_MIN waits for more (h2_stream_window). */
    uint32_t need = avail < H2_WINDOW_MIN ? (uint32_t)avail : H2_WINDOW_MIN;
    if (length < need) {
        st->window_need = need;
        if (!window_ready(hc, st))
            return NGHTTP2_ERR_DEFERRED;
        st->window_need = 0; /* the rest of a grant: this frame empties it */
    }
    uint32_t room = h2_out_room(hc);
    if (room < FRAME_HDLEN + (n < H2_FRAME_MIN ? n : H2_FRAME_MIN)) {
        st->deferred = true;
        return NGHTTP2_ERR_DEFERRED;
    }
    if (n > room - FRAME_HDLEN)
        n = room - FRAME_HDLEN;
    if (n == x->q.left && (!x->src || x->src_finished))
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

/* Writes a DATA frame whole into the output buffer: the 9-byte header
 * nghttp2 made, then the payload from the queue's front. read_body sized it
 * to fit, and nothing is written between the two calls. */
static int send_data(nghttp2_session *s, nghttp2_frame *f, const uint8_t *framehd, size_t length,
                     nghttp2_data_source *source, void *ud)
{
    (void)s;
    struct h2_conn *hc = ud;
    struct h2_stream *st = source->ptr;
    struct exchange *x = st->x;
    PITH_ASSERT(f->data.padlen == 0);
    if (h2_out_room(hc) < FRAME_HDLEN + length)
        return NGHTTP2_ERR_WOULDBLOCK; /* cannot happen (read_body sized it): never a part */
    char *to = h2_out_tail(hc);
    mem_copy(to, framehd, FRAME_HDLEN);
    if (length) {
        struct seg *seg = outq_front(&x->q);
        PITH_ASSERT(length <= seg->len);
        if (seg->kind == SEG_MEM) {
            mem_copy(to + FRAME_HDLEN, seg->p, length);
        } else {
            ssize_t got = sys_pread(seg->fd, to + FRAME_HDLEN, length, seg->off);
            if (got != (ssize_t)length)
                return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* the file shrank: reset */
        }
        outq_consume(&x->q, length, &x->head_sent, &x->body_sent);
    }
    hc->out_len += (uint32_t)(FRAME_HDLEN + length);
    return 0;
}

/* ---- closing --------------------------------------------------------------------------- */

static int on_close(nghttp2_session *s, int32_t id, uint32_t error_code, void *ud)
{
    struct h2_conn *hc = ud;
    struct h2_stream *st = stream_of(s, id);
    if (!st)
        return 0;
    if (error_code != NGHTTP2_NO_ERROR || !st->answered)
        h2_reset_spent(hc->w, hc);
    else if (hc->reset_budget < H2_RESET_BUDGET)
        hc->reset_budget++; /* a finished response earns a reset back */
    stream_free(hc->w, st);
    return 0;
}

void h2_stream_callbacks(nghttp2_session_callbacks *cb)
{
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_send_data_callback(cb, send_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
}

/* SPDX-License-Identifier: MIT */
/*
 * h2_stream.c - one HTTP/2 stream (RFC 9113 §8): its request becomes the
 * same exchange and handler call an HTTP/1 request gets, and its response
 * leaves as HEADERS and DATA, with no HTTP/1 text in either direction. The
 * request fills the same struct http_request HTTP/1's parser fills, field
 * by field as nghttp2 decodes them, and every verdict is the one core
 * function HTTP/1 uses (the request line's and field values' checks of
 * http_parse, http_fields' analysis as each field arrives, then the
 * handler's target, Host, Range, conditionals and sites); nghttp2 has
 * already checked what RFC 9113 §8.2-§8.3 asks of the syntax
 * (pseudo-headers, lowercase names, connection-specific fields, te,
 * content-length against DATA) and resets such a stream itself, and this
 * file checks what it leaves to the server (:scheme for the connection,
 * host against :authority). The response is encoded by HTTP/2's codec
 * (h2_head, from core's field_list): lowercase static names, values kept
 * in the exchange, never a connection-specific field; the body is the
 * exchange's output queue, copied into the connection's bounded output buffer one
 * DATA frame at a time (NGHTTP2_DATA_FLAG_NO_COPY: the frame header and the
 * payload are written there by send_data, memory by memcpy, file ranges by
 * pread), never a partial frame.
 *
 * Never: buffer a request body (DATA is counted and dropped), keep a reset
 * stream's file or cache entry past nghttp2's close of it.
 */
#include "http2/h2_internal.h"

#include "base/stats.h"
#include "base/worker.h"
#include "core/bytes.h"
#include "core/field_list.h"
#include "core/http_fields.h"
#include "core/http_parse.h"
#include "event/client.h"
#include "event/conn.h"
#include "event/loop.h"
#include "event/transport.h"
#include "http/exchange.h"
#include "http/handler.h"
#include "http/reply.h"
#include "sys/sys.h"
#include "tls/tls.h"

#include <errno.h>
#include <string.h>

/* The stream record, then its request (struct stream_request: the parsed
 * form and the bytes its spans point to), in the slot's input region: at
 * most H2_HEADER_LIST_MAX of names and values, which the list size counts
 * with 32 more per field. */
#define STREAM_REC_SIZE 512

/* The request of a stream, in its slot after the record: filled field by
 * field as nghttp2 decodes them, and the bytes its spans point to. */
struct stream_request {
    struct http_request req;
    struct http_info info;
    char bytes[]; /* the pseudo-headers' values, the fields' names and values */
};

#define REQ_CAP (POOL_IN_SIZE - STREAM_REC_SIZE - sizeof(struct stream_request))
_Static_assert(sizeof(struct h2_stream) <= STREAM_REC_SIZE, "a stream record fits its room");
_Static_assert(REQ_CAP >= H2_HEADER_LIST_MAX, "a whole header list fits its room");

static struct stream_request *request_of(struct h2_stream *st)
{
    return (struct stream_request *)(void *)((char *)st + STREAM_REC_SIZE);
}

/* A frame header's length (RFC 9113 §4.1); nghttp2 names it only inside. */
#define FRAME_HDLEN 9

/* ---- stream slots: a reserve per connection, the rest shared --------------------------- */

/* The entry of client key in the worker's table (linear probing): its own,
 * or the free one where it would go. */
static struct h2_client *client_entry(struct h2_worker *hw, uint64_t key)
{
    for (uint32_t i = (uint32_t)key & hw->client_mask;; i = (i + 1) & hw->client_mask)
        if (hw->clients[i].key == key || hw->clients[i].key == 0)
            return &hw->clients[i];
}

/* Client key holds one shared slot more (+1) or less (-1); an entry that
 * holds none goes, the entries after it moving back (so lookups never
 * meet a hole before their own). */
static void client_add(struct h2_worker *hw, uint64_t key, int d)
{
    if (!key)
        return;
    struct h2_client *e = client_entry(hw, key);
    e->key = key;
    e->shared = (uint32_t)((int)e->shared + d);
    if (e->shared)
        return;
    uint32_t hole = (uint32_t)(e - hw->clients);
    for (uint32_t i = (hole + 1) & hw->client_mask; hw->clients[i].key;
         i = (i + 1) & hw->client_mask) {
        uint32_t home = (uint32_t)hw->clients[i].key & hw->client_mask;
        /* It may fill the hole unless its home lies after the hole, up to i. */
        if (((i - home) & hw->client_mask) >= ((i - hole) & hw->client_mask)) {
            hw->clients[hole] = hw->clients[i];
            hole = i;
        }
    }
    hw->clients[hole] = (struct h2_client){0};
}

bool h2_slot_ready(struct worker *w, const struct h2_conn *hc)
{
    struct h2_worker *hw = w->h2;
    if (hc->held < hw->reserve)
        return true; /* its reserve: pool_available() >= reserved always */
    if (pool_available(&hw->streams) <= hw->reserved)
        return false; /* the shared slots are all held */
    return !hc->client_key || client_entry(hw, hc->client_key)->shared < hw->client_cap;
}

void h2_slot_take(struct worker *w, struct h2_conn *hc)
{
    struct h2_worker *hw = w->h2;
    if (hc->held < hw->reserve)
        hw->reserved--;
    else
        client_add(hw, hc->client_key, +1);
    hc->held++;
    char *slot = pool_get(&hw->streams);
    PITH_ASSERT(slot != NULL);
    *(char **)(void *)slot = hc->ready;
    hc->ready = slot;
}

static void slot_give(struct worker *w, struct h2_conn *hc, char *slot)
{
    struct h2_worker *hw = w->h2;
    hc->held--;
    if (hc->held < hw->reserve)
        hw->reserved++;
    else
        client_add(hw, hc->client_key, -1);
    pool_put(&hw->streams, slot);
}

void h2_slots_untake(struct worker *w, struct h2_conn *hc)
{
    while (hc->ready) {
        char *slot = hc->ready;
        hc->ready = *(char **)(void *)slot;
        slot_give(w, hc, slot);
    }
}

bool h2_slots_stuck(const struct h2_conn *hc)
{
    if (nghttp2_session_get_remote_window_size(hc->session) <= 0)
        return hc->first != NULL;
    for (const struct h2_stream *st = hc->first; st; st = st->next)
        if (!st->window_need &&
            nghttp2_session_get_stream_remote_window_size(hc->session, st->id) > 0)
            return false;
    return hc->first != NULL;
}

/* ---- the stream's slot ----------------------------------------------------------------- */

void h2_stream_begin(struct worker *w, struct h2_conn *hc, int32_t id)
{
    char *slot = hc->ready;
    if (!slot) {
        /* admit() let it through without a slot: the connection's own
         * streams hold them all and wait for the client (h2_slots_stuck).
         * The client may retry it. */
        nghttp2_submit_rst_stream(hc->session, NGHTTP2_FLAG_NONE, id, NGHTTP2_REFUSED_STREAM);
        h2_glitch(w, hc);
        return;
    }
    hc->ready = *(char **)(void *)slot;
    struct h2_stream *st = (struct h2_stream *)(void *)slot;
    *st = (struct h2_stream){
        .hc = hc,
        .id = id,
        .next = hc->first,
        .x = (struct exchange *)(void *)(slot + POOL_IN_SIZE),
    };
    st->x->active = false;
    struct stream_request *rq = request_of(st);
    rq->req.method = (struct span){0};
    rq->req.nfields = 0;
    http_fields_begin(&rq->info);
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
    slot_give(w, hc, (char *)st);
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

/* Whether the client keeps its stream windows small: an initial window
 * (SETTINGS_INITIAL_WINDOW_SIZE) under H2_WINDOW_MIN, such as 100 bytes
 * or 1. Then a stream's window never reaches H2_WINDOW_MIN unless the
 * client grants it, and a frame that waited for that would wait forever
 * for a client that only grants what it has read: it is served with
 * small frames instead, each a glitch. */
static bool small_windows(struct h2_conn *hc)
{
    return nghttp2_session_get_remote_settings(hc->session, NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE) <
           H2_WINDOW_MIN;
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

void h2_stream_windows_before(struct h2_conn *hc)
{
    hc->initial_before =
        nghttp2_session_get_remote_settings(hc->session, NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE);
    for (struct h2_stream *st = hc->first; st; st = st->next)
        st->window_before = nghttp2_session_get_stream_remote_window_size(hc->session, st->id);
}

bool h2_stream_windows_fit(struct h2_conn *hc, const nghttp2_settings *f)
{
    for (struct h2_stream *st = hc->first; st; st = st->next) {
        int64_t window = st->window_before, initial = hc->initial_before;
        for (size_t i = 0; i < f->niv; i++) {
            if (f->iv[i].settings_id != NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE)
                continue;
            window += (int64_t)f->iv[i].value - initial;
            initial = f->iv[i].value;
            if (window > NGHTTP2_MAX_WINDOW_SIZE)
                return false;
        }
    }
    return true;
}

/* ---- the request ----------------------------------------------------------------------- */

/* A copy of p[0..n) in the request's bytes. The list bound (name + value
 * + 32 per field, H2_HEADER_LIST_MAX) keeps every copy within REQ_CAP. */
static struct span keep(struct h2_stream *st, const uint8_t *p, size_t n)
{
    char *to = request_of(st)->bytes + st->bytes_len;
    mem_copy(to, p, n);
    st->bytes_len += (uint32_t)n;
    return span_make(to, n);
}

/* The first verdict of HTTP/1's parser on this request (400, 414, 431),
 * which wins over the fields' own (as a parse error there comes first). */
static void refuse(struct h2_stream *st, int status)
{
    if (!st->refuse)
        st->refuse = status;
}

/* A request RFC 9113 calls malformed (§8.1.1): stream error PROTOCOL_ERROR,
 * the connection goes on; counted as a glitch, as the malformed requests
 * nghttp2 resets itself are (on_invalid_frame). */
static void malformed(struct h2_conn *hc, struct h2_stream *st)
{
    st->malformed = true;
    nghttp2_submit_rst_stream(hc->session, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_PROTOCOL_ERROR);
    h2_glitch(hc->w, hc);
}

/* One field of the analysis http_fields makes, HTTP/1's first refusal
 * winning. */
static void analyse(struct h2_stream *st, struct span name, struct span value)
{
    int r = http_fields_add(&request_of(st)->info, name, value);
    if (r < 0 && !st->fields_verdict)
        st->fields_verdict = r;
}

/* The pseudo-headers are complete (the first regular field, or the end of
 * the list): the request line as HTTP/1 would judge it, the scheme of this
 * connection (RFC 9113 §8.3.1), and :authority as the Host field (the
 * same checks: one uri-host [":" port]). nghttp2 has checked the rest of
 * §8.3.1: each present once, before every field, :method a token, :path
 * non-empty, none unknown. False when the request is malformed. */
static bool pseudo_done(struct h2_conn *hc, struct h2_stream *st)
{
    struct http_request *req = &request_of(st)->req;
    st->pseudo_done = true;
    bool tls = hc->c->tp != &transport_plain;
    if (st->scheme.p &&
        !(tls ? span_eq_lit(st->scheme, "https") : span_eq_lit(st->scheme, "http"))) {
        malformed(hc, st); /* "https" over h2c, or "http" over TLS */
        return false;
    }
    /* CONNECT has no :path (§8.5): its target is the authority. */
    req->target = st->path.p ? st->path : st->authority;
    int line = http_request_line_check(req->method, req->target);
    if (line < 0)
        refuse(st, -line);
    req->method_id = http_method_of(req->method);
    req->minor = 1; /* HTTP/2 carries HTTP/1.1's semantics (RFC 9113 §8) */
    if (st->authority.p) {
        req->fields[req->nfields++] = (struct http_field){SPAN_LIT("Host"), st->authority};
        analyse(st, SPAN_LIT("host"), st->authority);
    }
    return true;
}

static int pseudo_header(struct h2_stream *st, struct span n, const uint8_t *value, size_t vlen)
{
    struct span *to = NULL;
    if (span_eq_lit(n, ":method"))
        to = &request_of(st)->req.method;
    else if (span_eq_lit(n, ":path"))
        to = &st->path;
    else if (span_eq_lit(n, ":authority"))
        to = &st->authority;
    else if (span_eq_lit(n, ":scheme"))
        to = &st->scheme;
    if (to)
        *to = keep(st, value, vlen); /* nghttp2 resets a stream with an unknown one */
    return 0;
}

/* A regular field: checked as HTTP/1's parser checks a field line, kept
 * among the request's fields, and analysed as it arrives. */
static void regular_field(struct h2_conn *hc, struct h2_stream *st, struct span n,
                          const uint8_t *value, size_t vlen)
{
    struct http_request *req = &request_of(st)->req;
    struct span v = span_make((const char *)value, vlen);
    if (span_eq_lit(n, "te"))
        return; /* "trailers", which nghttp2 checked: no meaning for a static file */
    if (span_eq_lit(n, "host") && st->authority.p) {
        /* RFC 9113 §8.3.1: a host that names another entity than
         * :authority makes the request malformed; the same one adds
         * nothing (the Host rules ran on :authority). */
        if (!span_eq_nocase(v, st->authority))
            malformed(hc, st);
        return;
    }
    st->has_priority = st->has_priority || span_eq_lit(n, "priority");
    if (!http_field_value_ok(v))
        refuse(st, 400); /* a CTL nghttp2 admits: HTTP/1's parser refuses it */
    if (req->nfields == HTTP_MAX_FIELDS) {
        refuse(st, 431);
        return;
    }
    struct http_field *f = &req->fields[req->nfields++];
    f->name = keep(st, (const uint8_t *)n.p, n.n);
    f->value = keep(st, value, vlen);
    analyse(st, f->name, f->value);
}

/* One field of a request's header list, as nghttp2 decodes it. Past
 * H2_HEADER_LIST_MAX nothing more is kept and the answer will be 431, as
 * for an HTTP/1 head of that size (nghttp2 still decodes the rest, so HPACK
 * stays in step). */
static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
                     const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
    (void)flags;
    struct h2_conn *hc = ud;
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0; /* trailers: a body's, which is never read */
    struct h2_stream *st = stream_of(s, f->hd.stream_id);
    if (!st || st->too_big || st->malformed)
        return 0;
    /* Each length is under 64 KiB (nghttp2's field limit): no overflow. */
    st->list_bytes += (uint32_t)(nlen + vlen + 32);
    if (st->list_bytes > H2_HEADER_LIST_MAX) {
        st->too_big = true;
        h2_glitch(hc->w, hc);
        return 0;
    }
    struct span n = span_make((const char *)name, nlen);
    if (nlen && name[0] == ':')
        return pseudo_header(st, n, value, vlen);
    if (!st->pseudo_done && !pseudo_done(hc, st))
        return 0;
    regular_field(hc, st, n, value, vlen);
    return 0;
}

static void begin_exchange(struct worker *w, struct h2_stream *st);

/* Runs the handler on the stream's request, as conn.c does for HTTP/1:
 * the same verdicts in the same order (the list's size, the parser's, the
 * client limit, then the fields' analysis and the handler's). */
static void answer(struct worker *w, struct h2_stream *st)
{
    struct conn *c = st->hc->c;
    struct stream_request *rq = request_of(st);
    begin_exchange(w, st);
    if (st->too_big || st->refuse) {
        reply_error(w, st->x, st->too_big ? 431 : st->refuse);
        return;
    }
    struct exchange *x = st->x;
    x->client_set = client_real_ip(w, c, &rq->req, &x->client);
    x->client_key = client_key_of(w, c, x->client_set ? &x->client : NULL);
    if (c->client_limited) {
        reply_client_limit(w, st->x);
        return;
    }
    int verdict = st->fields_verdict;
    if (!verdict)
        verdict = http_fields_end(&rq->info, rq->req.method_id, rq->req.minor);
    handler_request(w, st->x, &rq->req, &rq->info, verdict);
}

/* ---- the response ---------------------------------------------------------------------- */

static ssize_t read_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *source, void *ud);

/* HTTP/2's codec (exchange.h): the response's fields straight from core's
 * field list, names lowercase and static, values in the exchange (or a
 * cache entry it holds, or the settings) until nghttp2 serialises HEADERS,
 * so nghttp2 copies neither (NO_COPY_NAME, NO_COPY_VALUE); a name an
 * operator gave (--header) is copied and lowercased by nghttp2. Submitted
 * at once, with the body's DATA to follow from the output queue. */
static void h2_head(struct worker *w, struct exchange *x, const struct response *r,
                    const struct exchange_extra *e)
{
    struct h2_stream *st = (struct h2_stream *)(void *)((char *)x - POOL_IN_SIZE);
    struct field_list_context cx = {e->date, e->server, e->field, e->n};
    struct list_field lf[FIELD_LIST_MAX(EXCHANGE_EXTRA_MAX)];
    struct buf keep_buf = exchange_out_room(x);
    unsigned n = field_list_encode(r, &cx, lf, &keep_buf);
    PITH_ASSERT(!keep_buf.full);
    exchange_out_commit(x, keep_buf.len);
    nghttp2_nv nv[FIELD_LIST_MAX(EXCHANGE_EXTRA_MAX)];
    for (unsigned i = 0; i < n; i++)
        nv[i] = (nghttp2_nv){(uint8_t *)(uintptr_t)lf[i].name.p,
                             (uint8_t *)(uintptr_t)lf[i].value.p, lf[i].name.n, lf[i].value.n,
                             (uint8_t)(NGHTTP2_NV_FLAG_NO_COPY_VALUE |
                                       (lf[i].lower ? NGHTTP2_NV_FLAG_NO_COPY_NAME : 0))};
    x->q.chunked = false; /* DATA frames and END_STREAM carry the framing */
    nghttp2_data_provider body = {.source.ptr = st, .read_callback = read_body};
    st->answered = true;
    stats_add(&w->stats->h2_responses, 1);
    if (nghttp2_submit_response(st->hc->session, st->id, nv, n, x->body ? &body : NULL) != 0)
        nghttp2_submit_rst_stream(st->hc->session, NGHTTP2_FLAG_NONE, st->id,
                                  NGHTTP2_INTERNAL_ERROR);
}

static const struct exchange_codec h2_codec = {.version = 2, .head = h2_head};

static void begin_exchange(struct worker *w, struct h2_stream *st)
{
    struct conn *c = st->hc->c;
    char *out = (char *)st->x + POOL_EXCH_SIZE;
    exchange_begin(st->x, &h2_codec, out, POOL_OUT_SIZE, out + POOL_OUT_SIZE, POOL_DIR_SIZE);
    if (w->set->log_json && w->log.fd >= 0)
        st->x->started_us = sys_now_us();
    st->x->tls = c->tp != &transport_plain;
    st->x->tls_ctx = st->x->tls ? tls_conn_ctx(w, c) : -1; /* sites: 421 for another cert */
    st->x->tls_version = st->x->tls ? tls_conn_version(w, c) : NULL; /* the JSON log's "tls" */
}

void h2_stream_request(struct worker *w, struct h2_conn *hc, int32_t id)
{
    struct h2_stream *st = stream_of(hc->session, id);
    if (!st || st->answered || st->malformed)
        return;
    if (!st->pseudo_done && !pseudo_done(hc, st))
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
     * would cut below H2_WINDOW_MIN waits for more (h2_stream_window),
     * unless the client's stream windows are small: then it goes, and
     * costs the connection a glitch. */
    uint32_t need = avail < H2_WINDOW_MIN ? (uint32_t)avail : H2_WINDOW_MIN;
    if (length < need) {
        st->window_need = need;
        bool ready = window_ready(hc, st);
        st->window_need = 0;
        if (!ready && !st->conn_window && small_windows(hc))
            h2_glitch(hc->w, hc);
        else if (!ready) {
            st->window_need = need;
            return NGHTTP2_ERR_DEFERRED;
        }
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
    if (hc->open && (id & 1)) /* a client's stream (pith pushes none) */
        hc->open--;
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

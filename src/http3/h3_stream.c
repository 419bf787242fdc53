/* SPDX-License-Identifier: MIT */
/*
 * h3_stream.c - one HTTP/3 request stream (RFC 9114 §4.1) on the exchange,
 * as h2_stream.c does for HTTP/2: the request fills the same struct
 * http_request HTTP/1's parser fills, field by field as nghttp3 decodes
 * them, with the same core verdicts (http_request_line_check,
 * http_field_value_ok, http_fields_add/end), then handler_request(); the
 * response head goes from core's field list to nghttp3 (HTTP/3's codec,
 * h3_head), the body from the exchange's output queue. No HTTP/1 text in
 * either direction.
 *
 * nghttp3 checks what RFC 9114 §4.3 asks of the syntax and resets a
 * malformed stream itself; this file checks what it leaves to the server:
 * :scheme must be https (QUIC is always TLS), and a host field that names
 * another entity than :authority makes the request malformed (§4.3.1):
 * H3_MESSAGE_ERROR, and the connection goes on.
 *
 * The body: nghttp3 references the bytes it is given until the peer
 * acknowledges them (it may send them again), so they cannot point into
 * the queue's memory, which a body source reuses, nor be read from a file
 * twice: each stream copies what it sends into its own ring of
 * H3_SEND_RING bytes (memcpy from memory, pread from a file range, as
 * h2_stream.c's send_data does), and room comes back as acknowledgements
 * arrive (acked_stream_data). So a stream holds at most the ring, and a
 * connection at most H3_MAX_STREAMS rings.
 *
 * Never: buffer a request body (nghttp3's DATA is dropped, h3_http.c), keep
 * a reset stream's file or cache entry past nghttp3's close of it.
 */
#include "http3/h3_internal.h"

#include "base/pool.h"
#include "base/stats.h"
#include "base/worker.h"
#include "core/bytes.h"
#include "core/field_list.h"
#include "core/http_fields.h"
#include "core/http_parse.h"
#include "http/exchange.h"
#include "http/handler.h"
#include "http/reply.h"
#include "sys/sys.h"

#include <string.h>

#define STREAM_REC_SIZE 512
#define SLOT_SIZE       (POOL_SLOT_SIZE + H3_SEND_RING)

struct stream_request {
    struct http_request req;
    struct http_info info;
    char bytes[]; /* the pseudo-headers' values, the fields' names and values */
};

#define REQ_CAP (POOL_IN_SIZE - STREAM_REC_SIZE - sizeof(struct stream_request))
_Static_assert(sizeof(struct h3_stream) <= STREAM_REC_SIZE, "a stream record fits its room");
_Static_assert(REQ_CAP >= H3_HEADER_LIST_MAX, "a whole field section fits its room");

static struct stream_request *request_of(struct h3_stream *st)
{
    return (struct stream_request *)(void *)((char *)st + STREAM_REC_SIZE);
}

static uint8_t *ring_of(struct h3_stream *st)
{
    return (uint8_t *)st + POOL_SLOT_SIZE;
}

/* ---- the worker's stream slots --------------------------------------------------------- */

int h3_streams_init(struct h3_worker *hw)
{
    size_t n = (size_t)hw->nconns * H3_MAX_STREAMS;
    hw->nslots = (uint32_t)(n > H3_STREAM_SLOTS_MAX ? H3_STREAM_SLOTS_MAX : n);
    hw->stream_mem = sys_map((size_t)hw->nslots * SLOT_SIZE);
    return hw->stream_mem ? 0 : -1;
}

void h3_streams_exit(struct h3_worker *hw)
{
    sys_unmap(hw->stream_mem, (size_t)hw->nslots * SLOT_SIZE);
}

static char *slot_get(struct h3_worker *hw)
{
    char *s = hw->free_slot;
    if (s) {
        hw->free_slot = *(char **)(void *)s;
        hw->nwarm--;
    } else if ((s = hw->cold_slot) != NULL) {
        hw->cold_slot = *(char **)(void *)s;
    } else if (hw->next_slot < hw->nslots) {
        s = hw->stream_mem + (size_t)hw->next_slot++ * SLOT_SIZE;
    }
    return s;
}

/* A freed slot keeps its pages (the next stream finds them resident) while
 * fewer than H3_WARM_SLOTS are free; past that, or for a ring that held a
 * large body, the pages go back to the kernel, so a burst of streams (a
 * hundred per connection, a Rapid Reset) leaves no resident memory behind. */
static void slot_put(struct h3_worker *hw, char *s, uint64_t ring_used)
{
    if (hw->nwarm >= H3_WARM_SLOTS) {
        sys_release(s, SLOT_SIZE);
        *(char **)(void *)s = hw->cold_slot;
        hw->cold_slot = s;
        return;
    }
    if (ring_used > H3_RING_KEEP)
        sys_release(s + POOL_SLOT_SIZE, H3_SEND_RING);
    *(char **)(void *)s = hw->free_slot;
    hw->free_slot = s;
    hw->nwarm++;
}

struct h3_stream *h3_stream_open(struct h3_conn *hc, int64_t id)
{
    struct h3_worker *hw = hc->hw;
    char *slot = slot_get(hw);
    if (!slot)
        return NULL;
    struct h3_stream *st = (struct h3_stream *)(void *)slot;
    *st = (struct h3_stream){
        .conn = hc,
        .id = id,
        .next = hc->streams,
        .x = (struct exchange *)(void *)(slot + POOL_IN_SIZE),
        .opened_at = h3_now(hw),
    };
    st->x->active = false;
    struct stream_request *rq = request_of(st);
    rq->req.method = (struct span){0};
    rq->req.nfields = 0;
    http_fields_begin(&rq->info);
    if (hc->streams)
        hc->streams->prev = st;
    hc->streams = st;
    hc->nstreams++;
    H3_COUNT(hw, streams);
    return st;
}

void h3_stream_free(struct h3_stream *st)
{
    struct h3_conn *hc = st->conn;
    struct worker *w = hc->hw->w;
    if (hc->hc)
        nghttp3_conn_set_stream_user_data(hc->hc, st->id, NULL);
    if (st->x->active) {
        exchange_log(w, st->x, &hc->path.peer, -1);
        exchange_release(w, st->x);
    }
    if (st->prev)
        st->prev->next = st->next;
    else
        hc->streams = st->next;
    if (st->next)
        st->next->prev = st->prev;
    hc->nstreams--;
    hc->active_at = h3_now(hc->hw); /* a stream's end: the wait for the next starts */
    slot_put(hc->hw, (char *)st, st->ring_filled);
}

void h3_stream_free_all(struct h3_conn *hc)
{
    while (hc->streams)
        h3_stream_free(hc->streams);
}

/* ---- the request ------------------------------------------------------------------------- */

static struct span keep(struct h3_stream *st, struct span s)
{
    char *to = request_of(st)->bytes + st->bytes_len;
    mem_copy(to, s.p, s.n);
    st->bytes_len += (uint32_t)s.n;
    return span_make(to, s.n);
}

static void refuse(struct h3_stream *st, int status)
{
    if (!st->refuse)
        st->refuse = status;
}

/* RFC 9114 §4.1.2: a malformed request is a stream error H3_MESSAGE_ERROR. */
static void malformed(struct h3_stream *st)
{
    st->malformed = true;
    ngtcp2_conn_shutdown_stream(st->conn->qc, 0, st->id, NGHTTP3_H3_MESSAGE_ERROR);
    h3_conn_glitch(st->conn);
}

static void analyse(struct h3_stream *st, struct span name, struct span value)
{
    int r = http_fields_add(&request_of(st)->info, name, value);
    if (r < 0 && !st->fields_verdict)
        st->fields_verdict = r;
}

/* The pseudo-headers are complete: the request line as HTTP/1 would judge
 * it, https as the only scheme (RFC 9114 §4.3.1), :authority as the Host
 * field. False when the request is malformed. */
static bool pseudo_done(struct h3_stream *st)
{
    struct http_request *req = &request_of(st)->req;
    st->pseudo_done = true;
    if (st->scheme.p && !span_eq_lit(st->scheme, "https")) {
        malformed(st);
        return false;
    }
    req->target = st->path.p ? st->path : st->authority; /* CONNECT: the authority */
    int line = http_request_line_check(req->method, req->target);
    if (line < 0)
        refuse(st, -line);
    req->method_id = http_method_of(req->method);
    req->minor = 1; /* HTTP/3 carries HTTP/1.1's semantics (RFC 9114 §4) */
    if (st->authority.p) {
        req->fields[req->nfields++] = (struct http_field){SPAN_LIT("Host"), st->authority};
        analyse(st, SPAN_LIT("host"), st->authority);
    }
    return true;
}

static void pseudo_header(struct h3_stream *st, struct span n, struct span v)
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
        *to = keep(st, v); /* nghttp3 resets a stream with an unknown one */
}

static void regular_field(struct h3_stream *st, struct span n, struct span v)
{
    struct http_request *req = &request_of(st)->req;
    if (span_eq_lit(n, "host") && st->authority.p) {
        if (!span_eq_nocase(v, st->authority))
            malformed(st); /* RFC 9114 §4.3.1: another entity than :authority */
        return;
    }
    st->has_priority = st->has_priority || span_eq_lit(n, "priority");
    if (!http_field_value_ok(v))
        refuse(st, 400);
    if (req->nfields == HTTP_MAX_FIELDS) {
        refuse(st, 431);
        return;
    }
    struct http_field *f = &req->fields[req->nfields++];
    f->name = keep(st, n);
    f->value = keep(st, v);
    analyse(st, f->name, f->value);
}

void h3_stream_field(struct h3_stream *st, struct span name, struct span value)
{
    if (st->too_big || st->malformed)
        return;
    /* RFC 9114 §4.2.2: name + value + 32 per field; past HTTP/1's 16 KiB
     * head nothing more is kept and the answer is 431. */
    st->list_bytes += (uint32_t)(name.n + value.n + 32);
    if (st->list_bytes > H3_HEADER_LIST_MAX) {
        st->too_big = true;
        h3_conn_glitch(st->conn);
        return;
    }
    if (name.n && name.p[0] == ':') {
        pseudo_header(st, name, value);
        return;
    }
    if (!st->pseudo_done && !pseudo_done(st))
        return;
    regular_field(st, name, value);
}

/* ---- the response ------------------------------------------------------------------------ */

static void h3_head(struct worker *w, struct exchange *x, const struct response *r,
                    const struct exchange_extra *e);
static const struct exchange_codec h3_codec = {.version = 3, .head = h3_head};

static void begin_exchange(struct worker *w, struct h3_stream *st)
{
    char *out = (char *)st->x + POOL_EXCH_SIZE;
    exchange_begin(st->x, &h3_codec, out, POOL_OUT_SIZE, out + POOL_OUT_SIZE, POOL_DIR_SIZE);
    if (w->set->log_json && w->log.fd >= 0)
        st->x->started_us = sys_now_us();
    st->x->tls = true;
    st->x->tls_ctx = st->conn->tls_pair; /* sites: 421 for another certificate's name */
    st->x->tls_version = "TLSv1.3";
}

static void answer(struct worker *w, struct h3_stream *st)
{
    struct stream_request *rq = request_of(st);
    begin_exchange(w, st);
    if (st->too_big || st->refuse) {
        reply_error(w, st->x, st->too_big ? 431 : st->refuse);
        return;
    }
    int verdict = st->fields_verdict;
    if (!verdict)
        verdict = http_fields_end(&rq->info, rq->req.method_id, rq->req.minor);
    handler_request(w, st->x, &rq->req, &rq->info, verdict);
}

void h3_stream_request(struct h3_stream *st)
{
    struct h3_conn *hc = st->conn;
    if (st->answered || st->malformed)
        return;
    if (!st->pseudo_done && !pseudo_done(st))
        return;
    if (!st->has_priority) {
        /* RFC 9218's default (urgency 3) is not incremental: as over
         * HTTP/2, streams without the client's word share the connection
         * round-robin; a priority field or PRIORITY_UPDATE still decides. */
        const nghttp3_pri shared = {NGHTTP3_DEFAULT_URGENCY, 1};
        nghttp3_conn_set_server_stream_priority(hc->hc, st->id, &shared);
    }
    answer(hc->hw->w, st);
    h3_dirty(hc);
}

/* HTTP/3's codec (exchange.h): the response's fields straight from core's
 * field list, names lowercase and static, values in the exchange (or a
 * cache entry it holds, or the settings) until the stream closes. */
static void h3_head(struct worker *w, struct exchange *x, const struct response *r,
                    const struct exchange_extra *e)
{
    (void)w;
    struct h3_stream *st = (struct h3_stream *)(void *)((char *)x - POOL_IN_SIZE);
    struct field_list_context cx = {e->date, e->server, e->field, e->n};
    struct list_field lf[FIELD_LIST_MAX(EXCHANGE_EXTRA_MAX)];
    struct buf keep_buf = exchange_out_room(x);
    unsigned n = field_list_encode(r, &cx, lf, &keep_buf);
    PITH_ASSERT(!keep_buf.full);
    exchange_out_commit(x, keep_buf.len);
    nghttp3_nv nv[FIELD_LIST_MAX(EXCHANGE_EXTRA_MAX)];
    for (unsigned i = 0; i < n; i++)
        nv[i] = (nghttp3_nv){(uint8_t *)(uintptr_t)lf[i].name.p,
                             (uint8_t *)(uintptr_t)lf[i].value.p, lf[i].name.n, lf[i].value.n,
                             (uint8_t)(NGHTTP3_NV_FLAG_NO_COPY_VALUE |
                                       (lf[i].lower ? NGHTTP3_NV_FLAG_NO_COPY_NAME : 0))};
    x->q.chunked = false; /* DATA frames and the stream's FIN carry the framing */
    st->answered = true;
    nghttp3_data_reader body = {.read_data = h3_stream_read_body};
    if (nghttp3_conn_submit_response(st->conn->hc, st->id, nv, n, x->body ? &body : NULL) != 0)
        ngtcp2_conn_shutdown_stream(st->conn->qc, 0, st->id, NGHTTP3_H3_INTERNAL_ERROR);
}

/* ---- the body ---------------------------------------------------------------------------- */

/* Refills an empty queue from the body source, as h2_stream.c's read_body
 * does. False when the source failed (the stream is reset: its body
 * cannot end). */
static bool refill(struct worker *w, struct exchange *x)
{
    for (int fills = 0; outq_empty(&x->q) && x->src && !x->src_finished && fills < 8; fills++) {
        /* Every queued byte is in the ring already. */
        if (x->src_started)
            exchange_out_clear(x);
        int r = x->src->fill(w, x);
        x->src_started = true;
        if (r < 0)
            return false;
        x->src_finished = r == BODY_DONE;
    }
    return true;
}

/* Copies what the queue has into the ring's free room, up to its end. */
static bool ring_fill(struct worker *w, struct h3_stream *st)
{
    struct exchange *x = st->x;
    while (!st->eof) {
        uint64_t used = st->ring_filled - st->ring_acked;
        if (used == H3_SEND_RING)
            return true;
        if (!refill(w, x))
            return false;
        if (outq_empty(&x->q)) {
            st->eof = !x->src || x->src_finished;
            return true; /* a paused source: back when the stream is resumed */
        }
        size_t at = (size_t)(st->ring_filled % H3_SEND_RING);
        size_t room = H3_SEND_RING - at < H3_SEND_RING - used ? H3_SEND_RING - at
                                                              : (size_t)(H3_SEND_RING - used);
        struct seg *seg = outq_front(&x->q);
        size_t n = seg->len < room ? (size_t)seg->len : room;
        if (seg->kind == SEG_MEM)
            mem_copy(ring_of(st) + at, seg->p, n);
        else if (sys_pread(seg->fd, ring_of(st) + at, n, seg->off) != (ssize_t)n)
            return false; /* the file shrank: reset */
        outq_consume(&x->q, n, &x->head_sent, &x->body_sent);
        st->ring_filled += n;
    }
    return true;
}

nghttp3_ssize h3_stream_read_body(nghttp3_conn *conn, int64_t id, nghttp3_vec *vec, size_t veccnt,
                                  uint32_t *pflags, void *ud, void *sud)
{
    (void)conn, (void)id, (void)ud;
    struct h3_stream *st = sud;
    if (!st || veccnt < 2)
        return NGHTTP3_ERR_CALLBACK_FAILURE;
    if (!ring_fill(st->conn->hw->w, st))
        return NGHTTP3_ERR_CALLBACK_FAILURE; /* the stream is reset */
    uint64_t from = st->ring_given, to = st->ring_filled;
    if (from == to) {
        if (st->eof) {
            *pflags |= NGHTTP3_DATA_FLAG_EOF;
            return 0;
        }
        st->blocked = true; /* resumed when acknowledgements give room */
        return NGHTTP3_ERR_WOULDBLOCK;
    }
    size_t at = (size_t)(from % H3_SEND_RING), n = (size_t)(to - from), cnt = 1;
    if (at + n > H3_SEND_RING) {
        vec[1] = (nghttp3_vec){ring_of(st), at + n - H3_SEND_RING};
        n = H3_SEND_RING - at;
        cnt = 2;
    }
    vec[0] = (nghttp3_vec){ring_of(st) + at, n};
    st->ring_given = to;
    if (st->eof)
        *pflags |= NGHTTP3_DATA_FLAG_EOF;
    return (nghttp3_ssize)cnt;
}

void h3_stream_fin_sent(struct h3_conn *hc, int64_t id)
{
    struct h3_stream *st = hc->streams;
    while (st && st->id != id)
        st = st->next;
    if (!st || !st->x->active)
        return;
    struct worker *w = hc->hw->w;
    exchange_log(w, st->x, &hc->path.peer, -1);
    exchange_release(w, st->x);
}

void h3_stream_acked(struct h3_stream *st, uint64_t n)
{
    st->ring_acked += n;
    if (st->blocked && st->conn->hc) {
        st->blocked = false;
        nghttp3_conn_resume_stream(st->conn->hc, st->id);
        h3_dirty(st->conn);
    }
}

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
 * The body: nghttp3 (and ngtcp2 below it) references the bytes it is given
 * until the peer acknowledges them (they may go again), so they cannot
 * point into the queue's memory, which a body source reuses, nor be read
 * from a file twice: a stream copies what it sends into chunks of the
 * worker's pool (H3_CHUNK bytes each: memcpy from memory, pread from a file
 * range, as h2_stream.c's send_data does), one a read_data, and each goes
 * back as acknowledgements cover it (acked_stream_data). A stream holds at
 * most H3_STREAM_CHUNKS, a connection H3_CONN_CHUNKS, the worker
 * H3_CHUNKS; a stream past a bound waits (WOULDBLOCK) until a chunk comes
 * back to it, to its connection, or to the pool (connections wait for the
 * pool in turn). So what a stream has in flight is bounded by the client's
 * flow control and these, not by a ring per stream (which held a download
 * to 64 KiB a round trip).
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
#define SLOT_SIZE       POOL_SLOT_SIZE
#define NO_CHUNK        0xffffu

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

/* ---- the worker's stream slots --------------------------------------------------------- */

_Static_assert(H3_CHUNKS < NO_CHUNK && H3_CHUNK <= 0xffff + 1, "chunk indices and lengths fit");
_Static_assert(H3_STREAM_CHUNKS <= 255, "a stream's chunk count fits");

int h3_streams_init(struct h3_worker *hw)
{
    size_t n = (size_t)hw->nconns * H3_MAX_STREAMS;
    hw->nslots = (uint32_t)(n > H3_STREAM_SLOTS_MAX ? H3_STREAM_SLOTS_MAX : n);
    hw->stream_mem = sys_map((size_t)hw->nslots * SLOT_SIZE);
    hw->chunk_mem = sys_map((size_t)H3_CHUNKS * H3_CHUNK);
    hw->chunk_link = sys_map(H3_CHUNKS * sizeof *hw->chunk_link);
    hw->chunk_warm = hw->chunk_cold = NO_CHUNK;
    return hw->stream_mem && hw->chunk_mem && hw->chunk_link ? 0 : -1;
}

void h3_streams_exit(struct h3_worker *hw)
{
    sys_unmap(hw->stream_mem, (size_t)hw->nslots * SLOT_SIZE);
    sys_unmap(hw->chunk_mem, (size_t)H3_CHUNKS * H3_CHUNK);
    sys_unmap(hw->chunk_link, H3_CHUNKS * sizeof *hw->chunk_link);
}

/* ---- the worker's send chunks ------------------------------------------------------------- */

static char *chunk_at(const struct h3_worker *hw, uint32_t i)
{
    return hw->chunk_mem + (size_t)i * H3_CHUNK;
}

static uint32_t chunk_get(struct h3_worker *hw)
{
    uint32_t i = hw->chunk_warm;
    if (i != NO_CHUNK) {
        hw->chunk_warm = hw->chunk_link[i];
        hw->nwarm_chunks--;
    } else if ((i = hw->chunk_cold) != NO_CHUNK) {
        hw->chunk_cold = hw->chunk_link[i];
    } else if (hw->next_chunk < H3_CHUNKS) {
        i = hw->next_chunk++;
    } else {
        return NO_CHUNK;
    }
    if (++hw->chunks_used > hw->chunks_peak)
        hw->chunks_peak = hw->chunks_used;
    return i;
}

/* A freed chunk stays warm; h3_streams_trim gives the pages of those past
 * H3_WARM_CHUNKS back, at most once a second. */
static void chunk_put(struct h3_worker *hw, uint32_t i)
{
    hw->chunks_used--;
    hw->chunk_link[i] = (uint16_t)hw->chunk_warm;
    hw->chunk_warm = i;
    hw->nwarm_chunks++;
}

/* The streams of hc that waited for a chunk try again. */
static void resume_blocked(struct h3_conn *hc)
{
    for (struct h3_stream *st = hc->streams; st; st = st->next)
        if (st->blocked && hc->hc) {
            st->blocked = false;
            nghttp3_conn_resume_stream(hc->hc, st->id);
        }
    h3_dirty(hc);
}

/* k chunks of hc's went back: its streams past its bound, then the
 * connections that found the worker's pool empty, in turn, try again. */
static void chunks_back(struct h3_conn *hc, uint32_t k)
{
    struct h3_worker *hw = hc->hw;
    hc->nchunks -= k;
    if (hc->cap_blocked) {
        hc->cap_blocked = false;
        resume_blocked(hc);
    }
    while (k-- && hw->chunk_waiters) {
        struct h3_conn *w = hw->chunk_waiters;
        hw->chunk_waiters = w->chunk_next_waiter;
        if (!hw->chunk_waiters)
            hw->chunk_waiters_tail = NULL;
        w->chunk_wait = false;
        resume_blocked(w);
    }
}

/* hc goes: out of the worker's waiters. */
void h3_chunks_conn_gone(struct h3_conn *hc)
{
    struct h3_worker *hw = hc->hw;
    if (!hc->chunk_wait)
        return;
    struct h3_conn **pp = &hw->chunk_waiters, *prev = NULL;
    while (*pp && *pp != hc) {
        prev = *pp;
        pp = &(*pp)->chunk_next_waiter;
    }
    if (*pp)
        *pp = hc->chunk_next_waiter;
    if (hw->chunk_waiters_tail == hc)
        hw->chunk_waiters_tail = prev;
    hc->chunk_wait = false;
}

/* A chunk for st's next bytes, within its bound, its connection's and the
 * worker's; NO_CHUNK when there is none (st waits: for its own
 * acknowledgements, its connection's, or a chunk back in the pool). */
static uint32_t stream_chunk(struct h3_stream *st)
{
    struct h3_conn *hc = st->conn;
    struct h3_worker *hw = hc->hw;
    if (st->nchunks == H3_STREAM_CHUNKS)
        return NO_CHUNK;
    if (hc->nchunks >= H3_CONN_CHUNKS) {
        hc->cap_blocked = true;
        return NO_CHUNK;
    }
    uint32_t i = chunk_get(hw);
    if (i == NO_CHUNK) {
        if (!hc->chunk_wait) {
            hc->chunk_wait = true;
            hc->chunk_next_waiter = NULL;
            if (hw->chunk_waiters_tail)
                hw->chunk_waiters_tail->chunk_next_waiter = hc;
            else
                hw->chunk_waiters = hc;
            hw->chunk_waiters_tail = hc;
        }
        return NO_CHUNK;
    }
    unsigned at = (st->chunk_head + st->nchunks) % H3_STREAM_CHUNKS;
    st->chunk[at] = (uint16_t)i;
    st->chunk_len[at] = 0;
    st->nchunks++;
    hc->nchunks++;
    return i;
}

/* st's oldest chunks, once acknowledged (all of them: the stream goes). */
static void chunks_release(struct h3_stream *st, bool all)
{
    uint32_t k = 0;
    while (st->nchunks) {
        uint32_t len = st->chunk_len[st->chunk_head];
        if (!all && st->head_acked < len)
            break;
        st->head_acked = all ? 0 : st->head_acked - len;
        chunk_put(st->conn->hw, st->chunk[st->chunk_head]);
        st->chunk_head = (uint8_t)((st->chunk_head + 1) % H3_STREAM_CHUNKS);
        st->nchunks--;
        k++;
    }
    if (k)
        chunks_back(st->conn, k);
}

/* ---- a stream's slot ---------------------------------------------------------------------- */

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
    if (s && ++hw->slots_used > hw->slots_peak)
        hw->slots_peak = hw->slots_used;
    return s;
}

/* A freed slot keeps its pages (the next stream finds them resident, and
 * freeing costs no system call); h3_streams_trim gives those past
 * H3_WARM_SLOTS back, at most once a second. */
static void slot_put(struct h3_worker *hw, char *s)
{
    hw->slots_used--;
    hw->streams_gone++;
    *(char **)(void *)s = hw->free_slot;
    hw->free_slot = s;
    hw->nwarm++;
}

/* What stays warm: H3_WARM_SLOTS (chunks), or as many as the streams
 * used at their peak since the last trim, less those in use now, so steady
 * work never gives back a page it takes again a moment later; a burst's go
 * back one trim after it ended. */
static uint32_t warm_keep(uint32_t floor, uint32_t peak, uint32_t used)
{
    return peak - used > floor ? peak - used : floor;
}

bool h3_streams_surplus(const struct h3_worker *hw)
{
    return hw->nwarm > H3_WARM_SLOTS || hw->nwarm_chunks > H3_WARM_CHUNKS;
}

/* Free slots and chunks past what stays warm give their pages back to the
 * kernel (MADV_DONTNEED), so a burst of streams (a hundred per connection,
 * a Rapid Reset, downloads) leaves no resident memory behind; once a
 * second at most (h3_worker.c), not at every free: under load a slot freed
 * is taken again at once, and a page given back is a fault and a zeroing
 * when it is (that cost a third of the worker's CPU at 1000 small
 * requests in flight, and giving back all past 16 each second still made
 * 900 system calls and their faults a second). */
void h3_streams_trim(struct h3_worker *hw)
{
    uint32_t keep = warm_keep(H3_WARM_SLOTS, hw->slots_peak, hw->slots_used);
    uint32_t keep_chunks = warm_keep(H3_WARM_CHUNKS, hw->chunks_peak, hw->chunks_used);
    hw->slots_peak = hw->slots_used;
    hw->chunks_peak = hw->chunks_used;
    while (hw->nwarm > keep) {
        char *s = hw->free_slot;
        hw->free_slot = *(char **)(void *)s;
        hw->nwarm--;
        sys_release(s, SLOT_SIZE);
        *(char **)(void *)s = hw->cold_slot;
        hw->cold_slot = s;
    }
    while (hw->nwarm_chunks > keep_chunks) {
        uint32_t i = hw->chunk_warm;
        hw->chunk_warm = hw->chunk_link[i];
        hw->nwarm_chunks--;
        sys_release(chunk_at(hw, i), H3_CHUNK);
        hw->chunk_link[i] = (uint16_t)hw->chunk_cold;
        hw->chunk_cold = i;
    }
}

/* The connection's list of streams with no answer yet (see h3_conn). */
static void wait_join(struct h3_stream *st)
{
    struct h3_conn *hc = st->conn;
    st->waiting = true;
    st->wait_prev = hc->waiting_tail;
    st->wait_next = NULL;
    if (hc->waiting_tail)
        hc->waiting_tail->wait_next = st;
    else
        hc->waiting = st;
    hc->waiting_tail = st;
}

static void wait_leave(struct h3_stream *st)
{
    struct h3_conn *hc = st->conn;
    if (!st->waiting)
        return;
    st->waiting = false;
    if (st->wait_prev)
        st->wait_prev->wait_next = st->wait_next;
    else
        hc->waiting = st->wait_next;
    if (st->wait_next)
        st->wait_next->wait_prev = st->wait_prev;
    else
        hc->waiting_tail = st->wait_prev;
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
    wait_join(st);
    H3_COUNT(hw, streams);
    return st;
}

void h3_stream_free(struct h3_stream *st)
{
    struct h3_conn *hc = st->conn;
    struct worker *w = hc->hw->w;
    if (hc->hc)
        nghttp3_conn_set_stream_user_data(hc->hc, st->id, NULL);
    if (st->exchanging) {
        exchange_log(w, st->x, &hc->path.peer, -1);
        exchange_release(w, st->x);
    }
    wait_leave(st);
    if (hc->fin_hint == st)
        hc->fin_hint = NULL;
    if (st->prev)
        st->prev->next = st->next;
    else
        hc->streams = st->next;
    if (st->next)
        st->next->prev = st->prev;
    hc->nstreams--;
    hc->active_at = h3_now(hc->hw); /* a stream's end: the wait for the next starts */
    chunks_release(st, true);
    slot_put(hc->hw, (char *)st);
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
    wait_leave(st);
    ngtcp2_conn_shutdown_stream(st->conn->qc, 0, st->id, NGHTTP3_H3_MESSAGE_ERROR);
    h3_glitch(st->conn);
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
        h3_glitch(st->conn);
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
    st->exchanging = true;
    if (w->set->log_json && w->log.fd >= 0)
        st->x->started_us = sys_now_us();
    st->x->tls = true;
    st->x->tls_ctx = st->conn->tls_pair; /* sites: 421 for another certificate's name */
    st->x->tls_version = "TLSv1.3";
    /* The client in the per-client counts: a site's own
     * --max-conns-per-client and basic auth's failures see it as over TCP. */
    st->x->client_key = st->conn->client_key;
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
    nghttp3_pri pri;
    if (!st->has_priority && nghttp3_conn_get_stream_priority(hc->hc, &pri, st->id) == 0 &&
        pri.urgency == NGHTTP3_DEFAULT_URGENCY && !pri.inc) {
        /* RFC 9218's default (urgency 3) is not incremental: as over
         * HTTP/2, streams without the client's word share the connection
         * round-robin. A PRIORITY_UPDATE that came before the request
         * (§7.1) left another priority, which stays (one to "u=3", the
         * default, is taken for none). Once set here, nghttp3 ignores the
         * client's updates: h3_stream_priority_update applies them. */
        const nghttp3_pri shared = {NGHTTP3_DEFAULT_URGENCY, 1};
        nghttp3_conn_set_server_stream_priority(hc->hc, st->id, &shared);
        st->pri_shared = true;
    }
    answer(hc->hw->w, st);
    h3_dirty(hc);
}

void h3_stream_priority_update(struct h3_conn *hc, int64_t id, const uint8_t *v, size_t n)
{
    struct h3_stream *st = hc->streams;
    while (st && st->id != id)
        st = st->next;
    /* nghttp3 applies the others itself (a stream with a priority field,
     * or one whose request has not come yet). */
    if (!st || !st->pri_shared)
        return;
    /* The update's value replaces the priority: what it leaves out is at
     * the default (§7), as nghttp3 reads one. */
    nghttp3_pri pri = {NGHTTP3_DEFAULT_URGENCY, 0};
    if (nghttp3_pri_parse_priority(&pri, v, n) == 0)
        nghttp3_conn_set_server_stream_priority(hc->hc, id, &pri);
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
    wait_leave(st);
    if (!x->body)
        st->conn->fin_hint = st; /* the FIN goes with the HEADERS */
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
        /* Every queued byte is in a chunk already. */
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

nghttp3_ssize h3_stream_read_body(nghttp3_conn *conn, int64_t id, nghttp3_vec *vec, size_t veccnt,
                                  uint32_t *pflags, void *ud, void *sud)
{
    (void)conn, (void)id, (void)ud;
    struct h3_stream *st = sud;
    if (!st || veccnt < 1)
        return NGHTTP3_ERR_CALLBACK_FAILURE;
    struct worker *w = st->conn->hw->w;
    struct exchange *x = st->x;
    if (!refill(w, x))
        return NGHTTP3_ERR_CALLBACK_FAILURE; /* the stream is reset */
    if (outq_empty(&x->q)) {
        if (!x->src || x->src_finished) {
            st->eof = true;
            st->conn->fin_hint = st;
            *pflags |= NGHTTP3_DATA_FLAG_EOF;
            return 0;
        }
        st->blocked = true; /* a paused source: back when the stream is resumed */
        return NGHTTP3_ERR_WOULDBLOCK;
    }
    uint32_t i = stream_chunk(st);
    if (i == NO_CHUNK) {
        st->blocked = true; /* resumed when a chunk comes back */
        return NGHTTP3_ERR_WOULDBLOCK;
    }
    /* One chunk a call, filled from the queue (memory by memcpy, file
     * ranges by pread, as h2_stream.c's send_data does); nghttp3 asks again
     * once less than 4 KiB of what it has is unsent. */
    char *p = chunk_at(st->conn->hw, i);
    size_t len = 0;
    while (len < H3_CHUNK) {
        if (!refill(w, x))
            return NGHTTP3_ERR_CALLBACK_FAILURE;
        if (outq_empty(&x->q)) {
            st->eof = !x->src || x->src_finished;
            break;
        }
        struct seg *seg = outq_front(&x->q);
        size_t n = seg->len < H3_CHUNK - len ? (size_t)seg->len : H3_CHUNK - len;
        if (seg->kind == SEG_MEM)
            mem_copy(p + len, seg->p, n);
        else if (sys_pread(seg->fd, p + len, n, seg->off) != (ssize_t)n)
            return NGHTTP3_ERR_CALLBACK_FAILURE; /* the file shrank: reset */
        outq_consume(&x->q, n, &x->head_sent, &x->body_sent);
        len += n;
    }
    st->chunk_len[(st->chunk_head + st->nchunks - 1) % H3_STREAM_CHUNKS] = (uint16_t)len;
    st->body_given += len;
    vec[0] = (nghttp3_vec){(uint8_t *)p, len};
    if (st->eof) {
        st->conn->fin_hint = st;
        *pflags |= NGHTTP3_DATA_FLAG_EOF;
    }
    return 1;
}

void h3_stream_fin_sent(struct h3_conn *hc, int64_t id)
{
    struct h3_stream *st = hc->fin_hint;
    if (!st || st->id != id)
        for (st = hc->streams; st && st->id != id;)
            st = st->next;
    if (!st || !st->exchanging)
        return;
    struct worker *w = hc->hw->w;
    st->exchanging = false;
    exchange_log(w, st->x, &hc->path.peer, -1);
    exchange_release(w, st->x);
}

void h3_stream_acked(struct h3_stream *st, uint64_t n)
{
    st->head_acked += (uint32_t)n;
    chunks_release(st, false);
    if (st->blocked && st->conn->hc) {
        st->blocked = false;
        nghttp3_conn_resume_stream(st->conn->hc, st->id);
        h3_dirty(st->conn);
    }
}

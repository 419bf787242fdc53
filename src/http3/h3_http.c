/* SPDX-License-Identifier: MIT */
/*
 * h3_http.c - a connection's HTTP/3 layer (RFC 9114) with nghttp3: the
 * control and QPACK streams (RFC 9114 §6.2, RFC 9204 §4.2), the stream data
 * ngtcp2 delivers, and nghttp3's callbacks, which hand request streams to
 * h3_stream.c. nghttp3 checks a request's syntax itself (RFC 9114 §4.3:
 * pseudo-headers present, once, first; lowercase names; no
 * connection-specific field) and resets a malformed one with
 * H3_MESSAGE_ERROR through the stop_sending and reset_stream callbacks.
 *
 * QPACK is bounded (RFC 9204 §3.2.3, §2.1.2): our decoder's dynamic table
 * holds at most 4 KiB and at most 16 streams may wait on it; a field
 * section may be 16 KiB (SETTINGS_MAX_FIELD_SECTION_SIZE, HTTP/1's head
 * limit), and h3_stream.c answers 431 past it.
 */
#include "http3/h3_internal.h"

#include <string.h>

int h3_http_start(struct h3_conn *hc)
{
    if (ngtcp2_conn_get_streams_uni_left(hc->qc) < 3)
        return -1;
    nghttp3_settings s;
    nghttp3_settings_default(&s);
    s.qpack_max_dtable_capacity = 4096;
    s.qpack_encoder_max_dtable_capacity = 0;
    s.qpack_blocked_streams = 16;
    s.max_field_section_size = H3_HEADER_LIST_MAX;
    if (nghttp3_conn_server_new(&hc->hc, &hc->hw->hcb, &s, NULL, hc) != 0)
        return -1;
    const ngtcp2_transport_params *p = ngtcp2_conn_get_local_transport_params(hc->qc);
    nghttp3_conn_set_max_client_streams_bidi(hc->hc, p->initial_max_streams_bidi);
    int64_t ctrl, enc, dec;
    if (ngtcp2_conn_open_uni_stream(hc->qc, &ctrl, NULL) != 0 ||
        nghttp3_conn_bind_control_stream(hc->hc, ctrl) != 0 ||
        ngtcp2_conn_open_uni_stream(hc->qc, &enc, NULL) != 0 ||
        ngtcp2_conn_open_uni_stream(hc->qc, &dec, NULL) != 0 ||
        nghttp3_conn_bind_qpack_streams(hc->hc, enc, dec) != 0)
        return -1;
    return 0;
}

/* Bytes nghttp3 took (or a body dropped): the client may send as many again. */
static void consumed(struct h3_conn *hc, int64_t id, size_t n)
{
    ngtcp2_conn_extend_max_stream_offset(hc->qc, id, n);
    ngtcp2_conn_extend_max_offset(hc->qc, n);
}

/* ---- PRIORITY_UPDATE ----------------------------------------------------------------------- */

/* RFC 9218 §7.2's PRIORITY_UPDATE for a request stream. nghttp3 applies it
 * itself, but not to a stream whose priority pith set (h3_stream_request:
 * a request without a priority field, made incremental):
 * nghttp3_conn_set_server_stream_priority makes nghttp3 ignore the
 * client's updates to it from then on, and nghttp3 has no callback for
 * them. So pith reads the client's control stream too, after nghttp3 took
 * the bytes (nghttp3 checks the stream: a malformed frame closes the
 * connection), and hands each update to h3_stream.c. */
#define FRAME_PRIORITY_UPDATE 0xF0700

/* A varint at the start of p[0..n) (RFC 9000 §16): its length, 0 if cut. */
static size_t varint(const uint8_t *p, size_t n, uint64_t *v)
{
    size_t len = n ? (size_t)1 << (p[0] >> 6) : 1;
    if (len > n)
        return 0;
    *v = p[0] & 0x3f;
    for (size_t i = 1; i < len; i++)
        *v = *v << 8 | p[i];
    return len;
}

static void priority_update(struct h3_conn *hc, const uint8_t *p, size_t n)
{
    uint64_t id;
    size_t k = varint(p, n, &id);
    if (k && id <= INT64_MAX) /* h3_stream.c knows its request streams' IDs */
        h3_stream_priority_update(hc, (int64_t)id, p + k, n - k);
}

/* The control stream's frames, as they come (in order, pieces of any
 * size): a frame's type and length (varints, byte by byte), then its
 * payload, kept for a PRIORITY_UPDATE and skipped for any other. */
static void ctrl_read(struct h3_conn *hc, const uint8_t *p, size_t n)
{
    struct h3_ctrl_reader *r = &hc->ctrl;
    while (n) {
        if (r->step < 2) {
            if (r->vn == 0) {
                r->vlen = (uint8_t)(1u << (p[0] >> 6));
                r->v = p[0] & 0x3f;
            } else {
                r->v = r->v << 8 | p[0];
            }
            p++, n--;
            if (++r->vn < r->vlen)
                continue;
            r->vn = 0;
            if (r->step++ == 0) {
                r->type = r->v;
                continue;
            }
            r->len = r->left = r->v;
            r->kept = 0;
        } else {
            size_t k = n < r->left ? n : (size_t)r->left;
            if (r->type == FRAME_PRIORITY_UPDATE && r->len <= H3_PRIO_MAX) {
                memcpy(r->buf + r->kept, p, k); /* kept + k <= len */
                r->kept = (uint8_t)(r->kept + k);
            }
            p += k, n -= k, r->left -= k;
        }
        if (r->left == 0) { /* the payload is complete (it may be empty) */
            if (r->type == FRAME_PRIORITY_UPDATE && r->len <= H3_PRIO_MAX)
                priority_update(hc, r->buf, (size_t)r->len);
            r->step = 0;
        }
    }
}

/* A client's unidirectional stream: the control stream is the one whose
 * type (its first byte) is 0x00 (RFC 9114 §6.2.1; nghttp3 refuses a
 * second one). */
static void uni_read(struct h3_conn *hc, int64_t id, uint64_t off, const uint8_t *p, size_t n)
{
    if (!hc->ctrl.id && off == 0 && n && p[0] == 0x00) {
        hc->ctrl.id = id;
        p++, n--;
    }
    if (id == hc->ctrl.id)
        ctrl_read(hc, p, n);
}

int h3_http_recv(struct h3_conn *hc, int64_t id, uint64_t off, const uint8_t *p, size_t n, bool fin)
{
    nghttp3_ssize c = nghttp3_conn_read_stream(hc->hc, id, p, n, fin);
    if (c < 0) {
        /* The error to close with (RFC 9114 §8.1), once ngtcp2 returns. */
        hc->app_err = nghttp3_err_infer_quic_app_error_code((int)c);
        return -1;
    }
    consumed(hc, id, (size_t)c);
    if (!ngtcp2_is_bidi_stream(id))
        uni_read(hc, id, off, p, n);
    return 0;
}

/* ---- nghttp3's callbacks ------------------------------------------------------------------ */

static int acked_stream_data(nghttp3_conn *c, int64_t id, uint64_t n, void *ud, void *sud)
{
    (void)c, (void)id, (void)ud;
    if (sud)
        h3_stream_acked(sud, n);
    return 0;
}

static int stream_close(nghttp3_conn *c, int64_t id, uint64_t code, void *ud, void *sud)
{
    (void)c, (void)id, (void)ud;
    struct h3_stream *st = sud;
    if (st) {
        if (code != NGHTTP3_H3_NO_ERROR || !st->answered)
            h3_glitch(st->conn); /* HTTP/3's Rapid Reset spends the budget */
        h3_stream_free(st);
    }
    return 0;
}

/* A request body is never read (RFC 9114 §4.1 lets a server answer
 * without it): dropped, and its flow control given back. */
static int recv_data(nghttp3_conn *c, int64_t id, const uint8_t *data, size_t n, void *ud,
                     void *sud)
{
    (void)c, (void)data, (void)sud;
    consumed(ud, id, n);
    return 0;
}

static int deferred_consume(nghttp3_conn *c, int64_t id, size_t n, void *ud, void *sud)
{
    (void)c, (void)sud;
    consumed(ud, id, n);
    return 0;
}

static int begin_headers(nghttp3_conn *c, int64_t id, void *ud, void *sud)
{
    (void)sud;
    struct h3_conn *hc = ud;
    struct h3_stream *st = h3_stream_open(hc, id);
    if (!st) {
        /* Every stream slot of the worker is in use: the client may retry
         * (RFC 9114 §4.1.1). */
        ngtcp2_conn_shutdown_stream(hc->qc, 0, id, NGHTTP3_H3_REQUEST_REJECTED);
        return 0;
    }
    nghttp3_conn_set_stream_user_data(c, id, st);
    return 0;
}

static int recv_header(nghttp3_conn *c, int64_t id, int32_t token, nghttp3_rcbuf *name,
                       nghttp3_rcbuf *value, uint8_t flags, void *ud, void *sud)
{
    (void)c, (void)id, (void)token, (void)flags, (void)ud;
    if (!sud)
        return 0;
    nghttp3_vec n = nghttp3_rcbuf_get_buf(name), v = nghttp3_rcbuf_get_buf(value);
    h3_stream_field(sud, span_make((const char *)n.base, n.len),
                    span_make((const char *)v.base, v.len));
    return 0;
}

static int end_headers(nghttp3_conn *c, int64_t id, int fin, void *ud, void *sud)
{
    (void)c, (void)id, (void)fin, (void)ud;
    if (sud)
        h3_stream_request(sud);
    return 0;
}

static int end_stream(nghttp3_conn *c, int64_t id, void *ud, void *sud)
{
    (void)c, (void)id, (void)ud;
    if (sud)
        ((struct h3_stream *)sud)->read_done = true;
    return 0;
}

static int stop_sending(nghttp3_conn *c, int64_t id, uint64_t code, void *ud, void *sud)
{
    (void)c, (void)sud;
    struct h3_conn *hc = ud;
    ngtcp2_conn_shutdown_stream_read(hc->qc, 0, id, code);
    return 0;
}

static int reset_stream(nghttp3_conn *c, int64_t id, uint64_t code, void *ud, void *sud)
{
    (void)c, (void)sud;
    struct h3_conn *hc = ud;
    ngtcp2_conn_shutdown_stream_write(hc->qc, 0, id, code);
    return 0;
}

void h3_http_callbacks(nghttp3_callbacks *cb)
{
    *cb = (nghttp3_callbacks){
        .acked_stream_data = acked_stream_data,
        .stream_close = stream_close,
        .recv_data = recv_data,
        .deferred_consume = deferred_consume,
        .begin_headers = begin_headers,
        .recv_header = recv_header,
        .end_headers = end_headers,
        .stop_sending = stop_sending,
        .end_stream = end_stream,
        .reset_stream = reset_stream,
    };
}

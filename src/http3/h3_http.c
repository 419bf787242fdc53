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

int h3_http_recv(struct h3_conn *hc, int64_t id, const uint8_t *p, size_t n, bool fin)
{
    nghttp3_ssize c = nghttp3_conn_read_stream(hc->hc, id, p, n, fin);
    if (c < 0) {
        /* The error to close with (RFC 9114 §8.1), once ngtcp2 returns. */
        hc->app_err = nghttp3_err_infer_quic_app_error_code((int)c);
        return -1;
    }
    consumed(hc, id, (size_t)c);
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

/* SPDX-License-Identifier: MIT */
/*
 * h3_conn.c - one live QUIC connection (RFC 9000) with ngtcp2: its packets
 * read into ngtcp2, ngtcp2's callbacks, its packets written and sent, its
 * timer and deadlines, its close and the end of its record. h3_accept.c,
 * above it, makes the connection and hands it the datagrams that are its
 * own; this file knows nothing of admission.
 *
 * Writing follows ngtcp2's pacing: a burst of at most the send quantum, as
 * one GSO train per path, then the timer (which ngtcp2_conn_get_expiry
 * includes) brings the next. Until the client's address is validated
 * ngtcp2 sends at most three times what it received (§8.1). A handshake
 * that completes over --max-conns-per-client (h3_client.c) ends with
 * CONNECTION_REFUSED before any request is served.
 *
 * Closing (§10.2): CONNECTION_CLOSE is written once and kept; a packet that
 * arrives during the closing period gets it again (at most every other
 * packet, then rarer), and the record goes after three PTOs. A peer's close
 * drains silently for as long. An idle timeout or a handshake that never
 * finishes (the handshake timeout) ends the connection without a word.
 */
#include "http3/h3_internal.h"

#include "base/server.h"
#include "base/worker.h"
#include "sys/sys.h"

#include <ngtcp2/ngtcp2_crypto.h>
#include <stdlib.h>
#include <string.h>

ngtcp2_path h3_path_ngtcp2(struct h3_path *p)
{
    return (ngtcp2_path){
        .local = {(ngtcp2_sockaddr *)&p->local, p->local_len},
        .remote = {(ngtcp2_sockaddr *)&p->peer, p->peer_len},
    };
}

/* ---- the end of a connection ----------------------------------------------------------- */

static void unmap_ids(struct h3_conn *hc)
{
    struct h3_worker *hw = hc->hw;
    ngtcp2_cid ids[16];
    size_t n = ngtcp2_conn_get_scid(hc->qc, NULL);
    if (n <= 16) {
        ngtcp2_conn_get_scid(hc->qc, ids);
        for (size_t i = 0; i < n; i++)
            h3_cidmap_del(hw->map, ids[i].data, ids[i].datalen);
    }
    h3_cidmap_del(hw->map, hc->odcid.data, hc->odcid.datalen);
}

void h3_conn_free(struct h3_conn *hc, enum h3_close why)
{
    struct h3_worker *hw = hc->hw;
    h3_stream_free_all(hc);
    h3_chunks_conn_gone(hc);
    if (hc->qc) {
        unmap_ids(hc);
        ngtcp2_conn_del(hc->qc);
    }
    if (hc->hc)
        nghttp3_conn_del(hc->hc);
    if (hc->tls)
        gnutls_deinit(hc->tls);
    free(hc->close_pkt);
    h3_client_release(hc);
    h3_heap_del(hw, hc);
    if (!hc->handshake_done)
        hw->handshakes--;
    hw->active--;
    hw->closes[why]++;
    stats_add(&hw->w->stats->h3_closes[why], 1);
    stats_set(&hw->w->stats->h3_open, hw->active);
    hc->in_use = false;
    hc->qc = NULL;
    hc->hc = NULL;
    hc->tls = NULL;
    hc->close_pkt = NULL;
    hc->next_free = hw->free_conns;
    hw->free_conns = hc;
}

static uint64_t three_pto(struct h3_conn *hc)
{
    return h3_now(hc->hw) + 3 * ngtcp2_conn_get_pto(hc->qc);
}

/* Writes CONNECTION_CLOSE with ce, keeps it for the closing period and
 * sends it. */
static void close_with(struct h3_conn *hc, const ngtcp2_ccerr *ce, enum h3_close why)
{
    struct h3_worker *hw = hc->hw;
    if (hc->closing || hc->draining)
        return;
    hc->why = why; /* counted when the record goes */
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    ngtcp2_pkt_info pi;
    ngtcp2_ssize n = ngtcp2_conn_write_connection_close(hc->qc, &ps.path, &pi, hw->tx,
                                                        H3_MAX_UDP_PAYLOAD, ce, h3_now(hw));
    hc->close_pkt = n > 0 ? malloc((size_t)n) : NULL;
    if (!hc->close_pkt) {
        h3_conn_free(hc, why);
        return;
    }
    memcpy(hc->close_pkt, hw->tx, (size_t)n);
    hc->close_len = (size_t)n;
    hc->closing = true;
    h3_client_release(hc); /* the closing period serves nothing: the client may open another */
    h3_udp_send(hw, &hc->path, hc->close_pkt, hc->close_len, hc->close_len);
    hc->close_at = three_pto(hc);
    h3_heap_set(hw, hc, hc->close_at);
}

void h3_conn_close_app(struct h3_conn *hc, uint64_t code, enum h3_close why)
{
    ngtcp2_ccerr ce;
    ngtcp2_ccerr_default(&ce);
    ngtcp2_ccerr_set_application_error(&ce, code, NULL, 0);
    close_with(hc, &ce, why);
}

static void close_liberr(struct h3_conn *hc, int rv)
{
    ngtcp2_ccerr ce;
    ngtcp2_ccerr_default(&ce);
    if (rv == NGTCP2_ERR_CRYPTO)
        ngtcp2_ccerr_set_tls_alert(&ce, ngtcp2_conn_get_tls_alert(hc->qc), NULL, 0);
    else
        ngtcp2_ccerr_set_liberr(&ce, rv, NULL, 0);
    close_with(hc, &ce, hc->handshake_done ? H3_CLOSE_PROTOCOL : H3_CLOSE_HANDSHAKE);
}

/* A client over --max-conns-per-client: CONNECTION_REFUSED, a transport
 * error (RFC 9000 §20.1), not one of HTTP/3's. */
static void close_refused(struct h3_conn *hc)
{
    ngtcp2_ccerr ce;
    ngtcp2_ccerr_default(&ce);
    ngtcp2_ccerr_set_transport_error(&ce, NGTCP2_CONNECTION_REFUSED, NULL, 0);
    close_with(hc, &ce, H3_CLOSE_LIMIT);
}

/* A close decided inside ngtcp2's or nghttp3's callbacks (h3_doom: a
 * refusal here, a glitch budget spent here, in h3_http.c or in
 * h3_stream.c), carried out now that the library has returned: by
 * h3_conn_read when the read failed, else by the connection's next flush
 * (after the batch of datagrams that brought it), before anything more is
 * written. */
static bool close_if_doomed(struct h3_conn *hc)
{
    if (!hc->doomed)
        return false;
    if (hc->doom_why == H3_CLOSE_LIMIT)
        close_refused(hc);
    else
        h3_conn_close_app(hc, hc->doom_code, hc->doom_why);
    return true;
}

/* Refused (over the client's limit) inside the read that completed the
 * handshake: what the same datagram carries after the client's Finished
 * (its first requests, coalesced) is not served. */
static bool refused(const struct h3_conn *hc)
{
    return hc->doomed && hc->doom_why == H3_CLOSE_LIMIT;
}

void h3_conn_progress(struct h3_conn *hc, bool active)
{
    hc->useful = true;
    if (active)
        hc->active_at = h3_now(hc->hw);
}

/* ---- deadlines ------------------------------------------------------------------------ */

/* When the client has had long enough (ns), by what it owes: a request
 * unfinished (the header timeout from the stream's opening, absolute, as
 * HTTP/1's head), answers it does not take (the send timeout from its last
 * progress: no acknowledgement, no window), or a next request (the
 * keep-alive timeout from the last one's end, whatever PINGs it sends).
 * UINT64_MAX before the handshake's end, which has its own timeout. */
static uint64_t deadline(const struct h3_conn *hc, bool *unfinished)
{
    const struct settings *set = hc->hw->w->set;
    *unfinished = false;
    if (!hc->handshake_done)
        return UINT64_MAX;
    if (hc->waiting) { /* the oldest request with no answer yet */
        *unfinished = true;
        return hc->waiting->opened_at + (uint64_t)set->timeout_header * NGTCP2_SECONDS;
    }
    return hc->active_at +
           (uint64_t)(hc->nstreams ? set->timeout_send : set->timeout_keepalive) * NGTCP2_SECONDS;
}

/* The deadline passed: H3_REQUEST_INCOMPLETE for a request never
 * finished, H3_NO_ERROR otherwise (RFC 9114 §8.1). */
static void deadline_passed(struct h3_conn *hc, bool unfinished)
{
    if (unfinished)
        h3_conn_close_app(hc, NGHTTP3_H3_REQUEST_INCOMPLETE, H3_CLOSE_TIMEOUT);
    else
        h3_conn_close_app(hc, NGHTTP3_H3_NO_ERROR, hc->nstreams ? H3_CLOSE_TIMEOUT : H3_CLOSE_IDLE);
}

/* ---- writing ------------------------------------------------------------------------- */

static void arm(struct h3_conn *hc)
{
    bool unfinished;
    uint64_t at = ngtcp2_conn_get_expiry(hc->qc), d = deadline(hc, &unfinished);
    h3_heap_set(hc->hw, hc, d < at ? d : at);
}

/* One GSO train of n bytes in seg-sized datagrams to path, marked ecn. */
static void send_train(struct h3_conn *hc, const ngtcp2_path *p, const uint8_t *buf, size_t n,
                       size_t seg, uint8_t ecn)
{
    struct h3_path to = hc->path;
    memcpy(&to.local, p->local.addr, p->local.addrlen);
    to.local_len = p->local.addrlen;
    memcpy(&to.peer, p->remote.addr, p->remote.addrlen);
    to.peer_len = p->remote.addrlen;
    if (to.peer_len == hc->path.peer_len && memcmp(&to.peer, &hc->path.peer, to.peer_len) != 0)
        hc->path = to; /* migrated (ngtcp2 validated the new path): answer there */
    h3_udp_send_marked(hc->hw, &to, buf, n, seg, ecn);
}

/* Window dribbles (as HTTP/2's H2_WINDOW_MIN): no STREAM frame under
 * H3_WINDOW_MIN bytes because the client's window is short, unless it
 * carries all that is offered. A stream short of its own window waits for
 * MAX_STREAM_DATA (extend_max_stream_data unblocks it); one short of the
 * connection's makes this flush write no stream data (MAX_DATA brings the
 * next). The client's packets granting a byte at a time did no work, and
 * each spends a glitch. */
static bool window_short(struct h3_conn *hc, int64_t sid, const nghttp3_vec *vec, size_t cnt,
                         bool *conn_short)
{
    uint64_t want = nghttp3_vec_len(vec, cnt);
    uint64_t s = ngtcp2_conn_get_max_stream_data_left(hc->qc, sid);
    uint64_t c = ngtcp2_conn_get_max_data_left(hc->qc);
    uint64_t room = s < c ? s : c;
    if (want == 0 || room >= want || room >= H3_WINDOW_MIN)
        return false;
    if (s < c)
        nghttp3_conn_block_stream(hc->hc, sid);
    else
        *conn_short = true;
    return true;
}

/* The next packet: nghttp3's next stream data, if any, framed by ngtcp2,
 * with the ECN codepoint ngtcp2 wants it sent with. Returns the packet's
 * length, 0 when there is nothing to send, or a negative ngtcp2 error. */
static ngtcp2_ssize write_one(struct h3_conn *hc, ngtcp2_path_storage *ps, uint8_t *to, size_t max,
                              uint8_t *ecn)
{
    bool conn_short = false;
    for (;;) {
        int64_t sid = -1;
        int fin = 0;
        nghttp3_vec vec[16];
        nghttp3_ssize cnt = 0;
        if (hc->hc && !conn_short && ngtcp2_conn_get_max_data_left(hc->qc)) {
            cnt = nghttp3_conn_writev_stream(hc->hc, &sid, &fin, vec, 16);
            if (cnt < 0)
                return NGTCP2_ERR_CALLBACK_FAILURE;
            if (sid >= 0 && window_short(hc, sid, vec, (size_t)cnt, &conn_short))
                continue;
        }
        uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE | (fin ? NGTCP2_WRITE_STREAM_FLAG_FIN : 0);
        ngtcp2_ssize ndata = -1;
        ngtcp2_pkt_info pi;
        ngtcp2_ssize n =
            ngtcp2_conn_writev_stream(hc->qc, &ps->path, &pi, to, max, &ndata, flags, sid,
                                      (const ngtcp2_vec *)vec, (size_t)cnt, h3_now(hc->hw));
        if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED) {
            nghttp3_conn_block_stream(hc->hc, sid);
            continue;
        }
        if (n == NGTCP2_ERR_STREAM_SHUT_WR) {
            nghttp3_conn_shutdown_stream_write(hc->hc, sid);
            continue;
        }
        if (ndata >= 0 && sid >= 0) {
            if (nghttp3_conn_add_write_offset(hc->hc, sid, (size_t)ndata))
                return NGTCP2_ERR_CALLBACK_FAILURE;
            if (fin && (size_t)ndata == nghttp3_vec_len(vec, (size_t)cnt))
                h3_stream_fin_sent(hc, sid); /* the answer is complete: logged */
        }
        if (n == NGTCP2_ERR_WRITE_MORE)
            continue;
        *ecn = pi.ecn;
        return n;
    }
}

static bool same_path(const ngtcp2_path *a, const ngtcp2_path *b)
{
    return a->remote.addrlen == b->remote.addrlen && a->local.addrlen == b->local.addrlen &&
           memcmp(a->remote.addr, b->remote.addr, a->remote.addrlen) == 0 &&
           memcmp(a->local.addr, b->local.addr, a->local.addrlen) == 0;
}

void h3_conn_flush(struct h3_conn *hc)
{
    struct h3_worker *hw = hc->hw;
    if (hc->closing || hc->draining || close_if_doomed(hc))
        return;
    size_t max = ngtcp2_conn_get_path_max_tx_udp_payload_size(hc->qc);
    size_t burst = ngtcp2_conn_get_send_quantum(hc->qc) / max;
    burst = burst < 1 ? 1 : burst > H3_GSO_MAX ? H3_GSO_MAX : burst;
    ngtcp2_path_storage ps, first;
    ngtcp2_path_storage_zero(&ps);
    size_t len = 0, pkts = 0;
    uint8_t ecn = 0, train_ecn = 0;
    while (pkts < burst) {
        ngtcp2_ssize n = write_one(hc, &ps, hw->tx + len, max, &ecn);
        if (n < 0) {
            close_liberr(hc, (int)n);
            return;
        }
        if (n == 0)
            break;
        if (pkts && (!same_path(&first.path, &ps.path) || ecn != train_ecn)) {
            /* A probe on another path (migration), or a packet ngtcp2 marks
             * otherwise (its ECN validation began or failed): the train so
             * far goes first, this packet starts the next one. */
            send_train(hc, &first.path, hw->tx, len, max, train_ecn);
            memmove(hw->tx, hw->tx + len, (size_t)n);
            len = 0;
            pkts = 0;
        }
        if (pkts == 0) {
            ngtcp2_path_storage_init(&first, ps.path.local.addr, ps.path.local.addrlen,
                                     ps.path.remote.addr, ps.path.remote.addrlen, NULL);
            train_ecn = ecn;
        }
        len += (size_t)n;
        pkts++;
        if ((size_t)n < max)
            break; /* a short datagram ends a GSO train */
    }
    if (len)
        send_train(hc, &first.path, hw->tx, len, max, train_ecn);
    ngtcp2_conn_update_pkt_tx_time(hc->qc, h3_now(hw));
    arm(hc);
    /* The drain: a connection whose streams are all done goes. */
    if (hc->goaway && hc->nstreams == 0)
        h3_conn_close_app(hc, NGHTTP3_H3_NO_ERROR, H3_CLOSE_DRAIN);
}

/* ---- timers ---------------------------------------------------------------------------- */

void h3_conn_timer(struct h3_conn *hc)
{
    if (hc->closing || hc->draining) {
        if (h3_now(hc->hw) >= hc->close_at)
            h3_conn_free(hc, hc->why);
        else
            h3_heap_set(hc->hw, hc, hc->close_at);
        return;
    }
    bool unfinished;
    if (h3_now(hc->hw) >= deadline(hc, &unfinished)) {
        deadline_passed(hc, unfinished);
        return;
    }
    int rv = ngtcp2_conn_handle_expiry(hc->qc, h3_now(hc->hw));
    if (rv == NGTCP2_ERR_IDLE_CLOSE) {
        h3_conn_free(hc, hc->handshake_done ? H3_CLOSE_IDLE : H3_CLOSE_HANDSHAKE);
        return;
    }
    if (rv == NGTCP2_ERR_HANDSHAKE_TIMEOUT) {
        h3_conn_free(hc, H3_CLOSE_HANDSHAKE);
        return;
    }
    if (rv != 0) {
        close_liberr(hc, rv);
        return;
    }
    h3_conn_flush(hc);
}

void h3_conn_free_all(struct h3_worker *hw)
{
    for (uint32_t i = 0; i < hw->next_unused; i++)
        if (hw->conns[i].in_use)
            h3_conn_free(&hw->conns[i], H3_CLOSE_DRAIN);
}

/* ---- reading -------------------------------------------------------------------------- */

static void start_draining(struct h3_conn *hc)
{
    hc->draining = true;
    h3_client_release(hc); /* the peer closed: it may open another */
    hc->why = H3_CLOSE_PEER;
    hc->close_at = three_pto(hc);
    h3_heap_set(hc->hw, hc, hc->close_at);
}

static void tls_done(struct h3_conn *hc);

/* During the closing period: the kept CONNECTION_CLOSE again, for the
 * 1st, 2nd, 4th, 8th ... packet, so a peer that keeps sending gets fewer. */
static void closing_answer(struct h3_conn *hc)
{
    uint32_t k = ++hc->close_sent;
    if ((k & (k - 1)) == 0)
        h3_udp_send(hc->hw, &hc->path, hc->close_pkt, hc->close_len, hc->close_len);
}

void h3_conn_read(struct h3_conn *hc, uint8_t *p, size_t n, const struct h3_path *path)
{
    if (hc->draining)
        return;
    if (hc->closing) {
        closing_answer(hc);
        return;
    }
    struct h3_path at = *path;
    ngtcp2_path np = h3_path_ngtcp2(&at);
    ngtcp2_pkt_info pi = {.ecn = path->ecn};
    ngtcp2_conn_info before, after;
    ngtcp2_conn_get_conn_info(hc->qc, &before);
    bool was_done = hc->handshake_done;
    hc->useful = false;
    int rv = ngtcp2_conn_read_pkt(hc->qc, &np, &pi, p, n, h3_now(hc->hw));
    if (rv == 0 && hc->handshake_done && hc->tls)
        tls_done(hc);
    if (rv == 0) {
        /* PING floods and their kind (ACK-eliciting frames that do
         * nothing, NEW_CONNECTION_ID, MAX_DATA a byte at a time, empty or
         * duplicate STREAM frames): a packet after the handshake that
         * brought no stream data, no new acknowledgement (what is in
         * flight did not shrink) and no other callback's work spends a
         * glitch. So does a client's path MTU probe (PING and PADDING):
         * ngtcp2 as a client sends two a connection. */
        if (was_done && !hc->useful) {
            ngtcp2_conn_get_conn_info(hc->qc, &after);
            if (after.bytes_in_flight >= before.bytes_in_flight)
                h3_glitch(hc);
        }
        h3_dirty(hc);
        return;
    }
    if (rv == NGTCP2_ERR_DRAINING) {
        start_draining(hc);
        return;
    }
    if (rv == NGTCP2_ERR_DROP_CONN) {
        h3_conn_free(hc, H3_CLOSE_PROTOCOL);
        return;
    }
    if (hc->app_err) {
        h3_conn_close_app(hc, hc->app_err, H3_CLOSE_PROTOCOL);
        return;
    }
    if (close_if_doomed(hc))
        return;
    close_liberr(hc, rv);
}

/* The handshake is over: QUIC has its keys, and the client has no more
 * TLS to send (RFC 9001 §4.1.3 and §6: no KeyUpdate, no certificate asked
 * for, and no ticket issued, so no post-handshake message either way): the
 * GnuTLS session (about 10 KiB a connection) goes. recv_crypto_data below
 * refuses what a client sends nonetheless. */
static void tls_done(struct h3_conn *hc)
{
    ngtcp2_conn_set_tls_native_handle(hc->qc, NULL);
    gnutls_deinit(hc->tls);
    hc->tls = NULL;
}

/* ---- ngtcp2's callbacks ---------------------------------------------------------------- */

/* TLS data after the handshake (its session is gone, tls_done): an
 * unexpected_message alert (RFC 8446 §6.2), as GnuTLS would have answered. */
static int recv_crypto_data(ngtcp2_conn *qc, ngtcp2_encryption_level level, uint64_t offset,
                            const uint8_t *data, size_t len, void *ud)
{
    struct h3_conn *hc = ud;
    if (!hc->tls) {
        ngtcp2_conn_set_tls_alert(qc, 10);
        return NGTCP2_ERR_CRYPTO;
    }
    return ngtcp2_crypto_recv_crypto_data_cb(qc, level, offset, data, len, ud);
}

static int recv_stream_data(ngtcp2_conn *qc, uint32_t flags, int64_t id, uint64_t offset,
                            const uint8_t *data, size_t len, void *ud, void *sud)
{
    (void)qc, (void)sud;
    struct h3_conn *hc = ud;
    bool fin = flags & NGTCP2_STREAM_DATA_FLAG_FIN;
    if (refused(hc))
        return 0;
    if (len == 0 && !fin)
        h3_glitch(hc); /* an empty STREAM frame: no work for us, some for the peer */
    else
        h3_conn_progress(hc, ngtcp2_is_bidi_stream(id)); /* a request's bytes move deadlines */
    if (!hc->hc && h3_http_start(hc) < 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return h3_http_recv(hc, id, offset, data, len, fin) < 0 ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static int acked_stream_data_offset(ngtcp2_conn *qc, int64_t id, uint64_t offset, uint64_t n,
                                    void *ud, void *sud)
{
    (void)qc, (void)offset, (void)sud;
    struct h3_conn *hc = ud;
    h3_conn_progress(hc, ngtcp2_is_bidi_stream(id)); /* an answer moves on */
    if (hc->hc && nghttp3_conn_add_ack_offset(hc->hc, id, n) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int stream_close(ngtcp2_conn *qc, uint32_t flags, int64_t id, uint64_t code, void *ud,
                        void *sud)
{
    (void)sud;
    struct h3_conn *hc = ud;
    if (!(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET))
        code = NGHTTP3_H3_NO_ERROR;
    if (hc->hc) {
        int rv = nghttp3_conn_close_stream(hc->hc, id, code);
        if (rv != 0 && rv != NGHTTP3_ERR_STREAM_NOT_FOUND)
            return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    /* A request stream of the client's is done: it may open another. */
    if (ngtcp2_is_bidi_stream(id) && !(id & 1))
        ngtcp2_conn_extend_max_streams_bidi(qc, 1);
    return 0;
}

static int stream_reset(ngtcp2_conn *qc, int64_t id, uint64_t final_size, uint64_t code, void *ud,
                        void *sud)
{
    (void)qc, (void)final_size, (void)code, (void)sud;
    struct h3_conn *hc = ud;
    h3_conn_progress(hc, false); /* a reset before the answer spends a glitch (h3_http.c) */
    if (hc->hc && nghttp3_conn_shutdown_stream_read(hc->hc, id) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int stream_stop_sending(ngtcp2_conn *qc, int64_t id, uint64_t code, void *ud, void *sud)
{
    return stream_reset(qc, id, 0, code, ud, sud);
}

static int extend_max_remote_streams_bidi(ngtcp2_conn *qc, uint64_t max, void *ud)
{
    (void)qc;
    struct h3_conn *hc = ud;
    if (hc->hc)
        nghttp3_conn_set_max_client_streams_bidi(hc->hc, max);
    return 0;
}

static int extend_max_stream_data(ngtcp2_conn *qc, int64_t id, uint64_t max, void *ud, void *sud)
{
    (void)max, (void)sud;
    struct h3_conn *hc = ud;
    /* A grant that lets a frame of H3_WINDOW_MIN go did work; one that
     * dribbles a byte at a time did not (a glitch for its packet). */
    if (ngtcp2_conn_get_max_stream_data_left(qc, id) >= H3_WINDOW_MIN)
        h3_conn_progress(hc, false);
    if (hc->hc && nghttp3_conn_unblock_stream(hc->hc, id) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static void rand_cb(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx)
{
    (void)ctx;
    sys_random(dest, len);
}

static int get_new_connection_id(ngtcp2_conn *qc, ngtcp2_cid *cid, uint8_t *token, size_t len,
                                 void *ud)
{
    (void)qc, (void)len;
    struct h3_conn *hc = ud;
    if (h3_cid_new(hc->hw, cid, token) < 0 ||
        h3_cidmap_add(hc->hw->map, cid->data, cid->datalen, hc) < 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int remove_connection_id(ngtcp2_conn *qc, const ngtcp2_cid *cid, void *ud)
{
    (void)qc;
    struct h3_conn *hc = ud;
    h3_cidmap_del(hc->hw->map, cid->data, cid->datalen);
    /* RETIRE_CONNECTION_ID floods: each ID the client retires makes a new
     * one (random bytes, a reset token, the table): a glitch each. */
    if (hc->handshake_done)
        h3_glitch(hc);
    return 0;
}

static int handshake_completed(ngtcp2_conn *qc, void *ud)
{
    (void)qc;
    struct h3_conn *hc = ud;
    hc->handshake_done = true;
    hc->active_at = h3_now(hc->hw);
    hc->hw->handshakes--;
    /* The address is validated (the client's Finished came): the
     * connection counts for its client from now, or is refused, closed
     * once ngtcp2 returns (h3_doom), its requests unserved (refused()). */
    if (!h3_client_validated(hc)) {
        h3_client_refused(hc->hw);
        hc->doomed = false; /* the refusal stands over any earlier decision */
        h3_doom(hc, NGTCP2_CONNECTION_REFUSED, H3_CLOSE_LIMIT);
        return 0;
    }
    h3_send_new_token(hc); /* a returning client skips the Retry (RFC 9000 §8.1.3) */
    return 0;
}

static int path_validation(ngtcp2_conn *qc, uint32_t flags, const ngtcp2_path *path,
                           const ngtcp2_path *old_path, ngtcp2_path_validation_result res, void *ud)
{
    (void)qc, (void)flags, (void)path;
    struct h3_conn *hc = ud;
    if (res == NGTCP2_PATH_VALIDATION_RESULT_SUCCESS && old_path)
        H3_COUNT(hc->hw, migrations);
    /* Each new path costs a validation (and sends to an address not yet
     * known to be the client's): a glitch each, so a peer hopping from
     * address to address runs out, a client that moves now and then never. */
    h3_glitch(hc);
    return 0;
}

void h3_conn_callbacks(ngtcp2_callbacks *cb)
{
    *cb = (ngtcp2_callbacks){
        .recv_client_initial = ngtcp2_crypto_recv_client_initial_cb,
        .recv_crypto_data = recv_crypto_data,
        .handshake_completed = handshake_completed,
        .encrypt = ngtcp2_crypto_encrypt_cb,
        .decrypt = ngtcp2_crypto_decrypt_cb,
        .hp_mask = ngtcp2_crypto_hp_mask_cb,
        .recv_stream_data = recv_stream_data,
        .acked_stream_data_offset = acked_stream_data_offset,
        .stream_close = stream_close,
        .rand = rand_cb,
        .get_new_connection_id = get_new_connection_id,
        .remove_connection_id = remove_connection_id,
        .update_key = ngtcp2_crypto_update_key_cb,
        .path_validation = path_validation,
        .stream_reset = stream_reset,
        .extend_max_remote_streams_bidi = extend_max_remote_streams_bidi,
        .extend_max_stream_data = extend_max_stream_data,
        .delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb,
        .delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb,
        .get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb,
        .stream_stop_sending = stream_stop_sending,
        .version_negotiation = ngtcp2_crypto_version_negotiation_cb,
    };
}

/* SPDX-License-Identifier: MIT */
/*
 * h3_accept.c - a datagram's arrival (RFC 9000 §5.2): to the connection its
 * Destination Connection ID names, or, for an Initial of none we have, to
 * the admission of a new one (a Retry, a refusal, or the ngtcp2 connection
 * made); else a Version Negotiation or a stateless reset. What a
 * connection does once it exists is h3_conn.c's, below it: this file hands
 * it the datagram (h3_conn_read), and gives a record back that it could
 * not finish making (h3_conn_free). The two are apart by their peers:
 * this file decides whether a connection exists at all, for senders whose
 * addresses may be spoofed and for whom it keeps as little as it can;
 * h3_conn.c runs one that does.
 *
 * A new connection exists only for an acceptable Initial (ngtcp2_accept:
 * long header, version 1, at least 1200 bytes, RFC 9000 §14.1). Without a
 * valid token, a worker with H3_HANDSHAKES_RETRY handshakes in progress (or
 * any worker with --h3-retry on) answers with a Retry and keeps nothing
 * (§8.1.2), so a flood of Initials from spoofed addresses costs no state.
 * --max-conns-per-client counts a connection once its address is
 * validated (h3_client.c): a client at its limit gets a Retry for a
 * token-less Initial, CONNECTION_REFUSED for one with a token (a handshake
 * that completes over the limit is h3_conn.c's to end).
 */
#include "http3/h3_internal.h"

#include "base/server.h"
#include "base/worker.h"

/* ---- a new connection ------------------------------------------------------------------ */

/* A free record: one h3_conn_free gave back, else one never used. */
static struct h3_conn *slot_get(struct h3_worker *hw)
{
    struct h3_conn *hc = hw->free_conns;
    if (hc)
        hw->free_conns = hc->next_free;
    else if (hw->next_unused < hw->nconns)
        hc = &hw->conns[hw->next_unused++];
    return hc;
}

static void params_set(struct h3_worker *hw, ngtcp2_transport_params *p, const ngtcp2_pkt_hd *hd,
                       const ngtcp2_cid *scid, const ngtcp2_cid *odcid)
{
    ngtcp2_transport_params_default(p);
    /* Requests are small and their bodies are dropped (RFC 9114 §4.1):
     * the client's windows, not ours, bound a download. */
    p->initial_max_stream_data_bidi_remote = 64 * 1024;
    p->initial_max_stream_data_uni = 64 * 1024;
    p->initial_max_data = 1024 * 1024;
    p->initial_max_streams_bidi = H3_MAX_STREAMS;
    p->initial_max_streams_uni = 3; /* control, QPACK encoder and decoder (RFC 9114 §6.2) */
    p->max_idle_timeout = (ngtcp2_duration)hw->w->set->timeout_keepalive * NGTCP2_SECONDS;
    p->active_connection_id_limit = 4;
    p->stateless_reset_token_present = 1;
    h3_reset_token(hw->srv, scid, p->stateless_reset_token);
    if (odcid) {
        p->original_dcid = *odcid;
        p->retry_scid = hd->dcid;
        p->retry_scid_present = 1;
    } else {
        p->original_dcid = hd->dcid;
    }
    p->original_dcid_present = 1;
}

static void settings_set(struct h3_worker *hw, ngtcp2_settings *s, const ngtcp2_pkt_hd *hd,
                         int token, bool regular)
{
    ngtcp2_settings_default(s);
    s->initial_ts = h3_now(hw);
    s->max_tx_udp_payload_size = H3_MAX_UDP_PAYLOAD;
    s->cc_algo = NGTCP2_CC_ALGO_CUBIC;
    s->handshake_timeout = (ngtcp2_duration)hw->w->set->timeout_handshake * NGTCP2_SECONDS;
    if (token > 0) {
        /* A validated token: the client's address is validated (no 3x
         * limit, RFC 9000 §8.1). */
        s->token = hd->token;
        s->tokenlen = hd->tokenlen;
        s->token_type = regular ? NGTCP2_TOKEN_TYPE_NEW_TOKEN : NGTCP2_TOKEN_TYPE_RETRY;
    }
}

static struct h3_conn *conn_new(struct h3_worker *hw, const ngtcp2_pkt_hd *hd,
                                const struct h3_path *path, int token, bool regular,
                                const ngtcp2_cid *odcid)
{
    struct h3_conn *hc = slot_get(hw);
    if (!hc)
        return NULL;
    *hc = (struct h3_conn){.hw = hw,
                           .path = *path,
                           .odcid = hd->dcid,
                           .heap_at = UINT32_MAX,
                           .in_use = true,
                           .validated = token > 0,
                           .glitch_at = hw->w->now_ms};
    hw->active++;
    hw->handshakes++;
    H3_COUNT(hw, conns);
    stats_set(&hw->w->stats->h3_open, hw->active);
    if (hw->active > hw->trim_peak)
        hw->trim_peak = hw->active;
    ngtcp2_cid scid;
    ngtcp2_settings s;
    ngtcp2_transport_params p;
    if (h3_cid_new(hw, &scid, NULL) < 0) {
        h3_conn_free(hc, H3_CLOSE_INTERNAL);
        return NULL;
    }
    settings_set(hw, &s, hd, token, regular);
    params_set(hw, &p, hd, &scid, token > 0 && !regular ? odcid : NULL);
    ngtcp2_path np = h3_path_ngtcp2(&hc->path);
    if (ngtcp2_conn_server_new(&hc->qc, &hd->scid, &scid, &np, hd->version, &hw->qcb, &s, &p, NULL,
                               hc) != 0 ||
        h3_tls_session(hw, hc) != 0 || h3_cidmap_add(hw->map, scid.data, scid.datalen, hc) ||
        h3_cidmap_add(hw->map, hd->dcid.data, hd->dcid.datalen, hc)) {
        h3_conn_free(hc, H3_CLOSE_INTERNAL);
        return NULL;
    }
    ngtcp2_conn_set_tls_native_handle(hc->qc, hc->tls);
    return hc;
}

/* Whether an Initial of token's verdict (h3_verify_token) from client key
 * may make a connection: false when it was answered without state
 * instead. A token-less Initial gets a Retry while the worker has many
 * handshakes in progress, with --h3-retry on, or when its client is at its
 * limit: the token it comes back with proves the address, which an
 * Initial alone does not (a spoofed one must not spend a victim's quota).
 * A token counts the connection at once (h3_client.c), or, the client at
 * its limit, refuses it. */
static bool admit(struct h3_worker *hw, const ngtcp2_pkt_hd *hd, const struct h3_path *path,
                  int token, uint64_t key)
{
    if (token < 0) {
        /* A Retry token that does not verify: INVALID_TOKEN (§8.1.2). */
        h3_send_close(hw, hd, path, NGTCP2_INVALID_TOKEN);
        return false;
    }
    if (token == 0 && (hw->w->set->h3_retry || hw->handshakes >= H3_HANDSHAKES_RETRY ||
                       h3_client_full(hw, key))) {
        h3_send_retry(hw, hd, path);
        return false;
    }
    if (token > 0 && !h3_client_open(hw, key)) {
        h3_client_refused(hw);
        h3_send_close(hw, hd, path, NGTCP2_CONNECTION_REFUSED);
        return false;
    }
    return true;
}

/* An Initial of no connection we have (RFC 9000 §7, §8.1). */
static void accept_new(struct h3_worker *hw, uint8_t *p, size_t n, const struct h3_path *path)
{
    ngtcp2_pkt_hd hd;
    if (ngtcp2_accept(&hd, p, n) != 0 || hw->draining)
        return; /* not an Initial we take (too short, a Handshake, 0-RTT) */
    ngtcp2_cid odcid;
    bool regular;
    int token = h3_verify_token(hw, &hd, path, &odcid, &regular);
    uint64_t key = h3_client_key(hw, path);
    if (!admit(hw, &hd, path, token, key))
        return;
    struct h3_conn *hc = conn_new(hw, &hd, path, token, regular, &odcid);
    if (!hc) {
        if (token > 0)
            h3_client_close(hw, key); /* admit() counted it */
        return;
    }
    hc->client_key = key;
    hc->client_counted = token > 0 && key;
    h3_conn_read(hc, p, n, path);
}

void h3_accept_datagram(struct h3_worker *hw, uint8_t *p, size_t n, const struct h3_path *path)
{
    ngtcp2_version_cid vc;
    int rv = ngtcp2_pkt_decode_version_cid(&vc, p, n, H3_CID_LEN);
    if (rv == NGTCP2_ERR_VERSION_NEGOTIATION) {
        if (n >= 1200)
            h3_send_vn(hw, &vc, path);
        return;
    }
    if (rv != 0)
        return;
    struct h3_conn *hc = h3_cidmap_get(hw->map, vc.dcid, vc.dcidlen);
    if (hc) {
        h3_conn_read(hc, p, n, path);
        return;
    }
    if (!(p[0] & 0x80)) {
        h3_send_reset(hw, vc.dcid, vc.dcidlen, n, path);
        return;
    }
    accept_new(hw, p, n, path);
}

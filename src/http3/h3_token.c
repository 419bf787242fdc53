/* SPDX-License-Identifier: MIT */
/*
 * h3_token.c - what a worker answers without keeping state, and the
 * secrets that let any worker answer for another:
 *
 * - connection IDs: a key, the generation's base plus the worker's index,
 *   then 15 random bytes (h3_bpf.c steers by the key); each with its
 *   stateless reset token, HKDF of the shared reset secret and the ID
 *   (RFC 9000 §10.3.2), so the owner's token and a stranger worker's
 *   reset agree;
 * - Retry (RFC 9000 §8.1.2): a token sealed with the shared token secret
 *   (ngtcp2's AEAD token: the client's address, the original DCID, the time)
 *   valid for H3_RETRY_TOKEN_S, so it cannot be forged, nor replayed from
 *   another address or after its lifetime;
 * - NEW_TOKEN (§8.1.3): a regular token for the client's address, valid a
 *   day, that validates a returning client's address without a Retry;
 * - stateless reset for a short-header packet of no connection we have
 *   (§10.3), smaller than the packet that caused it, at most
 *   H3_RESETS_PER_S a second per worker;
 * - Version Negotiation (§6) for a long header of a version we lack, only
 *   in answer to a datagram of at least 1200 bytes (§14.1), so it cannot
 *   amplify;
 * - CONNECTION_CLOSE in answer to an Initial we take no connection for
 *   (§10.2.3): INVALID_TOKEN for a Retry token that does not verify,
 *   CONNECTION_REFUSED for a validated client over --max-conns-per-client
 *   (h3_client.c): one datagram for an Initial of at least 1200 bytes, so
 *   within the three times an unvalidated address may get (§8).
 */
#include "http3/h3_internal.h"

#include "base/worker.h"
#include "sys/sys.h"

#include <ngtcp2/ngtcp2_crypto.h>
#include <string.h>

int h3_secrets_make(struct h3_server *s)
{
    if (sys_random(s->reset_secret, sizeof s->reset_secret) < 0 ||
        sys_random(s->token_secret, sizeof s->token_secret) < 0)
        return -1;
    return 0;
}

int h3_reset_token(const struct h3_server *s, const ngtcp2_cid *cid, uint8_t *token)
{
    return ngtcp2_crypto_generate_stateless_reset_token(token, s->reset_secret,
                                                        sizeof s->reset_secret, cid);
}

int h3_cid_new(struct h3_worker *hw, ngtcp2_cid *cid, uint8_t *reset_token)
{
    cid->datalen = H3_CID_LEN;
    cid->data[0] = (uint8_t)(hw->srv->cid_base + hw->w->index);
    if (sys_random(cid->data + 1, H3_CID_LEN - 1) < 0)
        return -1;
    return reset_token ? h3_reset_token(hw->srv, cid, reset_token) : 0;
}

static const struct sockaddr *peer_sa(const struct h3_path *path)
{
    return (const struct sockaddr *)&path->peer;
}

void h3_send_retry(struct h3_worker *hw, const ngtcp2_pkt_hd *hd, const struct h3_path *path)
{
    ngtcp2_cid scid;
    uint8_t token[NGTCP2_CRYPTO_MAX_RETRY_TOKENLEN2];
    uint8_t pkt[H3_MAX_UDP_PAYLOAD];
    if (h3_cid_new(hw, &scid, NULL) < 0)
        return;
    ngtcp2_ssize tl = ngtcp2_crypto_generate_retry_token2(
        token, hw->srv->token_secret, H3_SECRET_LEN, hd->version, peer_sa(path), path->peer_len,
        &scid, &hd->dcid, h3_now(hw));
    if (tl < 0)
        return;
    ngtcp2_ssize n = ngtcp2_crypto_write_retry(pkt, sizeof pkt, hd->version, &hd->scid, &scid,
                                               &hd->dcid, token, (size_t)tl);
    if (n > 0 && h3_udp_send(hw, path, pkt, (size_t)n, (size_t)n) == 0)
        H3_COUNT(hw, retries);
}

int h3_verify_token(struct h3_worker *hw, const ngtcp2_pkt_hd *hd, const struct h3_path *path,
                    ngtcp2_cid *odcid, bool *regular)
{
    *regular = false;
    if (hd->tokenlen == 0)
        return 0;
    const uint8_t *t = hd->token;
    uint64_t now = h3_now(hw);
    if (t[0] == NGTCP2_CRYPTO_TOKEN_MAGIC_RETRY2)
        return ngtcp2_crypto_verify_retry_token2(
                   odcid, t, hd->tokenlen, hw->srv->token_secret, H3_SECRET_LEN, hd->version,
                   peer_sa(path), path->peer_len, &hd->dcid,
                   (ngtcp2_duration)H3_RETRY_TOKEN_S * NGTCP2_SECONDS, now) == 0
                   ? 1
                   : -1;
    if (t[0] == NGTCP2_CRYPTO_TOKEN_MAGIC_REGULAR &&
        ngtcp2_crypto_verify_regular_token(
            t, hd->tokenlen, hw->srv->token_secret, H3_SECRET_LEN, peer_sa(path), path->peer_len,
            (ngtcp2_duration)H3_NEW_TOKEN_S * NGTCP2_SECONDS, now) == 0) {
        *regular = true;
        return 1;
    }
    /* A NEW_TOKEN token that does not verify (expired, another address, a
     * stranger's) is no error (RFC 9000 §8.1.3): as if there were none. */
    return 0;
}

void h3_send_new_token(struct h3_conn *hc)
{
    struct h3_worker *hw = hc->hw;
    uint8_t token[NGTCP2_CRYPTO_MAX_REGULAR_TOKENLEN];
    ngtcp2_ssize n =
        ngtcp2_crypto_generate_regular_token(token, hw->srv->token_secret, H3_SECRET_LEN,
                                             peer_sa(&hc->path), hc->path.peer_len, h3_now(hw));
    if (n > 0 && ngtcp2_conn_submit_new_token(hc->qc, token, (size_t)n) == 0)
        H3_COUNT(hw, tokens);
}

void h3_send_reset(struct h3_worker *hw, const uint8_t *dcid, size_t dcidlen, size_t pktlen,
                   const struct h3_path *path)
{
    /* RFC 9000 §10.3: smaller than the packet (no loop of resets), at least
     * 21 bytes (it must look like a short-header packet), and counted. */
    if (pktlen < 1 + 5 + NGTCP2_STATELESS_RESET_TOKENLEN + 1 || dcidlen != H3_CID_LEN)
        return;
    int64_t sec = hw->w->now_sec;
    if (sec != hw->reset_sec) {
        hw->reset_sec = sec;
        hw->reset_n = 0;
    }
    if (hw->reset_n >= H3_RESETS_PER_S)
        return;
    hw->reset_n++;
    ngtcp2_cid cid;
    ngtcp2_cid_init(&cid, dcid, dcidlen);
    uint8_t token[NGTCP2_STATELESS_RESET_TOKENLEN], rnd[64], pkt[128];
    size_t randlen = pktlen - 1 - NGTCP2_STATELESS_RESET_TOKENLEN - 1;
    if (randlen > 40)
        randlen = 40;
    if (h3_reset_token(hw->srv, &cid, token) != 0 || sys_random(rnd, randlen) < 0)
        return;
    ngtcp2_ssize n = ngtcp2_pkt_write_stateless_reset(pkt, sizeof pkt, token, rnd, randlen);
    if (n > 0 && h3_udp_send(hw, path, pkt, (size_t)n, (size_t)n) == 0)
        H3_COUNT(hw, resets);
}

void h3_send_vn(struct h3_worker *hw, const ngtcp2_version_cid *vc, const struct h3_path *path)
{
    static const uint32_t versions[] = {NGTCP2_PROTO_VER_V1};
    uint8_t pkt[256], unused = 0;
    sys_random(&unused, 1);
    ngtcp2_ssize n = ngtcp2_pkt_write_version_negotiation(
        pkt, sizeof pkt, unused, vc->scid, vc->scidlen, vc->dcid, vc->dcidlen, versions,
        sizeof versions / sizeof versions[0]);
    if (n > 0 && h3_udp_send(hw, path, pkt, (size_t)n, (size_t)n) == 0)
        H3_COUNT(hw, vn);
}

void h3_send_close(struct h3_worker *hw, const ngtcp2_pkt_hd *hd, const struct h3_path *path,
                   uint64_t code)
{
    /* From the server's side of the Initial: to the client's SCID, from
     * the DCID it chose, whose Initial keys it has. */
    ngtcp2_ssize m = ngtcp2_crypto_write_connection_close(hw->tx, H3_MAX_UDP_PAYLOAD, hd->version,
                                                          &hd->scid, &hd->dcid, code, NULL, 0);
    if (m > 0)
        h3_udp_send(hw, path, hw->tx, (size_t)m, (size_t)m);
}

/* SPDX-License-Identifier: MIT */
/*
 * h3_client.c - a QUIC connection's place in the per-client counts
 * (--max-conns-per-client; base/clients.h). They are the tables TCP's
 * connections count in (event/client.c), so a client's TCP and QUIC
 * connections count together: the limit is its share of the server
 * whatever the protocol, and a client refused over QUIC, which falls back
 * to TCP, meets the same limit there.
 *
 * Only an address QUIC has validated counts (RFC 9000 §8.1). An Initial's
 * source address can be anyone's: counting it would let a stranger spend a
 * victim's quota with spoofed Initials, and so refuse the victim's TCP
 * connections too. A connection therefore counts from the moment its
 * address is known to be its client's: at once when its Initial carries a
 * token we sealed for that address (Retry or NEW_TOKEN, h3_token.c), else
 * when its handshake completes (the client's Finished came in a Handshake
 * packet, which only the address's owner could send). h3_accept.c decides
 * at the Initial: a client at its limit whose Initial has no token gets a
 * Retry (no state kept); one with a token is refused with CONNECTION_CLOSE
 * (CONNECTION_REFUSED, §20.1) and no connection is made. h3_conn.c at the
 * handshake's end: one that completes over the limit (several started
 * while the client was under it) ends with the same error before any
 * request is served.
 *
 * A connection is uncounted once it can carry no more requests: its
 * CONNECTION_CLOSE sent or the peer's received (the closing and draining
 * periods only answer stray packets), or its record freed (idle or
 * handshake timeout, a dropped connection, the worker's exit); a worker
 * that dies has its whole table cleared by the master. A connection counts
 * for the address it was validated from for its whole life, also after the
 * client migrates.
 */
#include "http3/h3_internal.h"

#include "base/clients.h"
#include "base/server.h"
#include "base/stats.h"
#include "base/worker.h"

uint64_t h3_client_key(const struct h3_worker *hw, const struct h3_path *path)
{
    struct clients *cl = hw->w->srv->clients;
    struct net_addr a;
    if (!cl || !client_addr_from(&path->peer, &a))
        return 0;
    return clients_key(cl, &a);
}

bool h3_client_full(const struct h3_worker *hw, uint64_t key)
{
    unsigned limit = hw->w->set->max_conns_per_client;
    return key && limit && clients_conns(hw->w->srv->clients, key) >= limit;
}

bool h3_client_open(struct h3_worker *hw, uint64_t key)
{
    struct worker *w = hw->w;
    return !key || clients_open(w->srv->clients, w->index, key, w->set->max_conns_per_client);
}

void h3_client_close(struct h3_worker *hw, uint64_t key)
{
    if (key)
        clients_close(hw->w->srv->clients, hw->w->index, key);
}

bool h3_client_validated(struct h3_conn *hc)
{
    if (hc->client_counted || !hc->client_key)
        return true;
    if (!h3_client_open(hc->hw, hc->client_key))
        return false;
    hc->client_counted = true;
    return true;
}

void h3_client_release(struct h3_conn *hc)
{
    if (hc->client_counted)
        h3_client_close(hc->hw, hc->client_key);
    hc->client_counted = false;
}

void h3_client_refused(struct h3_worker *hw)
{
    stats_add(&hw->w->stats->client_limited, 1);
}

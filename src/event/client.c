/* SPDX-License-Identifier: MIT */
/*
 * client.c - see client.h.
 *
 * A connection on a --proxy-protocol port must begin with a header from a
 * trusted peer. From an untrusted peer, anything that starts like a header
 * closes the connection at once (never parsed: its claims are worthless);
 * a malformed header from a trusted one closes it too (the framing of what
 * follows is unknown); bytes that are no header at all get a 400, since an
 * HTTP client that reached the port directly should be told. A header split
 * across reads waits for the rest under the header timeout, which started
 * at the accept and which the header does not extend. On the TLS port the
 * header comes in clear before the ClientHello: the TLS transport reads it
 * from its ciphertext buffer with the same function, before the handshake.
 */
#include "event/client.h"

#include "base/clients.h"
#include "base/stats.h"
#include "base/worker.h"
#include "core/bytes.h"
#include "core/proxy_proto.h"
#include "core/realip.h"
#include "event/conn.h"

#include <netinet/in.h>

static void count_as(struct worker *w, struct conn *c, const struct net_addr *a);

static bool peer_trusted(const struct worker *w, const struct conn *c)
{
    struct net_addr a;
    return client_addr_from(&c->peer, &a) && net_cidr_any(w->set->trusted, w->set->ntrusted, &a);
}

static enum client_step reject(struct worker *w, struct conn *c, enum stats_client why)
{
    stats_add(&w->stats->client[why], 1);
    conn_close(w, c, CLOSE_PROXY);
    return CLIENT_CLOSED;
}

enum client_step client_proxy_header(struct worker *w, struct conn *c, char *in, uint32_t *len,
                                     uint32_t cap)
{
    if (!peer_trusted(w, c)) {
        if (!proxy_looks_like_header(in, *len)) {
            stats_add(&w->stats->client[STATS_PROXY_MISSING], 1);
            c->proxy_pending = false;
            return CLIENT_MISSING;
        }
        return reject(w, c, STATS_PROXY_UNTRUSTED);
    }
    struct proxy_header h;
    long r = proxy_parse(in, *len, &h);
    if (r == PROXY_AGAIN)
        return *len < cap ? CLIENT_WAIT : reject(w, c, STATS_PROXY_MALFORMED);
    if (r == PROXY_MISSING) {
        stats_add(&w->stats->client[STATS_PROXY_MISSING], 1);
        c->proxy_pending = false;
        return CLIENT_MISSING;
    }
    if (r < 0)
        return reject(w, c, STATS_PROXY_MALFORMED);
    c->proxy_pending = false;
    if (h.has_addr)
        client_addr_to(&h.src, h.sport, &c->peer);
    client_count(w, c); /* the header's client (or, LOCAL, the balancer's own) */
    stats_add(&w->stats->client[h.has_addr ? STATS_PROXY_ACCEPTED : STATS_PROXY_LOCAL], 1);
    uint32_t rest = *len - (uint32_t)r;
    if (rest)
        mem_move(in, in + r, rest);
    *len = rest;
    return CLIENT_READY;
}

bool client_real_ip(struct worker *w, struct conn *c, const struct http_request *req,
                    struct net_addr *client)
{
    const struct settings *set = w->set;
    struct net_addr peer;
    if (!set->real_ip_header.n || !client_addr_from(&c->peer, &peer))
        return false;
    enum realip_verdict v = realip_pick(req->fields, req->nfields, set->real_ip_header,
                                        set->trusted, set->ntrusted, &peer, client);
    bool found = v == REALIP_FOUND;
    if (v != REALIP_NONE)
        stats_add(&w->stats->client[found ? STATS_REALIP_USED : STATS_REALIP_BAD], 1);
    /* The connection counts for the client its request names (a balancer's
     * connection for each client in turn, never for the balancer). */
    if (w->srv->clients)
        count_as(w, c, found ? client : &peer);
    return found;
}

/* ---- per-client connection counts (issue 22; clients.h) ------------------------ */

/* c counts for the client at a from now: uncounted under its old key if it
 * had another, counted under a's (or marked over the limit). */
static void count_as(struct worker *w, struct conn *c, const struct net_addr *a)
{
    uint64_t key = clients_key(w->srv->clients, a);
    if (c->client_counted && key == c->client_key)
        return;
    client_uncount(w, c);
    c->client_key = key;
    c->client_counted = clients_open(w->srv->clients, w->index, key, w->set->max_conns_per_client);
    c->client_limited = !c->client_counted;
}

void client_count(struct worker *w, struct conn *c)
{
    struct net_addr a;
    c->client_counted = c->client_limited = false;
    if (!w->srv->clients || !client_addr_from(&c->peer, &a))
        return; /* a Unix socket's client has no address to count */
    /* Behind a trusted balancer with a real-IP header, the request names
     * the client: the connection counts from its first request on. */
    if (w->set->real_ip_header.n && net_cidr_any(w->set->trusted, w->set->ntrusted, &a))
        return;
    count_as(w, c, &a);
}

void client_uncount(struct worker *w, struct conn *c)
{
    if (c->client_counted)
        clients_close(w->srv->clients, w->index, c->client_key);
    c->client_counted = false;
}

uint64_t client_key_of(struct worker *w, const struct conn *c, const struct net_addr *named)
{
    struct net_addr a;
    if (!w->srv->clients)
        return 0;
    if (c->client_counted)
        return c->client_key;
    if (named)
        return clients_key(w->srv->clients, named);
    return client_addr_from(&c->peer, &a) ? clients_key(w->srv->clients, &a) : 0;
}

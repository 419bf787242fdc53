/* SPDX-License-Identifier: MIT */
/*
 * stats.h - the counters behind --status's /metrics: one block per worker
 * slot in a MAP_SHARED region the master maps before forking, so they
 * survive a worker's restart (Prometheus counters must not go back) and the
 * status process can sum them without asking anyone.
 *
 * Each block has exactly one writer, the worker of that slot, so an update
 * is a relaxed atomic load and store (a plain add on x86, no lock prefix,
 * no shared cache line: blocks are 64-byte aligned); readers use relaxed
 * loads and see every counter whole, if not all at the same instant. The
 * master alone writes the header (start time, restarts, draining).
 */
#ifndef PITH_STATS_H
#define PITH_STATS_H

#include "base/close.h"
#include "base/server.h"
#include "core/core.h"

#include <stdint.h>

/* Status classes 1xx..5xx; methods GET, HEAD, OPTIONS, anything else. A
 * fixed, small label set: no label ever comes from the request. */
#define STATS_CLASSES 5
#define STATS_METHODS 4

/* What the PROXY header and the real-IP header decided (counted, since the
 * client's address itself is never a label). */
#define STATS_CLIENT_LIST(X)                                                                       \
    X(STATS_PROXY_ACCEPTED, "proxy_accepted")   /* a valid header from a trusted peer */           \
    X(STATS_PROXY_LOCAL, "proxy_local")         /* LOCAL/UNKNOWN: the socket's address kept */     \
    X(STATS_PROXY_UNTRUSTED, "proxy_untrusted") /* a header from an untrusted peer: closed */      \
    X(STATS_PROXY_MALFORMED, "proxy_malformed") /* a broken header: closed */                      \
    X(STATS_PROXY_MISSING, "proxy_missing")     /* no header: 400 and closed */                    \
    X(STATS_REALIP_USED, "real_ip_used")        /* the real-IP header named the client */          \
    X(STATS_REALIP_BAD, "real_ip_malformed")    /* a malformed real-IP header, ignored */

/* What basic auth (issue 22) decided for a request under a protected prefix. */
#define STATS_AUTH_LIST(X)                                                                         \
    X(STATS_AUTH_OK, "verified")     /* crypt said yes */                                          \
    X(STATS_AUTH_CACHED, "cached")   /* a credential that verified before */                       \
    X(STATS_AUTH_FAILED, "failed")   /* a wrong or malformed credential: 401 */                    \
    X(STATS_AUTH_MISSING, "missing") /* none (or two): 401 */                                      \
    X(STATS_AUTH_LIMITED, "limited") /* too many failures: 429, not checked */

/* The HTTP/2 GOAWAYs pith sent (issue 20), by error code. */
#define STATS_H2_GOAWAY_LIST(X)                                                                    \
    X(STATS_H2_GOAWAY_NO_ERROR, "no_error")                   /* idle timeout, drain */            \
    X(STATS_H2_GOAWAY_PROTOCOL_ERROR, "protocol_error")       /* a broken peer */                  \
    X(STATS_H2_GOAWAY_ENHANCE_YOUR_CALM, "enhance_your_calm") /* a flood */                        \
    X(STATS_H2_GOAWAY_OTHER, "other")

#define STATS_ENUM(name, text) name,
enum stats_client { STATS_CLIENT_LIST(STATS_ENUM) STATS_CLIENT_EVENTS };
enum stats_auth { STATS_AUTH_LIST(STATS_ENUM) STATS_AUTH_RESULTS };
enum stats_h2_goaway { STATS_H2_GOAWAY_LIST(STATS_ENUM) STATS_H2_GOAWAY_REASONS };
#undef STATS_ENUM

struct stats_worker {
    _Alignas(64) uint64_t requests[STATS_CLASSES][STATS_METHODS];
    uint64_t sent_bytes; /* heads and bodies */
    uint64_t cache_hits; /* file cache lookups, as counted by filecache */
    uint64_t cache_misses;
    uint64_t closes[CLOSE_REASONS];
    uint64_t client[STATS_CLIENT_EVENTS];
    uint64_t open_conns; /* a gauge: this slot's worker's connections now */
    uint64_t up;         /* 1 while the worker accepts connections */
    /* HTTPS (tls.c; status.c's put_tls()): handshakes by result, plain
     * HTTP requests on the TLS port, connections by data path. */
    uint64_t tls_handshakes, tls_failed, tls_plain_http, tls_ktls, tls_userspace;
    /* HTTP/2 (issue 20; h2_conn.c, h2_stream.c): connections, streams,
     * responses, RST_STREAMs each way, glitches, GOAWAYs sent by code. */
    uint64_t h2_conns, h2_streams, h2_responses, h2_resets_recv, h2_resets_sent, h2_glitches;
    uint64_t h2_goaways[STATS_H2_GOAWAY_REASONS];
    /* HTTP/3 (issue 34; src/http3/): connections accepted, request streams,
     * Retry packets, stateless resets and Version Negotiation packets sent,
     * NEW_TOKEN tokens sent, validated new client addresses (migrations),
     * glitches spent, closes by reason; a gauge of the connections open. */
    uint64_t h3_conns, h3_streams, h3_retries, h3_resets, h3_vn, h3_tokens, h3_migrations;
    uint64_t h3_glitches, h3_open;
    uint64_t h3_closes[H3_CLOSE_REASONS];
    uint64_t client_limited; /* 503s for clients over --max-conns-per-client (issue 22) */
    uint64_t auth[STATS_AUTH_RESULTS];
    /* Responses per site (issue 22), by index in settings.sites[]. */
    uint64_t site_requests[SETTINGS_SITES_MAX];
};

struct stats_shared {
    int64_t start_time; /* seconds since the epoch */
    uint64_t restarts;  /* workers the master replaced */
    uint64_t draining;  /* 1 once a graceful stop began */
    struct stats_worker w[SETTINGS_WORKERS_MAX];
};

/* The single writer's update: a relaxed load and store, no read-modify-
 * write instruction needed. */
static inline void stats_add(uint64_t *c, uint64_t n)
{
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}
static inline void stats_set(uint64_t *c, uint64_t v)
{
    __atomic_store_n(c, v, __ATOMIC_RELAXED);
}
static inline uint64_t stats_get(const uint64_t *c)
{
    return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* Maps the shared region (master, before any fork); NULL when it cannot. */
struct stats_shared *stats_create(int64_t now_sec);

/* One exchange ended: its status, method and bytes. */
void stats_request(struct stats_worker *s, int status, struct span method, uint64_t bytes);

/* The worker's file cache counters, published: a restarted worker's count
 * starts at zero, so base holds what its predecessors in the slot counted. */
static inline void stats_cache(struct stats_worker *s, uint64_t base_hits, uint64_t hits,
                               uint64_t base_misses, uint64_t misses)
{
    stats_set(&s->cache_hits, base_hits + hits);
    stats_set(&s->cache_misses, base_misses + misses);
}

/* The metric names of the client events and auth results, for status.c. */
const char *stats_client_name(enum stats_client e);
const char *stats_auth_name(enum stats_auth e);
const char *stats_h2_goaway_name(enum stats_h2_goaway e);

#endif

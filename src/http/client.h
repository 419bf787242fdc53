/* SPDX-License-Identifier: MIT */
/*
 * client.h - who the client is, behind a load balancer: the PROXY protocol
 * header that must open every connection with --proxy-protocol, and the
 * real-IP header (--real-ip-header) of each request. Both are believed only
 * from a --trusted-proxy; the decisions themselves are core's
 * (proxy_proto.h, realip.h), this file acts on them and counts them.
 */
#ifndef PITH_CLIENT_H
#define PITH_CLIENT_H

#include "core/http_parse.h"
#include "core/netaddr.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

struct worker;
struct conn;
struct exchange;

enum client_step {
    CLIENT_READY,   /* the header was consumed; the HTTP request follows */
    CLIENT_WAIT,    /* a prefix of a header: read more (the header timeout runs) */
    CLIENT_CLOSED,  /* an untrusted peer's header, or a malformed one: c was closed */
    CLIENT_MISSING, /* no header where one is required: answer 400 and close */
};

/* With c->proxy_pending: reads the PROXY header at the start of in[0..*len)
 * (a buffer of cap bytes: c's input, or on the TLS port the ciphertext
 * before the ClientHello), removes it (moving what follows to the front,
 * *len shrinks) and puts its source address in c->peer. */
enum client_step client_proxy_header(struct worker *w, struct conn *c, char *in, uint32_t *len,
                                     uint32_t cap);

/* After req's head was parsed on c: the real-IP header's client, when the
 * peer is trusted and the header names one, into x->client; c then counts
 * for that client (per-client limits). */
void client_real_ip(struct worker *w, struct conn *c, struct exchange *x,
                    const struct http_request *req);

/* --max-conns-per-client (issue 22): c's client is known (the socket's
 * address, or the PROXY header's): c is counted for it across the workers,
 * or marked c->client_limited when the client has the limit already (its
 * request is then answered 503). Nothing without a limit. Behind a trusted
 * balancer with --real-ip-header the request names the client: counted
 * from client_real_ip() then. client_uncount() when c ends. */
void client_count(struct worker *w, struct conn *c);
void client_uncount(struct worker *w, struct conn *c);

/* The key of the client of x on c in the per-client counts (clients.h), or
 * 0 when none are kept or it has no address (a Unix socket's). */
uint64_t client_key_of(struct worker *w, const struct conn *c, const struct exchange *x);

/* An IPv4 or IPv6 socket address in the 16-byte form; false for others. */
bool client_addr_from(const struct sockaddr_storage *ss, struct net_addr *out);
/* The 16-byte form as an AF_INET6 socket address (v4-mapped for IPv4,
 * which the logs print as IPv4). */
void client_addr_to(const struct net_addr *a, uint16_t port, struct sockaddr_storage *out);

#endif

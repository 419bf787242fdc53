/* SPDX-License-Identifier: MIT */
/*
 * client.h - who a connection's client is, behind a load balancer: the
 * PROXY protocol header that must open every connection with
 * --proxy-protocol, and the real-IP header (--real-ip-header) of each
 * request; and the per-client connection counts. Both headers are believed
 * only from a --trusted-proxy; the decisions themselves are core's
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

/* After req's head was parsed on c: true, with the client into *client,
 * when the peer is trusted and the real-IP header names one; c then counts
 * for the client the request names, or its peer (per-client limits). */
bool client_real_ip(struct worker *w, struct conn *c, const struct http_request *req,
                    struct net_addr *client);

/* --max-conns-per-client (issue 22): c's client is known (the socket's
 * address, or the PROXY header's): c is counted for it across the workers,
 * or marked c->client_limited when the client has the limit already (its
 * request is then answered 503). Nothing without a limit. Behind a trusted
 * balancer with --real-ip-header the request names the client: counted
 * from client_real_ip() then. client_uncount() when c ends. */
void client_count(struct worker *w, struct conn *c);
void client_uncount(struct worker *w, struct conn *c);

/* The key in the per-client counts (clients.h) of the client on c, the one
 * its request named (client_real_ip: named, else NULL) or its peer; 0 when
 * none are kept or it has no address (a Unix socket's). */
uint64_t client_key_of(struct worker *w, const struct conn *c, const struct net_addr *named);

#endif

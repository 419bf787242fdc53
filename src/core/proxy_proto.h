/* SPDX-License-Identifier: MIT */
/*
 * proxy_proto.h - the PROXY protocol header a load balancer puts in front of
 * a connection to say who the client is (haproxy's proxy-protocol.txt,
 * versions 1 and 2). A pure function over the bytes received so far: it
 * says "not yet", "here is the header, n bytes long", "this is no header"
 * or "this is a broken header", and never reads past n. Parsing is strict:
 * v1 is exactly "PROXY" SP ("TCP4" | "TCP6") SP src SP dst SP sport SP
 * dport CRLF with single spaces, decimal ports 0..65535 without leading
 * zeros, the family's own address text, at most 107 bytes; "PROXY UNKNOWN"
 * up to CRLF carries no address. v2 is the 16-byte binary head (version 2,
 * command LOCAL or PROXY, a defined family and transport) and its address
 * block; its TLVs must tile the rest exactly (their contents are not used).
 */
#ifndef PITH_PROXY_PROTO_H
#define PITH_PROXY_PROTO_H

#include "core.h"
#include "core/netaddr.h"

#define PROXY_V1_MAX  107 /* the whole v1 line, CRLF included */
#define PROXY_V2_HEAD 16
/* The largest v2 address block plus TLVs accepted: the spec's own
 * recommendation for a receiver's buffer is 536 bytes in all; HAProxy with
 * every TLV option stays far below this. */
#define PROXY_V2_MAX_LEN 1024

#define PROXY_AGAIN   0    /* a prefix of a header: more bytes needed */
#define PROXY_BAD     (-1) /* a header's signature, then something malformed */
#define PROXY_MISSING (-2) /* the bytes do not start with a header at all */

struct proxy_header {
    int version;         /* 1 or 2 */
    bool has_addr;       /* false: LOCAL, UNKNOWN, UNSPEC or AF_UNIX: keep the socket's */
    struct net_addr src; /* the client, when has_addr */
    struct net_addr dst; /* the address the client connected to */
    uint16_t sport, dport;
};

/* Parses a header at the start of p[0..n). Returns its length (> 0, the
 * bytes to skip before the HTTP request), PROXY_AGAIN when p is a strict
 * prefix of a possible header, PROXY_MISSING when p cannot start one, or
 * PROXY_BAD. *out is written only on success. */
long proxy_parse(const char *p, size_t n, struct proxy_header *out);

/* For the caller that must decide before the header is complete (a peer
 * that is not trusted): true when p[0..n) (n > 0) is the start of a v1 or
 * v2 signature, whatever follows. */
bool proxy_looks_like_header(const char *p, size_t n);

#endif

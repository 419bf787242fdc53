/* SPDX-License-Identifier: MIT */
/*
 * netaddr.h - IP addresses as text (RFC 4291 §2.2 for IPv6, dotted decimal
 * for IPv4) and CIDR prefixes (RFC 4632), for the PROXY protocol, the
 * real-IP header and --trusted-proxy. Every address is kept in one form, 16
 * bytes with IPv4 as the IPv4-mapped IPv6 address ::ffff:a.b.c.d (RFC 4291
 * §2.5.5.2), so a client that reaches a dual-stack socket over IPv4 matches
 * an IPv4 prefix, and one comparison covers both families. Parsing is
 * strict: no leading zeros in an IPv4 part, no zone index, no brackets, no
 * port; anything else is rejected, never guessed at.
 */
#ifndef PITH_NETADDR_H
#define PITH_NETADDR_H

#include "core.h"

struct net_addr {
    unsigned char b[16]; /* network order; IPv4 as ::ffff:a.b.c.d */
};

struct net_cidr {
    struct net_addr a; /* host bits zero */
    unsigned bits;     /* 0..128, over the 16-byte form (an IPv4 /n is 96 + n) */
};

/* "192.0.2.1": four decimal parts 0..255 without leading zeros. */
bool net_ip4_parse(struct span s, struct net_addr *out);
/* "2001:db8::1", "::ffff:192.0.2.1": hex groups of 1..4 digits, at most one
 * "::", an IPv4 tail in the last 32 bits. */
bool net_ip6_parse(struct span s, struct net_addr *out);
/* Either form; *v4 (may be NULL) says which text it was. */
bool net_addr_parse(struct span s, struct net_addr *out, bool *v4);

/* True when a is an IPv4-mapped address (an IPv4 client). */
bool net_addr_is_v4(const struct net_addr *a);
void net_addr_from_v4(struct net_addr *out, const unsigned char v4[4]);

/* "10.0.0.0/8", "2001:db8::/32", or one address ("192.0.2.7" = /32, "::1" =
 * /128). Returns 0, NET_CIDR_BAD (not an address or prefix length) or
 * NET_CIDR_HOST_BITS (bits set past the prefix: "10.0.0.1/8" is refused so
 * a typo is not silently widened). */
#define NET_CIDR_BAD       (-1)
#define NET_CIDR_HOST_BITS (-2)
int net_cidr_parse(struct span s, struct net_cidr *out);
bool net_cidr_match(const struct net_cidr *c, const struct net_addr *a);
/* True when a lies in one of list[0..n). */
bool net_cidr_any(const struct net_cidr *list, size_t n, const struct net_addr *a);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * realip.h - the client's address from a list header such as
 * X-Forwarded-For, as a trusted proxy appended it. Each proxy appends the
 * address it received the request from, so reading the list from the right
 * and skipping the proxies we trust, the first address we do not trust is
 * the client (anything further left was written by that client and proves
 * nothing). Several field lines of the header form one list in order (RFC
 * 9110 §5.3).
 *
 * Strict: each element is one IPv4 or IPv6 address in text (no port, no
 * brackets, no "unknown" or obfuscated names) with optional whitespace
 * around it. An element that is not, among those read, makes the whole
 * header ignored (REALIP_BAD): the peer's address stands. Elements left of
 * the one chosen are never looked at.
 */
#ifndef PITH_REALIP_H
#define PITH_REALIP_H

#include "core/http_parse.h"
#include "core/netaddr.h"

enum realip_verdict {
    REALIP_NONE,  /* the peer is not trusted, or no such header: keep the peer */
    REALIP_FOUND, /* *out is the client */
    REALIP_BAD,   /* a malformed element where one was needed: keep the peer */
};

/* Reads the header `name` (case-insensitive) in f[0..n) for a request that
 * came from `peer`. Every address in the list being trusted, the left-most
 * one is the client (the farthest hop known). */
enum realip_verdict realip_pick(const struct http_field *f, size_t n, struct span name,
                                const struct net_cidr *trusted, size_t ntrusted,
                                const struct net_addr *peer, struct net_addr *out);

#endif

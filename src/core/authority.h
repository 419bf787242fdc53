/* SPDX-License-Identifier: MIT */
/*
 * authority.h - the host of a Host field value, strictly, for a Location
 * that pith builds from it (--redirect-http): uri-host [ ":" port ]
 * (RFC 9110 §7.2) where the host is a reg-name of letters, digits, '-' and
 * '.', an IPv4 address, or an IPv6 literal in brackets (hex digits, ':' and
 * '.'). Everything else RFC 3986 would allow (percent-escapes, sub-delims,
 * '_', IPvFuture) is refused: a redirect must name exactly the host the
 * certificates name, nothing that could read differently in a browser.
 */
#ifndef PITH_AUTHORITY_H
#define PITH_AUTHORITY_H

#include "core.h"

/* Copies the host of `host` (without brackets, NUL-terminated) into
 * out[cap] and sets *ipv6 when it was a bracketed literal. Returns its
 * length, or -1 when the value is not such a host with an optional port of
 * 1 to 5 digits, or the host does not fit (cap - 1 bytes at most). */
long authority_host(struct span host, char *out, size_t cap, bool *ipv6);

#endif

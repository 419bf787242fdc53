/* SPDX-License-Identifier: MIT */
/*
 * client_hello.h - the two extensions of a TLS ClientHello that pith reads
 * itself, in OpenSSL's ClientHello callback, before OpenSSL has parsed or
 * checked them (SSL_client_hello_get0_ext gives the client's bytes as they
 * came): the server_name extension, whose host_name picks the site and
 * its certificate (RFC 6066 §3), and the ALPN extension, whose offer of
 * acme-tls/1 makes the handshake a tls-alpn-01 validation (RFC 8737 §3,
 * issue 35). Pure functions over the extension's body, never reading past
 * len; a body that is malformed names nothing and offers nothing (OpenSSL
 * then refuses the hello with its own alert).
 */
#ifndef PITH_CLIENT_HELLO_H
#define PITH_CLIENT_HELLO_H

#include "core.h"

/* The server_name extension's body p[0..len): a ServerNameList (a 16-bit
 * length that covers the rest exactly, then entries of a type byte, a
 * 16-bit length and that many bytes). The first host_name (type 0) entry
 * into *name, pointing into p; false when there is none, it is empty, or
 * an entry before it overruns the list. */
bool client_hello_sni(const unsigned char *p, size_t len, struct span *name);

/* The ALPN extension's body p[0..len): a ProtocolNameList (a 16-bit length
 * that covers the rest exactly, then names of one length byte, 1..255, and
 * that many bytes). True when it is well formed and one of its names is
 * proto, byte for byte. */
bool client_hello_alpn_offers(const unsigned char *p, size_t len, struct span proto);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * h2_conn.h - one HTTP/2 connection (RFC 9113), the second protocol above
 * the transport seam beside HTTP/1 (http1/h1_conn.c). A connection becomes
 * HTTP/2 before its first request: ALPN "h2" on the TLS port, or the 24-byte
 * connection preface on the plain port (h2c by prior knowledge; an
 * `Upgrade: h2c` request stays HTTP/1.1). From then on the connection's
 * protocol is HTTP/2's (h2_proto, a struct conn_proto): nghttp2 (framing, HPACK, flow control)
 * reads the stream's bytes, h2_stream.c turns each stream into the same exchange and handler call
 * HTTP/1 makes, h2_send.c owns the one bounded output buffer every stream's frames are written
 * into and sends it (the pump, the cork), and h2_conn.c owns the session, the timers, the limits
 * the hostile-peer list needs and the graceful drain (docs/DESIGN.md §1, "HTTP/2").
 */
#ifndef PITH_H2_CONN_H
#define PITH_H2_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct worker;
struct conn;
struct settings;

enum h2_entry {
    H2_ENTRY_NO,   /* HTTP/1 */
    H2_ENTRY_MORE, /* a prefix of the preface so far: wait for more bytes */
    H2_ENTRY_YES,  /* HTTP/2: ALPN said so, or the preface is there */
};

#ifdef PITH_TINY
#include "http2/h2_none.h"
#else

#define H2_BUILT true

/* The address space h2_worker_init() reserves per worker (start.c checks
 * it fits, as it does the connection slots); 0 with --http2 off. */
size_t h2_worker_reservation(const struct settings *set);

/* Reserves the worker's HTTP/2 state (a connection record per connection
 * slot, the stream slots, the nghttp2 callbacks and options). 0 or -ENOMEM. */
int h2_worker_init(struct worker *w);
void h2_worker_exit(struct worker *w);

/* Whether c, which has received in[0..n) and no request yet, speaks HTTP/2. */
enum h2_entry h2_entry_check(struct worker *w, struct conn *c, const char *in, size_t n);

/* c becomes HTTP/2 (its protocol is h2_proto from now on): its slot holds
 * c->in_len received bytes (the preface and whatever followed), fed to the
 * session at once. */
void h2_conn_start(struct worker *w, struct conn *c);

#endif
#endif

/* SPDX-License-Identifier: MIT */
/*
 * close.h - why a connection ended: one reason per close, whatever the
 * protocol, counted per worker (its exit line) and in the shared counters
 * (/metrics), and named in both.
 */
#ifndef PITH_CLOSE_H
#define PITH_CLOSE_H

/* Why a connection ended, counted per worker (logged when it exits). */
#define CLOSE_REASON_LIST(X)                                                                       \
    X(CLOSE_PEER, "peer")         /* the client closed */                                          \
    X(CLOSE_ERROR, "error")       /* a socket error or reset */                                    \
    X(CLOSE_DONE, "done")         /* the response ended the connection */                          \
    X(CLOSE_TIMEOUT, "timeout")   /* header, keep-alive or send timeout */                         \
    X(CLOSE_SHUTDOWN, "shutdown") /* the worker is draining */                                     \
    X(CLOSE_OVERFLOW, "overflow") /* pipelined input beyond what may be held */                    \
    X(CLOSE_PROXY, "proxy")       /* a PROXY header untrusted or malformed (client.c) */

#define CLOSE_ENUM(name, text) name,
enum close_reason { CLOSE_REASON_LIST(CLOSE_ENUM) CLOSE_REASONS };
#undef CLOSE_ENUM

/* The reason's name in logs ("peer", "timeout", ...). */
const char *close_reason_name(enum close_reason r);

/* Why an HTTP/3 connection ended (src/http3/, issue 34): QUIC's own ends,
 * counted when the connection's record goes (after its closing or draining
 * period), in the worker's exit line and in /metrics. */
#define H3_CLOSE_LIST(X)                                                                           \
    X(H3_CLOSE_IDLE, "idle")           /* silence, or no request, for --timeout-keepalive */       \
    X(H3_CLOSE_HANDSHAKE, "handshake") /* the handshake did not finish in time or failed */        \
    X(H3_CLOSE_PEER, "peer")           /* the peer closed (CONNECTION_CLOSE, draining) */          \
    X(H3_CLOSE_PROTOCOL, "protocol")   /* a protocol error (ours to report) */                     \
    X(H3_CLOSE_TIMEOUT, "timeout")     /* a request unfinished, or answers not taken, in time */   \
    X(H3_CLOSE_FLOOD, "flood")         /* a budget of the hostile-peer limits was spent */         \
    X(H3_CLOSE_DRAIN, "drain")         /* SIGTERM: GOAWAY, then the streams finished */            \
    X(H3_CLOSE_LIMIT, "limit")         /* over --max-conns-per-client at the handshake's end */    \
    X(H3_CLOSE_INTERNAL, "internal")   /* out of memory, or a library error */

#define CLOSE_ENUM(name, text) name,
enum h3_close { H3_CLOSE_LIST(CLOSE_ENUM) H3_CLOSE_REASONS };
#undef CLOSE_ENUM

const char *h3_close_name(enum h3_close r);

#endif

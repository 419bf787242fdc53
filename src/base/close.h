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

#endif

/* SPDX-License-Identifier: MIT */
/*
 * h3.h - HTTP/3 (RFC 9114) over QUIC (RFC 9000/9001/9002) on the TLS port's
 * UDP twin: what the rest of pith calls. QUIC is ngtcp2's (with its GnuTLS
 * crypto helper), HTTP/3 framing and QPACK are nghttp3's; src/http3/ writes
 * the glue and the policy (docs/DESIGN.md, "HTTP/3").
 *
 * The master binds one UDP socket per worker on the TLS port, all in one
 * SO_REUSEPORT group, makes the secrets every worker shares (stateless
 * reset, tokens) and attaches the classic BPF program that steers a
 * connection's packets to the worker named in its connection ID
 * (h3_prepare). A worker serves its socket from its own loop: the loop
 * calls h3_readable() when the socket has datagrams, the worker's loop asks
 * h3_timeout() how long it may sleep and calls h3_expire() after each wait.
 *
 * Without ngtcp2 and nghttp3 at build time (and in pith-tiny), h3_none.h
 * stands in: H3_BUILT is false, --http3 on exits 2 naming the packages, and
 * nothing here runs.
 */
#ifndef PITH_H3_H
#define PITH_H3_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h> /* socklen_t */

struct server;
struct settings;
struct worker;

/* What --http3 on needs when this build has no HTTP/3 (config.c's message). */
#define H3_PACKAGES                                                                                \
    "ngtcp2 >= 1.11 with its GnuTLS helper and nghttp3 >= 1.8 (Debian: libngtcp2-dev, "            \
    "libngtcp2-crypto-gnutls-dev, libnghttp3-dev; bookworm-backports on Debian 12)"

#if defined(PITH_TINY) || !defined(PITH_HTTP3)
#include "http3/h3_none.h"
#else
#define H3_BUILT true

/* ---- the master ------------------------------------------------------------------- */

/* With HTTP/3 on (set->http3): one UDP socket per worker on the TLS
 * listener's address and port (srv->udp_fds[]), the shared secrets, the
 * steering program. Before forking. 0, or 1 after saying why on stderr. */
int h3_prepare(struct server *srv);
/* For the start line: "HTTP/3 on udp/8443 (GSO)" and the like, or "". */
const char *h3_describe(const struct server *srv);
/* The library versions, for --version ("ngtcp2 1.11.0, nghttp3 1.8.0"). */
const char *h3_versions(void);
/* Whether UDP can bind addr (with its port) as h3_prepare will: for a TLS
 * port the kernel picked (--tls-port 0), whose number UDP needs too. */
bool h3_udp_port_free(const struct sockaddr_storage *addr, socklen_t len);

/* ---- a worker ---------------------------------------------------------------------- */

/* Address space h3_worker_init() reserves per worker (start.c checks it). */
size_t h3_worker_reservation(const struct settings *set);
/* Reserves the worker's HTTP/3 state and builds its TLS credentials from
 * the certificates the master published; before the sandbox. 0 or -1. */
int h3_worker_init(struct worker *w);
void h3_worker_exit(struct worker *w);
/* The loop saw datagrams on w->udp_fd: receive them all (in batches) and
 * send what the connections have to send. */
void h3_readable(struct worker *w);
/* One datagram the io_uring loop received itself (m: its source, control
 * messages and flags); what it calls for is sent at h3_expire(). */
void h3_datagram(struct worker *w, const struct msghdr *m, uint8_t *p, size_t n);
/* Milliseconds until the earliest QUIC timer (loss detection, ACK delay,
 * pacing, idle), at most t (t < 0: no limit). */
int h3_timeout(const struct worker *w, int t);
/* After each wait: sends what the datagrams handed over one by one call
 * for, runs the timers that came due, sends what is due. */
void h3_expire(struct worker *w);
/* SIGTERM: GOAWAY on every connection; in-flight streams finish. */
void h3_drain(struct worker *w);
/* Open HTTP/3 connections (the drain waits for them). */
unsigned h3_active(const struct worker *w);
/* SIGHUP: new handshakes use the certificates the master published last. */
void h3_worker_reload(struct worker *w);
/* The exit summary line (connections, streams, closes by reason). */
void h3_worker_report(const struct worker *w);
#endif

#endif

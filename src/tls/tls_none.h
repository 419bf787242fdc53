/* SPDX-License-Identifier: MIT */
/*
 * tls_none.h - tls.h for pith-tiny, which leaves HTTPS out: the calls the
 * shared code makes (the master's tick and reload, a worker's start, HUP,
 * loop and exit) as inline no-ops, so tiny carries no TLS code at all. They
 * are only reached with srv->tls NULL and no TLS listener, as in the full
 * build without --tls-cert.
 */
#ifndef PITH_TLS_NONE_H
#define PITH_TLS_NONE_H

#include "core/core.h"
#include "event/transport.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Nothing of HTTPS is built: the shared start-up (src/cli/start.c) tests
 * this before each TLS step, so the compiler drops them all, and the three
 * functions below are never reached (set->ntls is always 0). */
#define TLS_BUILT false

static inline struct tls_server *tls_server_new(const struct settings *set, char *err, size_t cap)
{
    (void)set, (void)err, (void)cap;
    return NULL;
}
static inline void tls_server_acme(struct tls_server *ts, struct acme_shared *sh)
{
    (void)ts, (void)sh;
}
static inline const char *tls_server_path(const struct tls_server *ts)
{
    (void)ts;
    return "";
}
static inline size_t tls_worker_reservation(unsigned max_conns)
{
    (void)max_conns;
    return 0;
}
static inline void tls_server_tick(struct tls_server *ts, int64_t now)
{
    (void)ts, (void)now;
}
static inline int tls_server_reload(struct tls_server *ts, const struct settings *set)
{
    (void)ts, (void)set;
    return 0;
}
static inline void tls_server_forget(struct tls_server *ts)
{
    (void)ts;
}

static inline void tls_server_free(struct tls_server *ts)
{
    (void)ts;
}
static inline int tls_worker_init(struct worker *w)
{
    (void)w;
    return 0;
}
static inline int tls_conn_start(struct worker *w, struct conn *c)
{
    (void)w, (void)c;
    return 0;
}
static inline void tls_run_ready(struct worker *w)
{
    (void)w;
}
static inline bool tls_has_ready(const struct worker *w)
{
    (void)w;
    return false;
}
static inline void tls_worker_reload(struct worker *w)
{
    (void)w;
}
static inline void tls_worker_report(const struct worker *w)
{
    (void)w;
}
static inline void tls_worker_exit(struct worker *w)
{
    (void)w;
}
/* No certificate, no TLS connection. */
static inline int tls_choose_ctx(const struct tls_server *ts, unsigned site, const char *host)
{
    (void)ts, (void)site, (void)host;
    return 0;
}
static inline bool tls_conn_alpn_h2(const struct worker *w, const struct conn *c)
{
    (void)w, (void)c;
    return false;
}
static inline int tls_conn_ctx(const struct worker *w, const struct conn *c)
{
    (void)w, (void)c;
    return -1;
}
static inline const char *tls_conn_version(const struct worker *w, const struct conn *c)
{
    (void)w, (void)c;
    return NULL;
}
/* --redirect-http is refused in pith-tiny. */
static inline bool tls_names_host(const struct tls_server *ts, const char *host)
{
    (void)ts, (void)host;
    return false;
}
/* No connection is ever accepted on a TLS listener (there is none), so
 * worker_accepted()'s choice of transport is always the plain one. */
#define transport_tls transport_plain

#endif

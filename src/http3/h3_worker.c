/* SPDX-License-Identifier: MIT */
/*
 * h3_worker.c - HTTP/3's place in the processes: the master's preparation
 * (the UDP group on the TLS port, the shared secrets, the steering
 * program), and a worker's state and the entry points its loop calls
 * (datagrams, timers, drain, reload): the top of src/http3, calling down
 * into the others, called by none of them. What is due (a connection's
 * timer, its flush) is kept by h3_sched.c, which the lower files mark, and
 * acted on here.
 */
#include "http3/h3_internal.h"

#include "base/log.h"
#include "base/pool.h"
#include "base/server.h"
#include "base/worker.h"
#include "core/bytes.h"
#include "sys/sys.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ---- the master ----------------------------------------------------------------------- */

const char *h3_versions(void)
{
    static char v[96];
    const ngtcp2_info *q = ngtcp2_version(0);
    const nghttp3_info *h = nghttp3_version(0);
    snprintf(v, sizeof v, "ngtcp2 %s, nghttp3 %s, GnuTLS %s", q->version_str, h->version_str,
             gnutls_check_version(NULL));
    return v;
}

const char *h3_describe(const struct server *srv)
{
    if (!srv->set.http3 || !srv->h3)
        return "; no HTTP/3: --http3 off";
    return srv->h3->describe;
}

int h3_prepare(struct server *srv)
{
    struct settings *set = &srv->set;
    if (!set->http3 || !srv->tls) {
        set->http3 = false;
        return 0; /* an upgrade's steering map stays for the next one (h3_bpf.c) */
    }
    if (srv->tls_listen_addr.ss_family != AF_INET && srv->tls_listen_addr.ss_family != AF_INET6) {
        /* Inherited TLS sockets (systemd): no address of ours to bind UDP on. */
        fprintf(stderr, "pith: HTTP/3 is off: the TLS listener was inherited\n");
        set->http3 = false;
        return 0;
    }
    struct h3_server *h = sys_map(sizeof *h);
    if (!h || h3_secrets_make(h) < 0) {
        fprintf(stderr, "pith: HTTP/3: cannot make the shared secrets\n");
        return 1;
    }
    int r = h3_udp_bind(&srv->tls_listen_addr, srv->tls_listen_len, srv->udp_fds, srv->nlisten);
    if (r < 0) {
        fprintf(stderr, "pith: HTTP/3: cannot bind UDP port %u: %s\n", srv->tls_port,
                strerrordesc_np(-r));
        return 1;
    }
    /* The master attaches the steering program before any worker exists
     * (and before the sandbox): one program for the whole group. */
    if ((r = h3_bpf_steer(srv, h)) < 0) {
        fprintf(stderr, "pith: HTTP/3: cannot attach the steering program: %s\n",
                strerrordesc_np(-r));
        return 1;
    }
    h->port = srv->tls_port;
    h->gso = h3_udp_probe_gso(srv->udp_fds[0]) == 0;
    /* No parentheses or commas: the start line's parentheses hold it. */
    char steering[96] = " and eBPF steering";
    if (!h->ebpf)
        snprintf(steering, sizeof steering, " and classic BPF steering: eBPF refused: %s",
                 strerrordesc_np(h->ebpf_errno));
    snprintf(h->describe, sizeof h->describe, "; HTTP/3 on udp/%u %s%s%s", h->port,
             h->gso ? "with GSO" : "without GSO", steering,
             set->h3_retry ? " and Retry always" : "");
    snprintf(set->alt_svc, sizeof set->alt_svc, "h3=\":%u\"; ma=%u", h->port,
             set->h3_alt_svc_max_age);
    srv->h3 = h;
    return 0;
}

/* Connections or streams enough gone to leave malloc's free lists with
 * pages worth giving back. */
static bool heap_surplus(const struct h3_worker *hw)
{
    return hw->trim_peak >= hw->active + H3_TRIM_CONNS || hw->streams_gone >= H3_TRIM_STREAMS;
}

/* A trim is due (the heap's surplus, free slots or chunks past those kept
 * warm), perhaps later. */
static bool trim_due(const struct h3_worker *hw)
{
    return heap_surplus(hw) || h3_streams_surplus(hw);
}

int h3_timeout(const struct worker *w, int t)
{
    const struct h3_worker *hw = w->h3;
    if (!hw)
        return t;
    uint64_t at = h3_heap_first(hw);
    if (at == UINT64_MAX && !trim_due(hw))
        return t;
    if (trim_due(hw) && hw->trim_at < at)
        at = hw->trim_at;
    uint64_t now = h3_clock();
    int ms = at <= now ? 0 : (int)((at - now + 999999) / 1000000);
    return t < 0 || ms < t ? ms : t;
}

/* What ngtcp2, nghttp3 and GnuTLS held for connections and streams now
 * gone stays in malloc's free lists, resident, until the heap is trimmed:
 * once H3_TRIM_CONNS connections went since the peak (a burst of
 * handshakes, a flood, the evening) or H3_TRIM_STREAMS streams since the
 * last trim (after a Rapid Reset of a thousand streams on one connection
 * the worker held 1.6 to 1.9 MiB more in three runs of four, against
 * 0.8 for its warm slots and chunks); free stream slots and
 * chunks past those kept warm give their pages back too. At most once a
 * second, so steady work pays one malloc_trim a second. */
static void maybe_trim(struct h3_worker *hw)
{
    if (!trim_due(hw) || hw->now_ns < hw->trim_at)
        return;
    if (heap_surplus(hw))
        sys_heap_trim();
    h3_streams_trim(hw);
    hw->trim_peak = hw->active;
    hw->streams_gone = 0;
    hw->trim_at = hw->now_ns + NGTCP2_SECONDS;
}

static void flush_dirty(struct h3_worker *hw)
{
    struct h3_conn *hc;
    while ((hc = h3_dirty_next(hw)) != NULL)
        if (hc->in_use)
            h3_conn_flush(hc);
}

void h3_expire(struct worker *w)
{
    struct h3_worker *hw = w->h3;
    if (!hw)
        return;
    flush_dirty(hw); /* the answers to datagrams the io_uring loop handed over */
    h3_clock_read(hw);
    /* Each timer is handled once per pass: one that rearms at once (a
     * pacing step) waits for the next wake-up rather than spin here. */
    for (uint32_t n = hw->heap_n; n; n--) {
        struct h3_conn *hc = h3_heap_due(hw);
        if (!hc)
            break;
        h3_conn_timer(hc);
    }
    maybe_trim(hw);
}

/* ---- a worker ----------------------------------------------------------------------------- */

void h3_datagram(struct worker *w, const struct msghdr *m, uint8_t *p, size_t n)
{
    struct h3_worker *hw = w->h3;
    struct h3_path path;
    if (!hw || !h3_udp_path(hw, m, &path))
        return;
    h3_clock_read(hw);
    h3_accept_datagram(hw, p, n, &path);
}

void h3_readable(struct worker *w)
{
    struct h3_worker *hw = w->h3;
    if (!hw)
        return;
    h3_clock_read(hw);
    /* A bounded number of batches per wake-up, so TCP connections are not
     * starved by a flood; level-triggered readiness brings us back. */
    for (int i = 0; i < 16; i++) {
        int n = h3_udp_recv(hw, h3_accept_datagram);
        flush_dirty(hw);
        if (n < H3_RECV_BATCH)
            break;
    }
}

size_t h3_worker_reservation(const struct settings *set)
{
    if (!set->http3)
        return 0;
    size_t slots = (size_t)set->max_conns * H3_MAX_STREAMS;
    if (slots > H3_STREAM_SLOTS_MAX)
        slots = H3_STREAM_SLOTS_MAX;
    return (size_t)set->max_conns * (sizeof(struct h3_conn) + 2 * sizeof(void *) + 64) +
           slots * POOL_SLOT_SIZE + (size_t)H3_CHUNKS * (H3_CHUNK + sizeof(uint16_t));
}

int h3_worker_init(struct worker *w)
{
    w->h3 = NULL;
    if (w->udp_fd < 0)
        return 0;
    struct h3_worker *hw = sys_map(sizeof *hw);
    if (!hw)
        return -1;
    hw->w = w;
    hw->srv = w->srv->h3;
    hw->fd = w->udp_fd;
    hw->nconns = w->set->max_conns;
    hw->conns = sys_map((size_t)hw->nconns * sizeof *hw->conns);
    /* Each connection maps its client's first DCID and a few of ours. */
    hw->map = h3_cidmap_new(hw->nconns * 8);
    hw->io = h3_io_new();
    hw->tx = sys_map((size_t)H3_GSO_MAX * H3_MAX_UDP_PAYLOAD);
    if (!hw->conns || !hw->map || !hw->io || !hw->tx || h3_sched_init(hw) < 0 ||
        h3_streams_init(hw) < 0)
        return -1;
    h3_conn_callbacks(&hw->qcb);
    h3_http_callbacks(&hw->hcb);
    w->h3 = hw;
    hw->tls = h3_tls_new(w);
    if (!hw->tls)
        return -1;
    h3_clock_read(hw);
    return 0;
}

void h3_worker_exit(struct worker *w)
{
    struct h3_worker *hw = w->h3;
    if (!hw)
        return;
    h3_conn_free_all(hw);
    h3_tls_free(hw->tls);
    h3_cidmap_free(hw->map);
    h3_io_free(hw->io);
    h3_streams_exit(hw);
    w->h3 = NULL;
}

void h3_drain(struct worker *w)
{
    struct h3_worker *hw = w->h3;
    if (!hw)
        return;
    hw->draining = true;
    h3_clock_read(hw);
    for (uint32_t i = 0; i < hw->next_unused; i++) {
        struct h3_conn *hc = &hw->conns[i];
        if (!hc->in_use || hc->closing || hc->draining)
            continue;
        if (hc->hc && !hc->goaway) {
            /* RFC 9114 §5.2: GOAWAY with the next stream id; the streams
             * below it finish, then the connection closes (h3_conn.c). */
            nghttp3_conn_submit_shutdown_notice(hc->hc);
            nghttp3_conn_shutdown(hc->hc);
            hc->goaway = true;
        }
        if (!hc->hc || hc->nstreams == 0)
            h3_conn_close_app(hc, NGHTTP3_H3_NO_ERROR, H3_CLOSE_DRAIN);
        else
            h3_conn_flush(hc);
    }
}

unsigned h3_active(const struct worker *w)
{
    return w->h3 ? w->h3->active : 0;
}

void h3_worker_reload(struct worker *w)
{
    if (w->h3)
        h3_tls_reload(w, &w->h3->tls);
}

/* "worker 0 HTTP/3: connections=3 streams=9 retries=0 ... closed: idle=1 ..." */
void h3_worker_report(const struct worker *w)
{
    const struct h3_worker *hw = w->h3;
    if (!hw)
        return;
    char line[512];
    struct buf b = buf_make(line, sizeof line - 1);
    buf_put_cstr(&b, "worker ");
    buf_put_u64(&b, w->index);
    buf_put_cstr(&b, " HTTP/3: connections=");
    buf_put_u64(&b, hw->n_conns);
    buf_put_cstr(&b, " streams=");
    buf_put_u64(&b, hw->n_streams);
    buf_put_cstr(&b, " retries=");
    buf_put_u64(&b, hw->n_retries);
    buf_put_cstr(&b, " resets=");
    buf_put_u64(&b, hw->n_resets);
    buf_put_cstr(&b, " migrations=");
    buf_put_u64(&b, hw->n_migrations);
    buf_put_cstr(&b, " closed:");
    for (unsigned i = 0; i < H3_CLOSE_REASONS; i++) {
        buf_put_char(&b, ' ');
        buf_put_cstr(&b, h3_close_name((enum h3_close)i));
        buf_put_char(&b, '=');
        buf_put_u64(&b, hw->closes[i]);
    }
    line[b.full ? 0 : b.len] = '\0';
    log_error(line);
}

/* SPDX-License-Identifier: MIT */
/*
 * status.c - the --status process. Who answers /metrics and /healthz is a
 * design choice; it is this process, for three reasons:
 *   - not the master: it keeps root to restart workers, so it parses no
 *     byte from the network (a parser bug there would be a root bug), and
 *     its loop waits on signals and children, never on sockets;
 *   - not a worker: a worker's death, a worker stuck on a huge listing, or
 *     a worker draining would take the answers with it; /healthz must still
 *     say 503 while every worker drains, and the workers' loops stay as
 *     they are (no second listener on the hot path);
 *   - the counters need no asking: every worker writes its own block of a
 *     MAP_SHARED region the master mapped before forking, so summing is a
 *     read of that memory, and the master writes start time, restarts and
 *     the draining flag there.
 * It drops to --user like the workers, takes at most STATUS_CONNS
 * connections at a time (when full, a new one takes the slot of the oldest
 * not yet answered: slot_for_new), gives each STATUS_DEADLINE_MS in all, parses
 * requests with the same strict parser as the public port (no Host needed:
 * health checkers often send none), answers once and closes. Its answers
 * are not in the access log (a scrape every few seconds would drown it).
 */
#include "process/status.h"

#include "base/log.h"
#include "base/stats.h"
#include "core/bytes.h"
#include "core/http_parse.h"
#include "core/respond.h"
#include "http3/h3.h" /* H3_BUILT */
#include "process/lockdown.h"
#include "sys/sys.h"
#include "testhook/testhook.h"
#include "tls/tls.h"

#include <errno.h>
#include <signal.h>
#include <sys/epoll.h>

#define STATUS_CONNS       16
#define STATUS_IN          4096
#define STATUS_OUT         (48 * 1024) /* /metrics with 64 sites of long names fits */
#define STATUS_DEADLINE_MS 3000
#define TAG_LISTEN         ((uint64_t)STATUS_CONNS)
#define TAG_SIGNAL         ((uint64_t)STATUS_CONNS + 1)

struct status_conn {
    int fd; /* -1: free */
    int64_t deadline;
    size_t in_len, out_len, out_off;
    bool writing;
    bool lingering; /* answered and shut: reading until the client closes */
    char in[STATUS_IN];
    char out[STATUS_OUT];
};

struct status {
    const struct server *srv;
    int epfd, sigfd;
    bool listening;
    struct http_request req;
    struct status_conn c[STATUS_CONNS];
};

/* ---- /metrics ----------------------------------------------------------------- */

static void metric_head(struct buf *b, const char *name, const char *type, const char *help)
{
    buf_put_cstr(b, "# HELP ");
    buf_put_cstr(b, name);
    buf_put_char(b, ' ');
    buf_put_cstr(b, help);
    buf_put_cstr(b, "\n# TYPE ");
    buf_put_cstr(b, name);
    buf_put_char(b, ' ');
    buf_put_cstr(b, type);
    buf_put_char(b, '\n');
}

static void metric(struct buf *b, const char *name, const char *labels, uint64_t v)
{
    buf_put_cstr(b, name);
    if (labels) {
        buf_put_char(b, '{');
        buf_put_cstr(b, labels);
        buf_put_char(b, '}');
    }
    buf_put_char(b, ' ');
    buf_put_u64(b, v);
    buf_put_char(b, '\n');
}

/* A metric with one label whose value comes from a fixed table. */
static void metric1(struct buf *b, const char *name, const char *label, const char *value,
                    uint64_t v)
{
    char labels[320]; /* a site's name may be 253 bytes */
    struct buf l = buf_make(labels, sizeof labels - 1);
    buf_put_cstr(&l, label);
    buf_put_cstr(&l, "=\"");
    buf_put_cstr(&l, value);
    buf_put_char(&l, '"');
    labels[l.full ? 0 : l.len] = '\0';
    metric(b, name, labels, v);
}

/* Sums one counter (at byte offset off of struct stats_worker) over every
 * slot: slots that never ran a worker hold zeros. */
static uint64_t sum(const struct server *srv, size_t off)
{
    uint64_t t = 0;
    for (unsigned i = 0; i < srv->set.workers; i++)
        t += stats_get((const uint64_t *)(const void *)((const char *)&srv->stats->w[i] + off));
    return t;
}

#define SUM(srv, field) sum((srv), offsetof(struct stats_worker, field))

/* HTTPS: only where it is served (pith-tiny never has these families). */
static void put_tls(const struct server *srv, struct buf *b)
{
    if (srv->set.ntls == 0)
        return;
    metric_head(b, "pith_tls_handshakes_total", "counter",
                "TLS handshakes, by result (a connection that sent nothing is no handshake).");
    metric1(b, "pith_tls_handshakes_total", "result", "ok", SUM(srv, tls_handshakes));
    metric1(b, "pith_tls_handshakes_total", "result", "failed", SUM(srv, tls_failed));
    metric_head(b, "pith_tls_plain_http_total", "counter",
                "Plain HTTP requests on the TLS port (answered with a plain 400).");
    metric(b, "pith_tls_plain_http_total", NULL, SUM(srv, tls_plain_http));
    metric_head(b, "pith_tls_connections_total", "counter",
                "TLS connections after their handshake, by data path.");
    metric1(b, "pith_tls_connections_total", "path", "kernel", SUM(srv, tls_ktls));
    metric1(b, "pith_tls_connections_total", "path", "userspace", SUM(srv, tls_userspace));
}

/* Responses per site, labelled with the site's first name (or "default"):
 * a label set fixed at start, never a value from a request. */
/* HTTP/2 (issue 20): present in every build, zero where it is off. */
static void put_h2(const struct server *srv, struct buf *b)
{
    metric_head(b, "pith_h2_connections_total", "counter", "Connections that spoke HTTP/2.");
    metric(b, "pith_h2_connections_total", NULL, SUM(srv, h2_conns));
    metric_head(b, "pith_h2_streams_total", "counter", "HTTP/2 streams opened by clients.");
    metric(b, "pith_h2_streams_total", NULL, SUM(srv, h2_streams));
    metric_head(b, "pith_h2_resets_total", "counter",
                "HTTP/2 RST_STREAM frames, by who sent them.");
    metric1(b, "pith_h2_resets_total", "by", "client", SUM(srv, h2_resets_recv));
    metric1(b, "pith_h2_resets_total", "by", "server", SUM(srv, h2_resets_sent));
    metric_head(b, "pith_h2_glitches_total", "counter",
                "HTTP/2 frames that did no work (empty DATA, PRIORITY, unknown, malformed).");
    metric(b, "pith_h2_glitches_total", NULL, SUM(srv, h2_glitches));
    metric_head(b, "pith_h2_goaways_total", "counter", "HTTP/2 GOAWAY frames sent, by error code.");
    for (unsigned r = 0; r < STATS_H2_GOAWAY_REASONS; r++)
        metric1(b, "pith_h2_goaways_total", "code", stats_h2_goaway_name((enum stats_h2_goaway)r),
                SUM(srv, h2_goaways[r]));
}

/* HTTP/3 (issue 34): only where it is served (--http3 on, with TLS); not
 * built into pith-tiny, which has no HTTP/3. */
static void put_h3(const struct server *srv, struct buf *b)
{
    if (!H3_BUILT || !srv->set.http3)
        return;
    metric_head(b, "pith_h3_connections_total", "counter", "QUIC connections accepted.");
    metric(b, "pith_h3_connections_total", NULL, SUM(srv, h3_conns));
    metric_head(b, "pith_h3_open_connections", "gauge", "QUIC connections open now.");
    metric(b, "pith_h3_open_connections", NULL, SUM(srv, h3_open));
    metric_head(b, "pith_h3_streams_total", "counter", "HTTP/3 request streams opened by clients.");
    metric(b, "pith_h3_streams_total", NULL, SUM(srv, h3_streams));
    metric_head(b, "pith_h3_packets_sent_total", "counter",
                "Stateless QUIC packets sent, by kind (Retry, stateless reset, Version "
                "Negotiation).");
    metric1(b, "pith_h3_packets_sent_total", "kind", "retry", SUM(srv, h3_retries));
    metric1(b, "pith_h3_packets_sent_total", "kind", "stateless_reset", SUM(srv, h3_resets));
    metric1(b, "pith_h3_packets_sent_total", "kind", "version_negotiation", SUM(srv, h3_vn));
    metric_head(b, "pith_h3_tokens_total", "counter", "NEW_TOKEN tokens sent to clients.");
    metric(b, "pith_h3_tokens_total", NULL, SUM(srv, h3_tokens));
    metric_head(b, "pith_h3_migrations_total", "counter",
                "Client addresses that changed and were validated (RFC 9000 §9).");
    metric(b, "pith_h3_migrations_total", NULL, SUM(srv, h3_migrations));
    metric_head(b, "pith_h3_glitches_total", "counter",
                "HTTP/3 events that did no work (resets before an answer, empty STREAM frames, "
                "malformed requests).");
    metric(b, "pith_h3_glitches_total", NULL, SUM(srv, h3_glitches));
    metric_head(b, "pith_h3_connections_closed_total", "counter",
                "QUIC connections ended, by reason.");
    for (unsigned r = 0; r < H3_CLOSE_REASONS; r++)
        metric1(b, "pith_h3_connections_closed_total", "reason", h3_close_name((enum h3_close)r),
                SUM(srv, h3_closes[r]));
}

static void put_sites(const struct server *srv, struct buf *b)
{
    metric_head(b, "pith_site_requests_total", "counter",
                "Responses sent, by site (its first name; default: the site without one).");
    for (unsigned i = 0; i < srv->set.nsites; i++)
        metric1(b, "pith_site_requests_total", "site", srv->set.sites[i].label,
                SUM(srv, site_requests[i]));
}

void status_metrics(const struct server *srv, struct buf *b)
{
    static const char *const classes[STATS_CLASSES] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
    static const char *const methods[STATS_METHODS] = {"GET", "HEAD", "OPTIONS", "other"};
    metric_head(b, "pith_requests_total", "counter",
                "Responses sent, by status class and request method.");
    for (unsigned k = 0; k < STATS_CLASSES; k++)
        for (unsigned m = 0; m < STATS_METHODS; m++) {
            char labels[48];
            struct buf l = buf_make(labels, sizeof labels - 1);
            buf_put_cstr(&l, "class=\"");
            buf_put_cstr(&l, classes[k]);
            buf_put_cstr(&l, "\",method=\"");
            buf_put_cstr(&l, methods[m]);
            buf_put_char(&l, '"');
            labels[l.len] = '\0';
            metric(b, "pith_requests_total", labels, SUM(srv, requests[k][m]));
        }
    metric_head(b, "pith_sent_bytes_total", "counter",
                "Bytes of response heads and bodies handed to the kernel.");
    metric(b, "pith_sent_bytes_total", NULL, SUM(srv, sent_bytes));
    metric_head(b, "pith_open_connections", "gauge", "Client connections open now.");
    metric(b, "pith_open_connections", NULL, SUM(srv, open_conns));
    metric_head(b, "pith_cache_hits_total", "counter", "File cache lookups answered from memory.");
    metric(b, "pith_cache_hits_total", NULL, SUM(srv, cache_hits));
    metric_head(b, "pith_cache_misses_total", "counter",
                "File cache lookups that opened the file.");
    metric(b, "pith_cache_misses_total", NULL, SUM(srv, cache_misses));
    metric_head(b, "pith_connections_closed_total", "counter", "Connections ended, by reason.");
    for (unsigned r = 0; r < CLOSE_REASONS; r++)
        metric1(b, "pith_connections_closed_total", "reason",
                close_reason_name((enum close_reason)r), SUM(srv, closes[r]));
    metric_head(b, "pith_client_address_total", "counter",
                "What the PROXY header and the real-IP header decided.");
    for (unsigned e = 0; e < STATS_CLIENT_EVENTS; e++)
        metric1(b, "pith_client_address_total", "decision", stats_client_name((enum stats_client)e),
                SUM(srv, client[e]));
    put_tls(srv, b);
    put_h2(srv, b);
    put_h3(srv, b);
    put_sites(srv, b);
    metric_head(b, "pith_client_limit_total", "counter",
                "Connections refused for a client over --max-conns-per-client.");
    metric(b, "pith_client_limit_total", NULL, SUM(srv, client_limited));
    if (srv->set.nauth) {
        metric_head(b, "pith_auth_total", "counter",
                    "Requests under a password, by what basic auth decided.");
        for (unsigned e = 0; e < STATS_AUTH_RESULTS; e++)
            metric1(b, "pith_auth_total", "result", stats_auth_name((enum stats_auth)e),
                    SUM(srv, auth[e]));
    }
    metric_head(b, "pith_workers_up", "gauge", "Worker processes accepting connections.");
    metric(b, "pith_workers_up", NULL, SUM(srv, up));
    metric_head(b, "pith_worker_restarts_total", "counter", "Workers the master replaced.");
    metric(b, "pith_worker_restarts_total", NULL, stats_get(&srv->stats->restarts));
    metric_head(b, "pith_draining", "gauge", "1 once a graceful stop began.");
    metric(b, "pith_draining", NULL, stats_get(&srv->stats->draining));
    metric_head(b, "pith_start_time_seconds", "gauge", "When the master started, in Unix time.");
    metric(b, "pith_start_time_seconds", NULL, (uint64_t)srv->stats->start_time);
}

/* ---- answering -------------------------------------------------------------------- */

/* /healthz's body: NULL while the server takes requests (not draining, a
 * worker up), else why not, so that whoever reads a 503 knows which. */
static const char *unhealthy(const struct server *srv)
{
    if (stats_get(&srv->stats->draining))
        return "draining\n";
    return SUM(srv, up) > 0 ? NULL : "no worker up\n";
}

/* The response for a parsed request (r > 0) or a parse error (r < 0). */
/* A test build's request (testhook.h): its status, its log line; 404
 * for any other path. */
static int test_request(struct span path)
{
    struct testhook_answer a;
    if (!testhook_status_request(path, &a))
        return 404;
    if (a.opened && a.open_err)
        log_error_errno("test hook: open outside the root", a.opened, a.open_err);
    else if (a.opened)
        log_error3("test hook: opened ", a.opened, " outside the root");
    return a.status;
}

static void answer(struct status *st, struct status_conn *c, long r)
{
    const struct server *srv = st->srv;
    struct http_request *req = &st->req;
    char body[STATUS_OUT - 512];
    struct buf bb = buf_make(body, sizeof body);
    int status = 200;
    const char *type = "text/plain; charset=utf-8";
    bool head_only = false;
    if (r < 0) {
        status = (int)-r;
    } else {
        struct span path = req->target;
        path.n = mem_find(path.p, path.n, '?');
        head_only = req->method_id == HTTP_METHOD_HEAD;
        if (req->method_id != HTTP_METHOD_GET && !head_only) {
            status = 405;
        } else if (span_eq_cstr(path, "/metrics")) {
            type = "text/plain; version=0.0.4; charset=utf-8";
            status_metrics(srv, &bb);
        } else if (span_eq_cstr(path, "/healthz")) {
            const char *why = unhealthy(srv);
            status = why ? 503 : 200;
            buf_put_cstr(&bb, why ? why : "ok\n");
        } else {
            status = test_request(path);
        }
    }
    if (status >= 400 && status != 503) {
        buf_put_span(&bb, respond_reason(status));
        buf_put_char(&bb, '\n');
    }
    struct buf o = buf_make(c->out, sizeof c->out);
    respond_status_line(&o, status);
    respond_field_cstr(&o, "Server", SERVER_NAME);
    respond_field_cstr(&o, "Content-Type", type);
    respond_field_u64(&o, "Content-Length", bb.full ? 0 : bb.len);
    respond_field_cstr(&o, "Cache-Control", "no-store");
    if (status == 405)
        respond_field_cstr(&o, "Allow", "GET, HEAD");
    respond_field_cstr(&o, "Connection", "close");
    respond_end_head(&o);
    if (!head_only && !bb.full)
        buf_put(&o, body, bb.len);
    PITH_ASSERT(!o.full);
    c->out_len = o.len;
    c->out_off = 0;
    c->writing = true;
}

static void conn_end(struct status *st, struct status_conn *c)
{
    sys_close(c->fd); /* also leaves the epoll set */
    c->fd = -1;
    if (!st->listening) {
        sys_epoll_ctl(st->epfd, EPOLL_CTL_ADD, st->srv->status_fd, EPOLLIN, TAG_LISTEN);
        st->listening = true;
    }
}

/* Closing with request bytes unread would make the kernel reset the
 * connection and drop what of the answer it has not sent yet (RFC 9112
 * §9.6): our side is shut, and what the client still sends is read and
 * dropped until it closes, as the workers do, within the connection's
 * STATUS_DEADLINE_MS (a lingering client holds its slot no longer). */
static void linger(struct status *st, struct status_conn *c)
{
    sys_shutdown_write(c->fd);
    c->lingering = true;
    sys_epoll_ctl(st->epfd, EPOLL_CTL_MOD, c->fd, EPOLLIN, (uint64_t)(c - st->c));
}

/* Up to 16 KiB a wake-up; the end of the client's stream (or an error)
 * ends the connection. */
static void drain(struct status *st, struct status_conn *c)
{
    for (int i = 0; i < 4; i++) {
        ssize_t n = sys_recv(c->fd, c->in, sizeof c->in);
        if (n == -EAGAIN || n == -EINTR)
            return;
        if (n <= 0) {
            conn_end(st, c);
            return;
        }
    }
}

static void on_conn(struct status *st, struct status_conn *c)
{
    if (c->lingering) {
        drain(st, c);
        return;
    }
    if (!c->writing) {
        ssize_t n = sys_recv(c->fd, c->in + c->in_len, sizeof c->in - c->in_len);
        if (n == -EAGAIN || n == -EINTR)
            return;
        if (n <= 0) {
            conn_end(st, c);
            return;
        }
        c->in_len += (size_t)n;
        long r = http_parse_request(c->in, c->in_len, &st->req);
        if (r == HTTP_PARSE_AGAIN && c->in_len < sizeof c->in)
            return;
        answer(st, c, r == HTTP_PARSE_AGAIN ? -431 : r);
        sys_epoll_ctl(st->epfd, EPOLL_CTL_MOD, c->fd, EPOLLOUT, (uint64_t)(c - st->c));
    }
    while (c->out_off < c->out_len) {
        ssize_t n = sys_send(c->fd, c->out + c->out_off, c->out_len - c->out_off, false);
        if (n == -EAGAIN)
            return;
        if (n <= 0) {
            conn_end(st, c);
            return;
        }
        c->out_off += (size_t)n;
    }
    linger(st, c);
}

/* The slot for a new connection: a free one, else that of the oldest
 * connection still waiting for its request, else that of the oldest one
 * answered and lingering (its answer is with the kernel already). Anyone
 * who reaches the port could otherwise keep every slot with silent (or
 * never-closing) connections for their whole deadline, and /healthz from
 * the orchestrator with them; this way a connection that sends its request
 * at once, as a health checker does, is answered unless STATUS_CONNS newer
 * connections arrive before its request is read. A connection whose answer
 * is still being sent (more than the socket buffer takes) is never taken;
 * NULL when every slot has one, and then accepting waits. */
static struct status_conn *slot_for_new(struct status *st, bool *taken)
{
    struct status_conn *idle = NULL, *lingering = NULL;
    for (unsigned i = 0; i < STATUS_CONNS; i++) {
        struct status_conn *c = &st->c[i];
        if (c->fd < 0) {
            *taken = false;
            return c;
        }
        struct status_conn **oldest = c->lingering ? &lingering : !c->writing ? &idle : NULL;
        if (oldest && (!*oldest || c->deadline < (*oldest)->deadline))
            *oldest = c;
    }
    *taken = true;
    return idle ? idle : lingering;
}

static void on_accept(struct status *st, int64_t now)
{
    for (;;) {
        bool taken;
        struct status_conn *c = slot_for_new(st, &taken);
        if (!c) {
            /* Every slot is sending: stop accepting until one ends. */
            sys_epoll_ctl(st->epfd, EPOLL_CTL_DEL, st->srv->status_fd, 0, 0);
            st->listening = false;
            return;
        }
        int fd = sys_accept(st->srv->status_fd, NULL);
        if (fd < 0)
            return;
        if (taken)
            conn_end(st, c); /* the oldest idle one gives way */
        c->fd = fd;
        c->deadline = now + STATUS_DEADLINE_MS;
        c->in_len = c->out_len = c->out_off = 0;
        c->writing = c->lingering = false;
        sys_epoll_ctl(st->epfd, EPOLL_CTL_ADD, fd, EPOLLIN, (uint64_t)(c - st->c));
    }
}

static int status_init(struct status *st, const struct server *srv)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};
    st->srv = srv;
    for (unsigned i = 0; i < STATUS_CONNS; i++)
        st->c[i].fd = -1;
    st->epfd = sys_epoll_create();
    st->sigfd = sys_signalfd(sigs, ARRAY_LEN(sigs));
    if (st->epfd < 0 || st->sigfd < 0)
        return -1;
    sys_epoll_ctl(st->epfd, EPOLL_CTL_ADD, st->sigfd, EPOLLIN, TAG_SIGNAL);
    sys_epoll_ctl(st->epfd, EPOLL_CTL_ADD, srv->status_fd, EPOLLIN, TAG_LISTEN);
    st->listening = true;
    return 0;
}

int status_run(const struct server *srv)
{
    /* Only the status listener is ours; the workers' go. */
    for (unsigned i = 0; i < srv->nlisten; i++)
        if (srv->listen_fds[i] >= 0)
            sys_close(srv->listen_fds[i]);
    for (unsigned i = 0; srv->tls && i < srv->nlisten; i++)
        if (srv->tls_listen_fds[i] >= 0)
            sys_close(srv->tls_listen_fds[i]);
    for (unsigned i = 0; H3_BUILT && srv->set.http3 && i < srv->nlisten; i++)
        if (srv->udp_fds[i] >= 0)
            sys_close(srv->udp_fds[i]);
    if (H3_BUILT && srv->h3_map_fd >= 0)
        sys_close(srv->h3_map_fd);                   /* HTTP/3's steering: the master's alone */
    for (unsigned i = 0; i < srv->set.nsites; i++) { /* it serves no file */
        sys_close(srv->sites[i].root_fd);
        if (srv->sites[i].precomp_fd >= 0)
            sys_close(srv->sites[i].precomp_fd);
    }
    tls_server_forget(srv->tls); /* nor TLS: no private or ticket key here */
    sys_die_with_parent(SIGTERM);
    if (sys_getppid() != srv->master_pid)
        return 1;
    int r;
    if (srv->set.user && (r = sys_drop_privileges(srv->set.user, srv->set.group, NULL)) < 0) {
        log_error_errno("status: drop privileges to", srv->set.user, r);
        return 1;
    }
    struct status *st = sys_map(sizeof *st);
    if (!st || status_init(st, srv) < 0) {
        log_error("status: cannot set up its event loop");
        return 1;
    }
    if (lockdown_status(srv) < 0)
        return 1;
    for (;;) {
        struct epoll_event ev[STATUS_CONNS + 2];
        int n = sys_epoll_wait(st->epfd, ev, (int)ARRAY_LEN(ev), 500, NULL);
        int64_t now = sys_now_ms();
        for (int i = 0; i < n; i++) {
            uint64_t tag = ev[i].data.u64;
            if (tag == TAG_SIGNAL) {
                int sig = sys_signalfd_read(st->sigfd);
                if (sig == SIGTERM || sig == SIGINT)
                    return 0;
            } else if (tag == TAG_LISTEN) {
                on_accept(st, now);
            } else if (st->c[tag].fd >= 0) {
                on_conn(st, &st->c[tag]);
            }
        }
        for (unsigned i = 0; i < STATUS_CONNS; i++)
            if (st->c[i].fd >= 0 && now >= st->c[i].deadline)
                conn_end(st, &st->c[i]);
    }
}

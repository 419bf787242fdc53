/* SPDX-License-Identifier: MIT */
/*
 * h1_conn.c - HTTP/1.1 on a connection (h1_proto, the protocol every
 * connection begins with): READ a head -> the handler fills an exchange ->
 * WRITE its queue through the transport -> back to READ for the next
 * (pipelined or keep-alive) request, or a lingering close (event/conn.c).
 * Before the first request, HTTP/2's preface (or ALPN h2) hands the
 * connection to HTTP/2. The handler decides what to send; this file only
 * moves bytes, keeps the deadlines and never re-decides a verdict.
 *
 * One request lifecycle: request_begin() starts every exchange (a parsed
 * head, a malformed one, or a 408), request_end() ends every one (the log
 * line, then the release of what it held); nothing of one exchange survives
 * into the next.
 *
 * Deadlines (docs/DESIGN.md §2): a whole head within timeout_header from its
 * first byte (absolute: trickling bytes does not extend it), timeout_keepalive
 * of idleness between requests, timeout_send without send progress.
 */
#include "http1/h1_conn.h"

#include "base/stats.h"
#include "base/worker.h"
#include "core/bytes.h"
#include "core/h1.h"
#include "core/http_fields.h"
#include "core/http_parse.h"
#include "event/client.h"
#include "event/conn.h"
#include "event/loop.h"
#include "event/transport.h"
#include "http/exchange.h"
#include "http/handler.h"
#include "http/outq.h"
#include "http/reply.h"
#include "http2/h2_conn.h"
#include "sys/sys.h"
#include "tls/tls.h"

#include <errno.h>

/* One sendfile call for the whole rest: chunking it needlessly costs
 * syscalls (lwan#334). The kernel caps a call near 2 GiB. */
#define SENDFILE_MAX 0x7ffff000u

static char *conn_in(const struct conn *c)
{
    return c->slot;
}

static void arm(struct worker *w, struct conn *c, unsigned seconds)
{
    conn_arm(w, c, seconds);
}

/* The slot goes back only with no exchange in it: an io_uring send in
 * flight reads the exchange's iovecs there. */
static void release_slot(struct worker *w, struct conn *c)
{
    PITH_ASSERT(!c->x || !c->x->active);
    conn_release_slot(w, c);
}

_Static_assert(sizeof(struct exchange) <= POOL_EXCH_SIZE, "an exchange fits its slot region");

/* ---- the response head ---------------------------------------------------------- */

/* HTTP/1's codec (exchange.h): the head from core's HTTP/1 encoder, which
 * decides the framing, queued as up to three pieces (the bytes written in
 * the out region, a cached block's kept HTTP/1 form, a constant tail). */
static void h1_head(struct worker *w, struct exchange *x, const struct response *r,
                    const struct exchange_extra *e)
{
    (void)w;
    struct h1_context cx = {
        .date = e->date,
        .server = e->server,
        .extra = e->field,
        .nextra = e->n,
        .minor = x->minor,
        .keep_alive = x->keep_alive,
    };
    struct h1_head h;
    struct buf b = exchange_out_room(x);
    h1_encode_head(&b, r, &cx, &h);
    PITH_ASSERT(!b.full && h.body == x->body);
    exchange_out_commit(x, b.len);
    outq_push_head(&x->q, b.p, b.len);
    outq_push_head(&x->q, h.block.p, h.block.n);
    outq_push_head(&x->q, h.tail.p, h.tail.n);
    x->q.chunked = h.chunked;
    x->close_after = h.close;
}

static const struct exchange_codec h1_codec = {.version = 0, .head = h1_head};

/* ---- the request lifecycle ------------------------------------------------------- */

static void request_begin(struct worker *w, struct conn *c)
{
    PITH_ASSERT(c->slot != NULL && (!c->x || !c->x->active));
    c->x = (struct exchange *)(void *)(c->slot + POOL_IN_SIZE);
    char *out = c->slot + POOL_IN_SIZE + POOL_EXCH_SIZE, *scratch = out + POOL_OUT_SIZE;
    exchange_begin(c->x, &h1_codec, out, POOL_OUT_SIZE, scratch, POOL_DIR_SIZE);
    c->h2_possible = false; /* an HTTP/1 connection from its first request on */
    if (w->set->log_json && w->log.fd >= 0)
        c->x->started_us = sys_now_us(); /* only the JSON log shows a duration */
    c->x->tls = c->tp != &transport_plain;
    c->x->tls_ctx = c->x->tls ? tls_conn_ctx(w, c) : -1;           /* sites: may c answer a host? */
    c->x->tls_version = c->x->tls ? tls_conn_version(w, c) : NULL; /* the JSON log's "tls" */
}

/* The access-log line of the exchange, once (exchange_log). */
static void log_exchange(struct worker *w, struct conn *c)
{
    exchange_log(w, c->x, &c->peer, c->fd);
}

/* Before anything the exchange points into (the slot, a cache entry) can
 * go: the log line, then the release. */
static void request_end(struct worker *w, struct conn *c)
{
    log_exchange(w, c);
    if (c->x)
        exchange_release(w, c->x);
}

/* ---- opening and closing (h1_proto) ---------------------------------------------------- */

static void h1_start(struct worker *w, struct conn *c)
{
    c->head_len = 0;
    c->x = NULL;
    c->timed_out = false;
    c->h2_possible = H2_BUILT && w->set->http2;
    /* A new connection must deliver its first head within the header
     * timeout, counted from the accept. */
    arm(w, c, w->set->timeout_header);
    c->tp->want_read(w, c);
}

/* The connection is closing: the exchange in flight (a request cut short)
 * is logged now, while what it points into is still there. */
static void h1_closing(struct worker *w, struct conn *c)
{
    log_exchange(w, c);
}

/* Bytes of the answer in flight are still to be sent. */
static bool h1_owes(const struct conn *c)
{
    return c->x && c->x->active && !outq_empty(&c->x->q);
}

/* The backend let go: the exchange's cache entry, descriptor and body
 * source go back (the slot goes after, in conn_free). */
static void h1_release(struct worker *w, struct conn *c)
{
    if (c->x)
        exchange_release(w, c->x);
}

/* ---- sending -------------------------------------------------------------------- */

/* Sends the front of the queue: the memory segments there in one gathered
 * send, or a file segment by sendfile. Returns 1 when it went out, 0 when
 * the backend will come back (sent or writable), -1 when c was closed. */
static int send_front(struct worker *w, struct conn *c)
{
    struct exchange *x = c->x;
    struct seg *s = outq_front(&x->q);
    ssize_t n;
    if (s->kind == SEG_FILE) {
        uint64_t off = s->off;
        n = c->tp->sendfile(w, c, s->fd, &off, s->len > SENDFILE_MAX ? SENDFILE_MAX : s->len);
        /* 0: the file shrank under us. The promised length can no longer
         * be met, so the only honest end is a close. */
        if (n == 0)
            n = -EIO;
    } else {
        bool file_next;
        unsigned k = outq_gather(&x->q, x->iov, OUTQ_SEGS, &file_next);
        /* Head and first file bytes in one packet: MSG_MORE holds the head
         * until sendfile follows at once. */
        n = c->tp->send(w, c, x->iov, k, file_next);
    }
    if (n == -EAGAIN)
        return 0;
    if (n == -EINTR)
        return 1;
    if (n < 0) {
        conn_close(w, c, CLOSE_ERROR);
        return -1;
    }
    outq_consume(&x->q, (uint64_t)n, &x->head_sent, &x->body_sent);
    arm(w, c, w->set->timeout_send);
    return 1;
}

/* Asks the body source for its next piece. Returns 1 to go on sending, -1
 * when c was closed. */
static int refill(struct worker *w, struct conn *c)
{
    struct exchange *x = c->x;
    if (outq_empty(&x->q))
        exchange_out_clear(x); /* nothing queued points there any more */
    int r = x->src->fill(w, x);
    x->src_started = true;
    if (r < 0) {
        conn_close(w, c, CLOSE_ERROR);
        return -1;
    }
    if (r == BODY_DONE) {
        x->src_finished = true;
        outq_end_body(&x->q);
    }
    x->src_paused = r == BODY_PAUSE;
    return 1;
}

/* Pushes the response as far as the socket takes it. Returns 1 when all of
 * it went out, 0 when waiting for the backend, -1 when c was closed. */
static int drive(struct worker *w, struct conn *c)
{
    struct exchange *x = c->x;
    for (;;) {
        bool source = x->src && !x->src_finished;
        if (source && outq_empty(&x->q) && x->src_paused) {
            /* A listing yields after each piece, so a huge directory does
             * not hold the worker; writability brings it back. */
            x->src_paused = false;
            w->loop->want_write(w, c);
            return 0;
        }
        /* The first piece goes out with the head, the next ones once the
         * queue has drained (they reuse the out region). */
        if (source && (outq_empty(&x->q) || !x->src_started)) {
            if (refill(w, c) < 0)
                return -1;
            continue;
        }
        if (outq_empty(&x->q))
            return 1;
        int r = send_front(w, c);
        if (r != 1)
            return r;
    }
}

/* ---- reading -------------------------------------------------------------------- */

/* After a complete response. Returns true when pipelined bytes wait to be
 * parsed (the caller loops instead of recursing). */
static bool response_done(struct worker *w, struct conn *c)
{
    struct exchange *x = c->x;
    if (x->close_after || w->draining) {
        /* Linger only where the client may still be sending: after an
         * error, while closing a connection it wanted kept, or with bytes
         * already buffered past this request. A client that asked to
         * close and sent nothing more is closed at once (as nginx does). */
        bool linger = x->status >= 400 || x->keep_alive || c->in_len > c->head_len;
        enum close_reason why = c->timed_out                   ? CLOSE_TIMEOUT
                                : x->keep_alive && w->draining ? CLOSE_SHUTDOWN
                                                               : CLOSE_DONE;
        request_end(w, c);
        if (linger)
            conn_linger(w, c, why);
        else
            conn_close(w, c, why);
        return false;
    }
    request_end(w, c);
    /* Drop the answered head; pipelined bytes move to the front. */
    uint32_t rest = c->in_len - c->head_len;
    if (rest)
        mem_move(conn_in(c), conn_in(c) + c->head_len, rest);
    c->in_len = rest;
    c->head_len = 0;
    c->state = CONN_READ;
    if (rest) {
        c->head_started_ms = w->now_ms;
        arm(w, c, w->set->timeout_header);
        return true;
    }
    /* Idle: hold no buffer while waiting for the next request. */
    release_slot(w, c);
    c->head_started_ms = 0;
    arm(w, c, w->set->timeout_keepalive);
    c->tp->want_read(w, c);
    return false;
}

/* Starts answering: the exchange is begun and filled, the queue drains. */
static void start_response(struct worker *w, struct conn *c)
{
    c->state = CONN_WRITE;
    arm(w, c, w->set->timeout_send);
}

/* Parses what has arrived and answers each complete head in order, as long
 * as the answers go out without waiting. */
static void process_input(struct worker *w, struct conn *c)
{
    do {
        /* No PROXY header where one is required: a 400 (on the TLS port,
         * the transport found none before the handshake). */
        bool missing = c->proxy_missing;
        c->proxy_missing = false;
        if (unlikely(c->proxy_pending)) {
            enum client_step step = client_proxy_header(w, c, c->slot, &c->in_len, POOL_IN_SIZE);
            missing = step == CLIENT_MISSING;
            if (step == CLIENT_CLOSED)
                return;
            if (step == CLIENT_WAIT || (step == CLIENT_READY && c->in_len == 0)) {
                w->loop->want_read(w, c);
                return;
            }
        }
        if (c->h2_possible && !missing) {
            /* HTTP/2: ALPN h2 on TLS, or the connection preface (RFC 9113 §3.4). */
            enum h2_entry e = h2_entry_check(w, c, conn_in(c), c->in_len);
            if (e == H2_ENTRY_MORE) {
                c->tp->want_read(w, c);
                return;
            }
            if (e == H2_ENTRY_YES) {
                h2_conn_start(w, c);
                return;
            }
        }
        long r = missing ? -400 : http_parse_request(conn_in(c), c->in_len, &w->req);
        if (r == HTTP_PARSE_AGAIN) {
            if (c->in_len < POOL_IN_SIZE) {
                c->tp->want_read(w, c);
                return;
            }
            r = -431; /* cannot happen within the limits; never spin on a full buffer */
        }
        request_begin(w, c);
        if (r < 0) {
            /* A syntax error: the framing is unknown, so nothing after it
             * can be trusted (the handler closes after answering). */
            c->head_len = c->in_len;
            reply_error(w, c->x, (int)-r);
        } else {
            c->head_len = (uint32_t)r;
            struct exchange *x = c->x;
            x->client_set = client_real_ip(w, c, &w->req, &x->client);
            x->client_key = client_key_of(w, c, x->client_set ? &x->client : NULL);
            if (c->client_limited) {
                reply_client_limit(w, c->x); /* over --max-conns-per-client */
            } else {
                int verdict = http_fields_analyze(&w->req, &w->info);
                handler_request(w, c->x, &w->req, &w->info, verdict);
            }
        }
        start_response(w, c);
    } while (drive(w, c) == 1 && response_done(w, c));
}

static char *h1_input_room(struct worker *w, struct conn *c, size_t *room)
{
    if (c->state == CONN_READ) {
        conn_take_slot(w, c);
    } else if (c->state != CONN_WRITE || !c->slot) {
        *room = 0;
        return NULL;
    }
    *room = POOL_IN_SIZE - c->in_len;
    return conn_in(c) + c->in_len;
}

static void h1_input_done(struct worker *w, struct conn *c, ssize_t n)
{
    switch (c->state) {
    case CONN_WRITE:
        /* Pipelined bytes while a response is in flight: parsed when it
         * ends. The end of the stream is reported again once we read. */
        if (n > 0)
            c->in_len += (uint32_t)n;
        return;
    case CONN_READ: break;
    default: return;
    }
    if (n == -EAGAIN || n == -EINTR) {
        if (c->in_len == 0)
            release_slot(w, c);
        c->tp->want_read(w, c);
        return;
    }
    if (n == -EOVERFLOW) {
        /* The backend dropped input it could not hold: what is left
         * cannot be answered; close once the client has read the rest. */
        request_end(w, c);
        conn_linger(w, c, CLOSE_OVERFLOW);
        return;
    }
    if (n <= 0) {
        conn_close(w, c, n == 0 ? CLOSE_PEER : CLOSE_ERROR);
        return;
    }
    if (c->in_len == 0 && c->head_started_ms == 0) {
        /* The first byte of a head starts its absolute deadline. */
        c->head_started_ms = w->now_ms;
        arm(w, c, w->set->timeout_header);
    }
    c->in_len += (uint32_t)n;
    process_input(w, c);
}

static void h1_writable(struct worker *w, struct conn *c)
{
    if (c->state == CONN_WRITE && drive(w, c) == 1 && response_done(w, c))
        process_input(w, c);
}

static void h1_sent(struct worker *w, struct conn *c, ssize_t n)
{
    if (c->state != CONN_WRITE)
        return;
    if (n == -EAGAIN || n == -EINTR) {
        /* Try again, never an error (transport.h): nothing went out, the
         * same bytes go when the socket has room. */
        w->loop->want_write(w, c);
        return;
    }
    if (n < 0) {
        conn_close(w, c, CLOSE_ERROR);
        return;
    }
    outq_consume(&c->x->q, (uint64_t)n, &c->x->head_sent, &c->x->body_sent);
    arm(w, c, w->set->timeout_send);
    h1_writable(w, c);
}

static void h1_timeout(struct worker *w, struct conn *c)
{
    /* A PROXY header that did not arrive whole is no HTTP request to
     * answer with a 408: the connection just closes. */
    if (c->state == CONN_READ && c->in_len > 0 && !c->timed_out && !c->proxy_pending) {
        /* A head that did not arrive in time (slowloris): say so, then
         * close, as a fresh exchange of its own with no request line. */
        c->timed_out = true;
        c->head_len = c->in_len;
        request_begin(w, c);
        reply_error(w, c->x, 408);
        start_response(w, c);
        if (drive(w, c) == 1)
            response_done(w, c);
        return;
    }
    if (c->state == CONN_READ && c->in_len == 0 && w->draining) {
        conn_close(w, c, CLOSE_SHUTDOWN); /* idle through conn_drain's window */
        return;
    }
    conn_close(w, c, CLOSE_TIMEOUT);
}

/* An idle connection may have a request on the way when a drain begins:
 * the first one of a connection accepted just before, or a keep-alive
 * client's next. Closed at once, that request would fail (during an
 * upgrade, one the new binary's workers would have served); given this
 * long, it is answered, with Connection: close, and the client reconnects. */
#define DRAIN_IDLE_MS 500

/* SIGTERM: idle connections get DRAIN_IDLE_MS to send a request, then close
 * (h1_timeout); the others finish their response and then close
 * (response_done sees w->draining). */
static void h1_drain(struct worker *w, struct conn *c)
{
    if (c->state == CONN_READ && c->in_len == 0)
        timer_arm(&w->wheel, &c->timer, w->now_ms + DRAIN_IDLE_MS);
}

const struct conn_proto h1_proto = {
    .name = "HTTP/1.1",
    .start = h1_start,
    .input_room = h1_input_room,
    .input_done = h1_input_done,
    .sent = h1_sent,
    .writable = h1_writable,
    .timeout = h1_timeout,
    .drain = h1_drain,
    .owes = h1_owes,
    .closing = h1_closing,
    .release = h1_release,
};

/* SPDX-License-Identifier: MIT */
/*
 * conn.c - one connection's life: READ a head -> (handler fills a response)
 * -> WRITE it -> back to READ for the next (pipelined or keep-alive) request,
 * or LINGER and close. The handler decides what to send; this file only moves
 * bytes, keeps the deadlines and never re-decides a verdict.
 *
 * Deadlines (docs/DESIGN.md §2): a whole head within timeout_header from its
 * first byte (absolute: trickling bytes does not extend it), timeout_keepalive
 * of idleness between requests, timeout_send without send progress.
 */
#include "core/bytes.h"
#include "core/http_parse.h"
#include "server/loop.h"
#include "server/server.h"
#include "sys/sys.h"

#include <errno.h>

/* How long a closing connection may keep sending us bytes that we discard:
 * enough for the client to read our last response before our close could
 * turn into a reset that destroys it (RFC 9112 §9.6). */
#define LINGER_MS 2000

char *conn_in(const struct conn *c)
{
    return c->slot;
}

char *conn_out(const struct conn *c)
{
    return c->slot + POOL_IN_SIZE;
}

char *conn_dir(const struct conn *c)
{
    return c->slot + POOL_IN_SIZE + POOL_OUT_SIZE;
}

void conn_push(struct conn *c, const void *p, size_t n)
{
    PITH_ASSERT(c->niov < CONN_IOV_MAX);
    if (n)
        c->iov[c->niov++] = (struct iovec){(void *)p, n};
}

void conn_push_out(struct conn *c, size_t n)
{
    PITH_ASSERT(c->out_used + n <= POOL_OUT_SIZE);
    conn_push(c, conn_out(c) + c->out_used, n);
    c->out_used += (uint32_t)n;
}

static void out_clear(struct conn *c)
{
    c->niov = c->iov_at = 0;
    c->out_used = 0;
}

static void arm(struct worker *w, struct conn *c, unsigned seconds)
{
    timer_arm(&w->wheel, &c->timer, w->now_ms + (int64_t)seconds * 1000);
}

static void release_slot(struct worker *w, struct conn *c)
{
    if (c->slot) {
        pool_put(&w->pool, c->slot);
        c->slot = NULL;
    }
}

static void release_body(struct worker *w, struct conn *c)
{
    if (c->body_fd >= 0 && c->body_fd_owned)
        sys_close(c->body_fd);
    c->body_fd = -1;
    c->body_fd_owned = false;
    c->body = BODY_NONE;
    if (c->entry) {
        filecache_release(&w->cache, c->entry);
        c->entry = NULL;
    }
}

static void log_response(struct worker *w, struct conn *c)
{
    if (c->status == 0)
        return;
    if (c->peer.ss_family == AF_UNSPEC && w->log.fd >= 0)
        sys_peer_addr(c->fd, &c->peer); /* io_uring accepts do not report it */
    struct access_entry e = {
        .peer = &c->peer,
        .now = w->now_sec,
        .method = c->log_method,
        .target = c->log_target,
        .referer = c->log_referer,
        .user_agent = c->log_ua,
        .minor = c->log_minor,
        .status = c->status,
        .bytes = c->body_sent,
    };
    access_log_add(&w->log, &e, w->now_ms);
    c->status = 0;
}

void conn_free(struct worker *w, struct conn *c)
{
    release_body(w, c);
    release_slot(w, c);
    c->fd = -1;
    c->state = CONN_FREE;
    c->next_free = w->free_conns;
    w->free_conns = c;
    w->active--;
    worker_conn_freed(w);
}

void conn_close(struct worker *w, struct conn *c, enum close_reason why)
{
    (void)why;
    if (c->state == CONN_CLOSING || c->state == CONN_FREE)
        return;
    log_response(w, c);
    timer_cancel(&w->wheel, &c->timer);
    c->state = CONN_CLOSING;
    /* The slot and the cache entry stay until the backend lets go of them:
     * an io_uring send in flight still reads them. */
    if (w->loop->close(w, c))
        conn_free(w, c);
}

void conn_accepted(struct worker *w, struct conn *c)
{
    c->state = CONN_READ;
    c->slot = NULL;
    c->in_len = c->head_len = 0;
    out_clear(c);
    c->entry = NULL;
    c->body_fd_owned = false;
    c->body = BODY_NONE;
    c->body_fd = -1;
    c->status = 0;
    c->keep_alive = false;
    timer_init(&c->timer);
    /* A new connection must deliver its first head within the header
     * timeout, counted from the accept. */
    c->head_deadline_set = w->now_ms;
    arm(w, c, w->srv->cfg.timeout_header);
    w->loop->want_read(w, c);
}

/* ---- sending -------------------------------------------------------------------- */

/* Advances the queue past n sent bytes, counting body bytes for the log. */
static void consume(struct conn *c, size_t n)
{
    size_t head = n < c->head_left ? n : c->head_left;
    c->head_left -= (uint32_t)head;
    c->body_sent += n - head;
    while (n && c->iov_at < c->niov) {
        struct iovec *v = &c->iov[c->iov_at];
        size_t k = n < v->iov_len ? n : v->iov_len;
        v->iov_base = (char *)v->iov_base + k;
        v->iov_len -= k;
        n -= k;
        if (v->iov_len == 0)
            c->iov_at++;
    }
}

/* Returns 1 when everything queued went out, 0 when the backend will come
 * back (conn_sent or conn_writable), -1 when the connection was closed. */
static int send_out(struct worker *w, struct conn *c)
{
    while (c->iov_at < c->niov) {
        /* Head and first body bytes in one packet: MSG_MORE holds the head
         * until sendfile follows at once. */
        bool more = c->body == BODY_FILE || c->body == BODY_MULTIPART;
        ssize_t n = w->loop->send(w, c, more);
        if (n == -EAGAIN)
            return 0;
        if (n == -EINTR)
            continue;
        if (n < 0) {
            conn_close(w, c, CLOSE_ERROR);
            return -1;
        }
        consume(c, (size_t)n);
        arm(w, c, w->srv->cfg.timeout_send);
    }
    out_clear(c);
    return 1;
}

/* Sends the file segment [body_off, body_end). Returns like send_out. */
static int send_file(struct worker *w, struct conn *c)
{
    while (c->body_off < c->body_end) {
        uint64_t left = c->body_end - c->body_off;
        /* One call for the whole rest: chunking sendfile needlessly costs
         * syscalls (lwan#334). The kernel caps a call near 2 GiB. */
        size_t want = left > 0x7ffff000 ? 0x7ffff000 : (size_t)left;
        uint64_t before = c->body_off;
        ssize_t n = sys_sendfile(c->fd, c->body_fd, &c->body_off, want);
        if (n == -EAGAIN) {
            w->loop->want_write(w, c);
            return 0;
        }
        if (n == -EINTR)
            continue;
        if (n <= 0) {
            /* 0: the file shrank under us. The promised length can no
             * longer be met, so the only honest end is a close. */
            conn_close(w, c, CLOSE_ERROR);
            return -1;
        }
        c->body_sent += c->body_off - before;
        arm(w, c, w->srv->cfg.timeout_send);
    }
    return 1;
}

/* Head, then file segments (one, or the parts of a multipart body, each
 * preceded by its part head in the out region). */
static int send_file_body(struct worker *w, struct conn *c)
{
    int r = 1;
    while (r == 1 && (c->body == BODY_FILE || c->body == BODY_MULTIPART)) {
        r = send_file(w, c);
        if (r != 1)
            break;
        if (c->body == BODY_FILE) {
            release_body(w, c);
            break;
        }
        handler_multipart_next(w, c);
        r = send_out(w, c);
    }
    return r;
}

/* Pushes the response as far as the socket takes it; true when all of it
 * went out. A listing goes one chunk per wake-up: a huge directory must not
 * hold the worker, and want_write brings us back while the socket has room. */
static bool conn_send(struct worker *w, struct conn *c)
{
    int r = send_out(w, c);
    if (r == 1)
        r = send_file_body(w, c);
    if (r == 1 && c->body == BODY_LISTING) {
        if (dirlist_fill(w, c) < 0) {
            conn_close(w, c, CLOSE_ERROR);
            return false;
        }
        r = send_out(w, c);
        if (r == 1 && c->body == BODY_LISTING) {
            w->loop->want_write(w, c);
            r = 0;
        }
    }
    return r == 1;
}

/* ---- reading -------------------------------------------------------------------- */

static void start_linger(struct worker *w, struct conn *c)
{
    log_response(w, c);
    release_body(w, c);
    release_slot(w, c);
    sys_shutdown_write(c->fd);
    c->state = CONN_LINGER;
    timer_arm(&w->wheel, &c->timer, w->now_ms + LINGER_MS);
    w->loop->want_read(w, c);
}

/* After a complete response. Returns true when pipelined bytes wait to be
 * parsed (the caller loops instead of recursing). */
static bool response_done(struct worker *w, struct conn *c)
{
    release_body(w, c);
    if (!c->keep_alive || w->draining) {
        /* Linger only where the client may still be sending: after an
         * error, while draining a keep-alive connection, or with bytes
         * already buffered past this request. A client that asked to
         * close and sent nothing more is closed at once (as nginx does). */
        if (c->status >= 400 || c->keep_alive || c->in_len > c->head_len)
            start_linger(w, c);
        else
            conn_close(w, c, CLOSE_DONE);
        return false;
    }
    log_response(w, c);
    /* Drop the answered head; pipelined bytes move to the front. */
    uint32_t rest = c->in_len - c->head_len;
    if (rest)
        mem_move(conn_in(c), conn_in(c) + c->head_len, rest);
    c->in_len = rest;
    c->head_len = 0;
    out_clear(c);
    c->state = CONN_READ;
    if (rest) {
        c->head_deadline_set = w->now_ms;
        arm(w, c, w->srv->cfg.timeout_header);
        return true;
    }
    /* Idle: hold no buffer while waiting for the next request. */
    release_slot(w, c);
    c->head_deadline_set = 0;
    arm(w, c, w->srv->cfg.timeout_keepalive);
    w->loop->want_read(w, c);
    return false;
}

/* Parses what has arrived and answers each complete head in order, as long
 * as the answers go out without waiting. */
static void process_input(struct worker *w, struct conn *c)
{
    do {
        long r = http_parse_request(conn_in(c), c->in_len, &w->req);
        if (r == HTTP_PARSE_AGAIN) {
            if (c->in_len < POOL_IN_SIZE) {
                w->loop->want_read(w, c);
                return;
            }
            r = -431; /* cannot happen within the limits; never spin on a full buffer */
        }
        c->log_method = c->log_target = c->log_referer = c->log_ua = (struct span){0};
        c->log_minor = 1;
        c->head_only = false;
        if (r < 0) {
            /* A syntax error: the framing is unknown, so nothing after it
             * can be trusted: answer, then close (RFC 9112 §2.2). */
            c->head_len = c->in_len;
            c->keep_alive = false;
            handler_error(w, c, (int)-r);
        } else {
            c->head_len = (uint32_t)r;
            handler_request(w, c);
        }
        c->state = CONN_WRITE;
        c->body_sent = 0;
        arm(w, c, w->srv->cfg.timeout_send);
    } while (conn_send(w, c) && response_done(w, c));
}

char *conn_recv_buffer(struct worker *w, struct conn *c, size_t *room)
{
    if (!c->slot) {
        c->slot = pool_get(&w->pool);
        PITH_ASSERT(c->slot != NULL); /* the pool has a slot per connection */
        c->in_len = 0;
    }
    *room = POOL_IN_SIZE - c->in_len;
    return conn_in(c) + c->in_len;
}

void conn_received(struct worker *w, struct conn *c, ssize_t n)
{
    if (c->state == CONN_LINGER) {
        /* Whatever the client still sends after our last response is
         * dropped; its end (or an error) ends the connection. */
        if (n > 0 || n == -EAGAIN || n == -EINTR)
            w->loop->want_read(w, c);
        else
            conn_close(w, c, CLOSE_DONE);
        return;
    }
    if (c->state != CONN_READ)
        return;
    if (n == -EAGAIN || n == -EINTR) {
        if (c->in_len == 0)
            release_slot(w, c);
        w->loop->want_read(w, c);
        return;
    }
    if (n <= 0) {
        conn_close(w, c, n == 0 ? CLOSE_PEER : CLOSE_ERROR);
        return;
    }
    if (c->in_len == 0 && c->head_deadline_set == 0) {
        /* The first byte of a head starts its absolute deadline. */
        c->head_deadline_set = w->now_ms;
        arm(w, c, w->srv->cfg.timeout_header);
    }
    c->in_len += (uint32_t)n;
    process_input(w, c);
}

void conn_writable(struct worker *w, struct conn *c)
{
    if (c->state == CONN_WRITE && conn_send(w, c) && response_done(w, c))
        process_input(w, c);
}

void conn_sent(struct worker *w, struct conn *c, ssize_t n)
{
    if (c->state != CONN_WRITE)
        return;
    if (n < 0) {
        conn_close(w, c, CLOSE_ERROR);
        return;
    }
    consume(c, (size_t)n);
    arm(w, c, w->srv->cfg.timeout_send);
    conn_writable(w, c);
}

void conn_on_timeout(struct worker *w, struct conn *c)
{
    if (c->state == CONN_READ && c->in_len > 0) {
        /* A head that did not arrive in time (slowloris): say so, once,
         * without waiting for the client to read it. */
        c->head_len = c->in_len;
        c->keep_alive = false;
        handler_error(w, c, 408);
        (void)sys_sendv(c->fd, c->iov, c->niov, false);
        c->body_sent = 0;
    }
    conn_close(w, c, CLOSE_TIMEOUT);
}

/* SIGTERM: idle connections go now; the others finish their response and
 * then close (response_done sees w->draining). */
void conn_drain(struct worker *w, struct conn *c)
{
    if (c->state == CONN_READ && c->in_len == 0)
        conn_close(w, c, CLOSE_SHUTDOWN);
}

/* SPDX-License-Identifier: MIT */
/*
 * tls.c - HTTPS's transport (see tls.h, transport.h): a worker's TLS
 * connections. OpenSSL reads ciphertext from the connection's TLS buffer (a
 * small BIO of our own: the event loop owns receiving, on both backends)
 * and writes to the socket itself (a socket BIO, which is what lets OpenSSL
 * switch the socket to kernel TLS after the handshake). The contexts a
 * connection starts with come from tls_ctx.c; this file never reads a
 * certificate, a key or a ticket key.
 */
#include "tls/tls.h"
#include "event/loop.h"
#include "tls/tls_internal.h"

#include "base/log.h"
#include "base/server.h"
#include "base/stats.h"
#include "base/worker.h"
#include "core/bytes.h"
#include "event/client.h"
#include "event/conn.h"
#include "event/transport.h"
#include "sys/sys.h"

#include <errno.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <string.h>

/* The TLS buffer of a connection with bytes in flight: a record's worth of
 * plaintext on its way out, then ciphertext the loop received and OpenSSL
 * has not read yet. Idle connections hold none. */
#define TLS_OUT_SIZE         (16 * 1024)
#define TLS_IN_SIZE          (8 * 1024)
#define TLS_BUF_SIZE         (TLS_OUT_SIZE + TLS_IN_SIZE)
#define TLS_RECORDS_PER_PUSH 16

/* ---- a worker's connections ------------------------------------------------------ */

struct tls_conn {
    SSL *ssl;
    char *buf;                    /* TLS_BUF_SIZE while bytes are in flight, else NULL */
    uint16_t in_off, in_len;      /* ciphertext at buf + TLS_OUT_SIZE */
    uint16_t out_len, held, owed; /* plaintext at buf: held (reported sent) + owed */
    bool pending;                 /* SSL_write of buf[0..out_len) must be repeated */
    bool handshaking;
    bool first_seen; /* the first byte was checked (TLS, plain HTTP or garbage) */
    bool ktls_send;
    bool broken; /* a fatal error: nothing more may be written */
    bool ready;  /* on the ready list */
    int8_t ctx;  /* the certificate context the handshake ended with (sites, issue 22) */
    /* SSL_read must send a message of OpenSSL's own first (SSL_ERROR_WANT_WRITE)
     * and the socket was full: reading resumes on writable(). */
    bool read_wants_write;
};

struct tls_worker {
    struct tls_conn *tc; /* one per connection */
    char *bufs;
    uint32_t *free_stack, nfree, next_unused;
    uint32_t *ready, nready;
    BIO_METHOD *in_method;
    int64_t log_after_ms; /* failed handshakes: one line a second at most */
    uint64_t suppressed;
    uint64_t handshakes, failed, ktls, userspace, plain_http;
    uint64_t key_update_closed;
};

/* SSL_get_error() needs an empty error queue before each call. Every
 * failure clears what it leaves, so the queue is nearly always empty
 * already, and a peek suffices: ERR_clear_error() walks all of the queue's
 * slots, which before each read and write was 2.5% of a keep-alive
 * request's CPU. */
static inline void errors_clear(void)
{
    if (ERR_peek_error())
        ERR_clear_error();
}

static struct tls_conn *tconn(struct worker *w, const struct conn *c)
{
    return &w->tls->tc[c - w->conns];
}

/* A response is under way: some of it is still to be sent (the
 * protocol's word). */
static bool in_response(const struct conn *c)
{
    return c->proto && c->proto->owes(c);
}

static bool take_buf(struct tls_worker *tw, struct tls_conn *tc)
{
    if (tc->buf)
        return true;
    uint32_t i;
    if (tw->nfree)
        i = tw->free_stack[--tw->nfree];
    else
        i = tw->next_unused++; /* one per connection: never runs out */
    tc->buf = tw->bufs + (size_t)i * TLS_BUF_SIZE;
    return true;
}

static void put_buf(struct tls_worker *tw, struct tls_conn *tc)
{
    if (!tc->buf)
        return;
    tw->free_stack[tw->nfree++] = (uint32_t)((tc->buf - tw->bufs) / TLS_BUF_SIZE);
    tc->buf = NULL;
    tc->in_off = tc->in_len = tc->out_len = tc->held = tc->owed = 0;
    tc->pending = false;
}

/* An idle connection keeps no buffer. */
static void maybe_release(struct tls_worker *tw, struct tls_conn *tc)
{
    if (tc->buf && !tc->pending && tc->out_len == 0 && tc->in_off == tc->in_len)
        put_buf(tw, tc);
}

/* The read side of OpenSSL: what the loop received into the TLS buffer. */
static int in_read(BIO *b, char *out, int n)
{
    struct tls_conn *tc = BIO_get_data(b);
    BIO_clear_retry_flags(b);
    unsigned avail = (unsigned)(tc->in_len - tc->in_off);
    if (avail == 0 || n <= 0) {
        BIO_set_retry_read(b);
        return -1;
    }
    unsigned k = avail < (unsigned)n ? avail : (unsigned)n;
    memcpy(out, tc->buf + TLS_OUT_SIZE + tc->in_off, k);
    tc->in_off = (uint16_t)(tc->in_off + k);
    if (tc->in_off == tc->in_len)
        tc->in_off = tc->in_len = 0;
    return (int)k;
}

static long in_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)num;
    (void)ptr;
    struct tls_conn *tc = BIO_get_data(b);
    switch (cmd) {
    case BIO_CTRL_FLUSH: return 1;
    case BIO_CTRL_PENDING: return tc->in_len - tc->in_off;
    default: return 0;
    }
}

size_t tls_worker_reservation(unsigned max_conns)
{
    return (size_t)max_conns * (TLS_BUF_SIZE + sizeof(struct tls_conn) + 2 * sizeof(uint32_t));
}

int tls_worker_init(struct worker *w)
{
    struct tls_worker *tw = sys_map(sizeof *tw);
    if (!tw)
        return -1;
    w->tls = tw;
    tw->tc = sys_map((size_t)w->nconns * sizeof *tw->tc);
    tw->bufs = sys_map((size_t)w->nconns * TLS_BUF_SIZE);
    tw->free_stack = sys_map((size_t)w->nconns * sizeof *tw->free_stack);
    tw->ready = sys_map((size_t)w->nconns * sizeof *tw->ready);
    tw->in_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "pith-in");
    if (!tw->tc || !tw->bufs || !tw->free_stack || !tw->ready || !tw->in_method)
        return -1;
    BIO_meth_set_read(tw->in_method, in_read);
    BIO_meth_set_ctrl(tw->in_method, in_ctrl);
    return 0;
}

static void arm_seconds(struct worker *w, struct conn *c, unsigned s)
{
    timer_arm(&w->wheel, &c->timer, w->now_ms + (int64_t)s * 1000);
}

int tls_conn_start(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    bool ready = tc->ready; /* the ready list may still name this slot */
    *tc = (struct tls_conn){.ready = ready, .handshaking = true};
    struct tls_server *ts = w->srv->tls;
    tc->ssl = SSL_new(tls_server_first(ts));
    BIO *rb = BIO_new(w->tls->in_method);
    BIO *wb = BIO_new_socket(c->fd, BIO_NOCLOSE);
    if (!tc->ssl || !rb || !wb) {
        BIO_free(rb);
        BIO_free(wb);
        ERR_clear_error();
        return -1;
    }
    BIO_set_data(rb, tc);
    BIO_set_init(rb, 1);
    SSL_set_bio(tc->ssl, rb, wb);
    SSL_set_accept_state(tc->ssl);
    /* The handshake has its own deadline; the header timeout starts after.
     * A PROXY header comes first, under the header timeout (proxy_header). */
    if (!c->proxy_pending)
        arm_seconds(w, c, w->set->timeout_handshake);
    return 0;
}

/* A close_notify before our side ends, so a client reading to the end of
 * the stream knows it was not cut. Only after a whole response (or none):
 * a connection cut in the middle of one (a send timeout, an error) must
 * look cut, and with kernel TLS an io_uring send may still be in flight.
 * Nor after a failed handshake or a broken send. A full socket simply
 * drops it (never waited for). */
static void tls_ending(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    bool mid_response = in_response(c);
    if (!tc->ssl || tc->handshaking || tc->pending || tc->broken || mid_response)
        return;
    ERR_clear_error();
    SSL_shutdown(tc->ssl);
    ERR_clear_error();
}

static void tls_release(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    SSL_free(tc->ssl);
    tc->ssl = NULL;
    put_buf(w->tls, tc);
}

/* One line a second at most: "TLS handshake with 1.2.3.4:5 failed: <why>". */
static void log_failure(struct worker *w, struct conn *c, const char *why)
{
    struct tls_worker *tw = w->tls;
    if (w->now_ms < tw->log_after_ms) {
        tw->suppressed++;
        return;
    }
    tw->log_after_ms = w->now_ms + 1000;
    char peer[64] = "?", line[400];
    if (c->peer.ss_family == AF_UNSPEC)
        sys_peer_addr(c->fd, &c->peer);
    if (c->peer.ss_family != AF_UNSPEC)
        sys_addr_text(&c->peer, peer, sizeof peer);
    snprintf(line, sizeof line, "TLS handshake with %s failed: %s", peer, why);
    if (tw->suppressed) {
        size_t n = strlen(line);
        snprintf(line + n, sizeof line - n, " (%llu more in the last second not logged)",
                 (unsigned long long)tw->suppressed);
        tw->suppressed = 0;
    }
    log_error(line);
}

static void count_failure(struct worker *w, struct conn *c, const char *why)
{
    w->tls->failed++;
    stats_add(&w->stats->tls_failed, 1);
    log_failure(w, c, why);
}

static void handshake_failed(struct worker *w, struct conn *c, const char *why)
{
    count_failure(w, c, why);
    conn_close(w, c, CLOSE_ERROR);
}

/* --timeout-handshake passed. A client that sent part of a handshake (or
 * a whole one and never read the answer) failed it; one that sent nothing
 * at all is a probe (a port scan, a browser's spare connection), as when
 * it closes without a byte: closed, not counted. Both close as timeouts. */
static bool tls_timeout(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    if (!tc->ssl || !tc->handshaking || c->state != CONN_READ)
        return false; /* after the handshake: the header, keep-alive and send deadlines */
    if (c->proxy_pending) {
        conn_close(w, c, CLOSE_TIMEOUT); /* no whole PROXY header: a silent close */
        return true;
    }
    if (tc->first_seen)
        count_failure(w, c, "the handshake timed out");
    conn_close(w, c, CLOSE_TIMEOUT);
    return true;
}

/* A client that speaks plain HTTP to the TLS port gets told so (as nginx
 * does), in plain text, and the connection ends. */
static void plain_http(struct worker *w, struct conn *c)
{
    static const char body[] = "This port speaks HTTPS; the request was sent as plain HTTP.\n";
    char msg[256];
    int n = snprintf(msg, sizeof msg,
                     "HTTP/1.1 400 Bad Request\r\nServer: " SERVER_NAME
                     "\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n%s",
                     sizeof body - 1, body);
    w->tls->plain_http++;
    stats_add(&w->stats->tls_plain_http, 1);
    sys_send(c->fd, msg, (size_t)n, false);
    /* What the client sent after its head must not turn our close into a
     * reset that could destroy the answer before it is read. */
    conn_linger(w, c, CLOSE_DONE);
}

static void read_plaintext(struct worker *w, struct conn *c);

static void established(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    struct tls_worker *tw = w->tls;
    tc->handshaking = false;
    tc->ctx = (int8_t)tls_ctx_index(w->srv->tls, SSL_get_SSL_CTX(tc->ssl));
    tc->ktls_send = BIO_get_ktls_send(SSL_get_wbio(tc->ssl)) != 0;
    tw->handshakes++;
    stats_add(&w->stats->tls_handshakes, 1);
    if (tc->ktls_send)
        tw->ktls++;
    else
        tw->userspace++; /* the fallback, counted */
    stats_add(tc->ktls_send ? &w->stats->tls_ktls : &w->stats->tls_userspace, 1);
    /* Now the usual deadlines: a whole head within timeout_header. */
    c->head_started_ms = w->now_ms;
    arm_seconds(w, c, w->set->timeout_header);
}

/* --proxy-protocol on the TLS port: the load balancer's header comes in
 * clear before the ClientHello, so it is read from the ciphertext buffer,
 * by the same rules as on the plain port (client.c), under the header
 * timeout that started at the accept; the handshake's own deadline starts
 * once it is in. True when the handshake may go on with what follows. */
static bool proxy_header(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    char *in = tc->buf + TLS_OUT_SIZE;
    uint32_t len = (uint32_t)(tc->in_len - tc->in_off);
    mem_move(in, in + tc->in_off, len);
    enum client_step step = client_proxy_header(w, c, in, &len, TLS_IN_SIZE);
    tc->in_off = 0;
    tc->in_len = (uint16_t)len;
    if (step == CLIENT_CLOSED)
        return false;
    if (step == CLIENT_WAIT) {
        w->loop->want_read(w, c);
        return false;
    }
    /* No header (a client that reached the port directly): the handshake,
     * then a 400 to its first request, as the plain port answers. */
    c->proxy_missing = step == CLIENT_MISSING;
    arm_seconds(w, c, w->set->timeout_handshake);
    if (len == 0) {
        w->loop->want_read(w, c);
        return false;
    }
    return true;
}

/* A tls-alpn-01 validation (issue 35; RFC 8737 §3): its handshake was
 * all there is to it. Nothing is served on the connection: close_notify,
 * then the close. True when c was one (then closed). */
static bool acme_challenge_done(struct worker *w, struct conn *c)
{
    const unsigned char *p;
    unsigned n;
    SSL_get0_alpn_selected(tconn(w, c)->ssl, &p, &n);
    if (n != 10 || memcmp(p, "acme-tls/1", 10) != 0)
        return false;
    ERR_clear_error();
    SSL_shutdown(tconn(w, c)->ssl);
    ERR_clear_error();
    conn_close(w, c, CLOSE_DONE);
    return true;
}

/* Drives the handshake. True when it is done and c is open. */
static bool handshake(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    if (unlikely(c->proxy_pending) && !proxy_header(w, c))
        return false;
    if (!tc->first_seen && tc->in_len > tc->in_off) {
        unsigned char b = (unsigned char)tc->buf[TLS_OUT_SIZE + tc->in_off];
        tc->first_seen = true;
        if (b >= 'A' && b <= 'Z') {
            plain_http(w, c);
            return false;
        }
        if (b != 0x16) { /* not a handshake record: garbage */
            handshake_failed(w, c, "not a TLS handshake (garbage)");
            return false;
        }
    }
    errors_clear();
    int r = SSL_do_handshake(tc->ssl);
    if (r == 1) {
        established(w, c);
        return !acme_challenge_done(w, c);
    }
    char why[200];
    switch (SSL_get_error(tc->ssl, r)) {
    case SSL_ERROR_WANT_READ: w->loop->want_read(w, c); return false;
    case SSL_ERROR_WANT_WRITE: w->loop->want_write(w, c); return false;
    case SSL_ERROR_SYSCALL:
        if (ERR_peek_error() == 0) {
            handshake_failed(w, c, "the connection broke");
            return false;
        }
        /* fall through */
    default: handshake_failed(w, c, tls_ssl_reason(why, sizeof why)); return false;
    }
}

/* A client's KeyUpdate asked for ours, which RFC 8446 4.6.3 wants sent
 * before our next application data. With kernel TLS sending, that cannot
 * be done: Linux 6.1 takes no new key on a kernel TLS socket, and OpenSSL
 * 3.0 sends the KeyUpdate only from SSL_write, which this path does not
 * use. The connection ends instead (a response in flight is cut), rather
 * than go on under the key the client asked to leave; the client
 * reconnects. Userspace TLS answers it with its next SSL_write. */
static bool key_update_unanswerable(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    if (!tc->ktls_send || SSL_get_key_update_type(tc->ssl) == SSL_KEY_UPDATE_NONE)
        return false;
    w->tls->key_update_closed++;
    bool mid_response = in_response(c);
    conn_close(w, c, mid_response ? CLOSE_ERROR : CLOSE_DONE);
    return true;
}

/* Decrypts what OpenSSL can into the connection's input, for as long as it
 * has room. */
static void read_plaintext(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    bool got = false;
    tc->read_wants_write = false; /* this read decides again */
    while (c->state == CONN_READ || c->state == CONN_WRITE) {
        size_t room, n = 0;
        char *p = conn_input_room(w, c, &room);
        if (room == 0)
            break; /* the rest waits in OpenSSL or the TLS buffer (tls_want_read) */
        errors_clear();
        int r = SSL_read_ex(tc->ssl, p, room, &n);
        if (key_update_unanswerable(w, c))
            return;
        if (r == 1) {
            got = true;
            conn_input_done(w, c, (ssize_t)n);
            continue;
        }
        int e = SSL_get_error(tc->ssl, r);
        if (e == SSL_ERROR_WANT_WRITE) {
            /* OpenSSL has a message to send before it reads on (a
             * post-handshake one, such as a KeyUpdate) and the socket is
             * full: the read resumes when the socket has room, which a
             * wait for bytes would never notice (the client may send
             * nothing until it gets its answer). */
            tc->read_wants_write = true;
            break;
        }
        if (e == SSL_ERROR_WANT_READ)
            break;
        ERR_clear_error();
        tc->broken = e != SSL_ERROR_ZERO_RETURN;
        /* close_notify is the end of the stream; anything else an error */
        conn_input_done(w, c, e == SSL_ERROR_ZERO_RETURN ? 0 : -EPROTO);
        return;
    }
    if (!got && c->state == CONN_READ)
        conn_input_done(w, c, -EAGAIN); /* tls_want_read: for room, if the read waits for it */
    else if (tc->read_wants_write && c->state == CONN_READ)
        w->loop->want_write(w, c);
    /* While a response is in flight the connection waits for the socket
     * anyway; back in READ, tls_want_read asks for room. */
}

static void pump(struct worker *w, struct conn *c)
{
    if (tconn(w, c)->handshaking && !handshake(w, c))
        return;
    read_plaintext(w, c);
}

/* ---- the transport ------------------------------------------------------------------ */

static char *tls_recv_room(struct worker *w, struct conn *c, size_t *room)
{
    struct tls_conn *tc = tconn(w, c);
    take_buf(w->tls, tc);
    char *in = tc->buf + TLS_OUT_SIZE;
    if (tc->in_off) {
        memmove(in, in + tc->in_off, (size_t)(tc->in_len - tc->in_off));
        tc->in_len = (uint16_t)(tc->in_len - tc->in_off);
        tc->in_off = 0;
    }
    *room = TLS_IN_SIZE - tc->in_len;
    return in + tc->in_len;
}

static void tls_received(struct worker *w, struct conn *c, ssize_t n)
{
    struct tls_conn *tc = tconn(w, c);
    if (c->state == CONN_LINGER || !tc->ssl) {
        conn_input_done(w, c, n); /* lingering: the bytes were dropped */
        return;
    }
    if (n > 0) {
        tc->in_len = (uint16_t)(tc->in_len + n);
        pump(w, c);
    } else if (tc->handshaking) {
        if (n == -EAGAIN || n == -EINTR)
            w->loop->want_read(w, c);
        else if (n == 0 && !tc->first_seen)
            conn_close(w, c, CLOSE_PEER); /* a probe that sent nothing: not an error */
        else
            handshake_failed(w, c, "the client closed the connection during the handshake");
    } else {
        conn_input_done(w, c, n);
    }
    if (c->state != CONN_CLOSING && c->state != CONN_FREE)
        maybe_release(w->tls, tc);
}

/* Writes the staged record; returns the bytes owed to the connection (its
 * send result), -EAGAIN (writable() finishes it), or -errno. */
static ssize_t flush(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    size_t written;
    errors_clear();
    int r = SSL_write_ex(tc->ssl, tc->buf, tc->out_len, &written);
    if (r == 1) {
        ssize_t owed = tc->owed;
        tc->out_len = tc->held = tc->owed = 0;
        tc->pending = false;
        tc->read_wants_write = false; /* SSL_write sent OpenSSL's own message first */
        return owed;
    }
    if (SSL_get_error(tc->ssl, r) == SSL_ERROR_WANT_WRITE) {
        tc->pending = true;
        w->loop->want_write(w, c);
        return -EAGAIN;
    }
    ERR_clear_error();
    tc->broken = true;
    return -EPIPE;
}

static ssize_t tls_send(struct worker *w, struct conn *c, const struct iovec *iov, unsigned n,
                        bool more)
{
    struct tls_conn *tc = tconn(w, c);
    if (tc->ktls_send)
        return w->loop->send(w, c, iov, n, more); /* the kernel makes the records */
    if (tc->pending)
        return -EAGAIN;
    take_buf(w->tls, tc);
    size_t copied = 0, total = 0;
    for (unsigned i = 0; i < n; i++) {
        total += iov[i].iov_len;
        size_t k = TLS_OUT_SIZE - tc->out_len;
        k = iov[i].iov_len < k ? iov[i].iov_len : k;
        memcpy(tc->buf + tc->out_len, iov[i].iov_base, k);
        tc->out_len = (uint16_t)(tc->out_len + k);
        copied += k;
    }
    if (more && copied == total && tc->out_len < TLS_OUT_SIZE) {
        /* A head before a file body: it goes in the body's first record. */
        tc->held = (uint16_t)(tc->held + copied);
        return (ssize_t)copied;
    }
    tc->owed = (uint16_t)copied;
    ssize_t r = flush(w, c);
    maybe_release(w->tls, tc);
    return r;
}

/* One record of the file at off (after a held head): the bytes of the file
 * it carried, -EAGAIN while it waits for writability, 0 when the file
 * shrank, or -errno. */
static ssize_t file_record(struct worker *w, struct conn *c, int fd, uint64_t off, size_t n)
{
    struct tls_conn *tc = tconn(w, c);
    size_t k = TLS_OUT_SIZE - tc->out_len;
    k = n < k ? n : k;
    ssize_t got = sys_pread(fd, tc->buf + tc->out_len, k, off);
    if (got <= 0)
        return got;
    tc->out_len = (uint16_t)(tc->out_len + got);
    tc->owed = (uint16_t)got;
    return flush(w, c);
}

/* Up to TLS_RECORDS_PER_PUSH records per call, written while the socket is
 * corked: the kernel then sends them in full segments with one push (and
 * wakes the client once) instead of once per record, which on a 1 MiB body
 * costs a quarter of the CPU. */
static ssize_t tls_sendfile(struct worker *w, struct conn *c, int fd, uint64_t *off, size_t n)
{
    struct tls_conn *tc = tconn(w, c);
    if (tc->ktls_send)
        return w->loop->sendfile(w, c, fd, off, n); /* sendfile through kernel TLS */
    if (tc->pending)
        return -EAGAIN;
    take_buf(w->tls, tc);
    bool corked = n > (size_t)(TLS_OUT_SIZE - tc->out_len) && sys_set_cork(c->fd, true) == 0;
    ssize_t sent = 0;
    for (unsigned i = 0; i < TLS_RECORDS_PER_PUSH && (size_t)sent < n; i++) {
        ssize_t r = file_record(w, c, fd, *off, n - (size_t)sent);
        if (r <= 0) {
            /* What went before counts; the next call meets this again. */
            sent = sent ? sent : r;
            break;
        }
        *off += (uint64_t)r;
        sent += r;
    }
    if (corked)
        sys_set_cork(c->fd, false);
    maybe_release(w->tls, tc);
    return sent;
}

static void tls_writable(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    if (tc->handshaking) {
        pump(w, c);
        return;
    }
    if (tc->read_wants_write && c->state == CONN_READ) {
        read_plaintext(w, c); /* OpenSSL sends its message, then reads on */
        if (c->state == CONN_CLOSING || c->state == CONN_FREE)
            return;
        maybe_release(w->tls, tc);
        /* A record waiting for the same room (only a duplex connection,
         * HTTP/2, has one while it reads) goes next. */
        if (!tc->pending)
            return;
    }
    if (!tc->pending) {
        conn_writable(w, c);
        return;
    }
    ssize_t r = flush(w, c);
    if (r == -EAGAIN)
        return;
    if (r < 0) {
        conn_close(w, c, CLOSE_ERROR);
        return;
    }
    maybe_release(w->tls, tc);
    conn_sent(w, c, r);
}

/* Bytes OpenSSL (or the TLS buffer) already holds arrive without a socket
 * event: such a connection is served from the ready list. */
static void tls_want_read(struct worker *w, struct conn *c)
{
    struct tls_conn *tc = tconn(w, c);
    struct tls_worker *tw = w->tls;
    if (tc->read_wants_write) {
        /* Nothing can be read before OpenSSL's message has gone: the
         * connection waits for room (epoll watches one direction: this
         * one; io_uring keeps its receive armed beside the poll). */
        w->loop->want_read(w, c);
        w->loop->want_write(w, c);
        return;
    }
    if (tc->ssl && !tc->handshaking && !tc->ready &&
        (tc->in_len > tc->in_off || SSL_pending(tc->ssl) > 0)) {
        tc->ready = true;
        tw->ready[tw->nready++] = (uint32_t)(c - w->conns);
    }
    w->loop->want_read(w, c);
}

const char *tls_conn_version(const struct worker *w, const struct conn *c)
{
    if (c->tp != &transport_tls)
        return NULL;
    const struct tls_conn *tc = &w->tls->tc[c - w->conns];
    return tc->ssl && !tc->handshaking ? SSL_get_version(tc->ssl) : NULL;
}

int tls_conn_ctx(const struct worker *w, const struct conn *c)
{
    return c->tp == &transport_tls ? w->tls->tc[c - w->conns].ctx : -1;
}

bool tls_conn_alpn_h2(const struct worker *w, const struct conn *c)
{
    if (c->tp != &transport_tls || !w->tls->tc[c - w->conns].ssl)
        return false;
    const unsigned char *p;
    unsigned n;
    SSL_get0_alpn_selected(w->tls->tc[c - w->conns].ssl, &p, &n);
    return n == 2 && p[0] == 'h' && p[1] == '2';
}

bool tls_has_ready(const struct worker *w)
{
    return w->tls && w->tls->nready;
}

void tls_run_ready(struct worker *w)
{
    struct tls_worker *tw = w->tls;
    while (tw && tw->nready) {
        struct conn *c = &w->conns[tw->ready[--tw->nready]];
        struct tls_conn *tc = tconn(w, c);
        tc->ready = false;
        /* The slot may be another connection's by now (this one closed
         * and a new one took it): only an established connection reads
         * here; one still in its handshake is driven by handshake(). */
        if (c->tp == &transport_tls && tc->ssl && !tc->handshaking && c->state == CONN_READ) {
            read_plaintext(w, c);
            if (c->state != CONN_CLOSING && c->state != CONN_FREE)
                maybe_release(tw, tc);
        }
    }
}

void tls_worker_report(const struct worker *w)
{
    const struct tls_worker *tw = w->tls;
    if (!tw)
        return;
    char line[300];
    snprintf(line, sizeof line,
             "worker %u (pid %d) TLS: handshakes=%llu failed=%llu plain_http=%llu "
             "kernel_tls=%llu userspace_tls=%llu key_update_closed=%llu",
             w->index, sys_getpid(), (unsigned long long)tw->handshakes,
             (unsigned long long)tw->failed, (unsigned long long)tw->plain_http,
             (unsigned long long)tw->ktls, (unsigned long long)tw->userspace,
             (unsigned long long)tw->key_update_closed);
    log_error(line);
}

void tls_worker_exit(struct worker *w)
{
    struct tls_worker *tw = w->tls;
    if (!tw)
        return;
    for (uint32_t i = 0; i < w->next_unused; i++) {
        SSL_free(tw->tc[i].ssl);
        tw->tc[i].ssl = NULL;
    }
    BIO_meth_free(tw->in_method);
    tw->in_method = NULL;
    tls_server_free(w->srv->tls);
}

const struct transport_ops transport_tls = {
    .name = "tls",
    .send = tls_send,
    .sendfile = tls_sendfile,
    .recv_room = tls_recv_room,
    .received = tls_received,
    .sent = conn_sent,
    .writable = tls_writable,
    .want_read = tls_want_read,
    .ending = tls_ending,
    .timeout = tls_timeout,
    .release = tls_release,
};

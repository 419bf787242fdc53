/* SPDX-License-Identifier: MIT */
/*
 * h3client - an HTTP/3 client over ngtcp2 (GnuTLS) and nghttp3 for pith's
 * tests and benchmarks (issue 34). Not part of pith: a tool, built as
 * build/h3client by the Makefile, that speaks QUIC the way a real client
 * does (ngtcp2 makes every packet) and lets a test see and shape what
 * libcurl hides.
 *
 *   h3client stdio PORT [--sni NAME] [--ca FILE] [--addr IP]
 *       One connection; requests come on stdin, answers go to stdout
 *       (tests/h3_adapter.py drives it: the black-box suite over HTTP/3).
 *       Every token is hex, "-" when empty.
 *         in:  R TAG N NAME VALUE ... (N fields, pseudo-fields first) BODY
 *              C                         close (H3_NO_ERROR) and exit
 *         out: READY | FAIL WHY
 *              H TAG NAME VALUE          one response field, as decoded
 *              E TAG LEN\n<LEN bytes>    the stream ended: the body
 *              X TAG CODE                the stream ended with an error (reset)
 *              CLOSED KIND CODE REASON   the connection ended (KIND: transport,
 *                                        application, idle, handshake)
 *
 *   h3client load PORT -c CONNS -m STREAMS (-n REQUESTS | -d SECONDS) PATH...
 *       CONNS connections, STREAMS requests in flight on each, PATHs in
 *       turn; prints one line of figures (the bench's HTTP/3 load).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PKT    1452
#define WINDOW     (64u << 20) /* the client's flow-control windows: no download waits */
#define MAX_FIELDS 256

static const char *sni = "localhost", *cafile, *server_ip = "127.0.0.1";
static unsigned server_port;
static gnutls_certificate_credentials_t cred;
static bool debug;

__attribute__((format(printf, 1, 2))) static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("h3client: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory");
    return p;
}

/* ---- a growing byte buffer ------------------------------------------------------------- */

struct bytes {
    uint8_t *p;
    size_t n, cap;
};

static void bytes_add(struct bytes *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p)
            die("out of memory");
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

/* ---- connections and streams ----------------------------------------------------------- */

struct conn;

struct stream {
    struct conn *c;
    int64_t id;
    char tag[32];
    struct bytes body; /* the response's body (stdio mode) */
    struct bytes req;  /* the request's body, sent from req_off */
    size_t req_off;
    bool ended, reported; /* end_stream seen; an event written */
    uint64_t status;
    struct stream *next;
};

struct conn {
    int fd;
    struct sockaddr_storage local, remote;
    socklen_t local_len, remote_len;
    ngtcp2_conn *qc;
    nghttp3_conn *h3;
    gnutls_session_t tls;
    ngtcp2_crypto_conn_ref ref;
    ngtcp2_ccerr last_error;
    bool ready, closed, failed;
    struct stream *streams;
    /* Requests waiting for a stream id (the server's MAX_STREAMS). */
    struct pending *queue, *queue_tail;
    /* load mode */
    unsigned inflight, done, next_path;
    uint64_t bytes;
};

struct pending {
    char tag[32];
    nghttp3_nv nv[MAX_FIELDS];
    size_t nnv;
    struct bytes store; /* the names and values */
    struct bytes body;
    struct pending *next;
};

/* The mode's reactions (stdio writes events, load counts and refills). */
struct mode {
    void (*ready)(struct conn *c);
    void (*begin)(struct stream *s);
    void (*field)(struct stream *s, const uint8_t *n, size_t nl, const uint8_t *v, size_t vl);
    void (*closed)(struct stream *s, uint64_t code);
    void (*conn_end)(struct conn *c, const char *kind, uint64_t code, const uint8_t *r, size_t rl);
};
static const struct mode *mode;

static void stream_free(struct conn *c, struct stream *s)
{
    struct stream **pp = &c->streams;
    while (*pp != s)
        pp = &(*pp)->next;
    *pp = s->next;
    free(s->body.p);
    free(s->req.p);
    free(s);
}

/* ---- ngtcp2's callbacks ------------------------------------------------------------------ */

static void rand_cb(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx)
{
    (void)ctx;
    if (getrandom(dest, len, 0) != (ssize_t)len)
        die("getrandom");
}

static int get_new_connection_id(ngtcp2_conn *qc, ngtcp2_cid *cid, uint8_t *token, size_t len,
                                 void *ud)
{
    (void)qc, (void)ud;
    cid->datalen = 8;
    rand_cb(cid->data, cid->datalen, NULL);
    rand_cb(token, len, NULL);
    return 0;
}

static int recv_stream_data(ngtcp2_conn *qc, uint32_t flags, int64_t id, uint64_t offset,
                            const uint8_t *data, size_t len, void *ud, void *sud)
{
    (void)qc, (void)offset, (void)sud;
    struct conn *c = ud;
    if (!c->h3)
        return 0;
    nghttp3_ssize n =
        nghttp3_conn_read_stream(c->h3, id, data, len, flags & NGTCP2_STREAM_DATA_FLAG_FIN);
    if (n < 0) {
        if (debug)
            fprintf(stderr, "h3client: nghttp3_conn_read_stream: %s\n", nghttp3_strerror((int)n));
        ngtcp2_ccerr_set_application_error(&c->last_error,
                                           nghttp3_err_infer_quic_app_error_code((int)n), NULL, 0);
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    ngtcp2_conn_extend_max_stream_offset(qc, id, (uint64_t)n);
    ngtcp2_conn_extend_max_offset(qc, (uint64_t)n);
    return 0;
}

static int acked_stream_data_offset(ngtcp2_conn *qc, int64_t id, uint64_t offset, uint64_t n,
                                    void *ud, void *sud)
{
    (void)qc, (void)offset, (void)sud;
    struct conn *c = ud;
    if (c->h3 && nghttp3_conn_add_ack_offset(c->h3, id, n) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int stream_close_cb(ngtcp2_conn *qc, uint32_t flags, int64_t id, uint64_t code, void *ud,
                           void *sud)
{
    (void)qc, (void)sud;
    struct conn *c = ud;
    if (!(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET))
        code = NGHTTP3_H3_NO_ERROR;
    if (c->h3) {
        int rv = nghttp3_conn_close_stream(c->h3, id, code);
        if (rv != 0 && rv != NGHTTP3_ERR_STREAM_NOT_FOUND)
            return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    return 0;
}

static int stream_reset_cb(ngtcp2_conn *qc, int64_t id, uint64_t final_size, uint64_t code,
                           void *ud, void *sud)
{
    (void)qc, (void)final_size, (void)code, (void)sud;
    struct conn *c = ud;
    if (c->h3 && nghttp3_conn_shutdown_stream_read(c->h3, id) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int stream_stop_sending_cb(ngtcp2_conn *qc, int64_t id, uint64_t code, void *ud, void *sud)
{
    return stream_reset_cb(qc, id, 0, code, ud, sud);
}

static int extend_max_stream_data(ngtcp2_conn *qc, int64_t id, uint64_t max, void *ud, void *sud)
{
    (void)qc, (void)max, (void)sud;
    struct conn *c = ud;
    if (c->h3 && nghttp3_conn_unblock_stream(c->h3, id) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static void submit_queued(struct conn *c);

static int extend_max_local_streams_bidi(ngtcp2_conn *qc, uint64_t max, void *ud)
{
    (void)qc, (void)max;
    struct conn *c = ud;
    if (c->h3)
        submit_queued(c);
    return 0;
}

static int h3_setup(struct conn *c);

static int handshake_completed(ngtcp2_conn *qc, void *ud)
{
    (void)qc;
    struct conn *c = ud;
    if (h3_setup(c) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    c->ready = true;
    if (mode->ready)
        mode->ready(c);
    submit_queued(c);
    return 0;
}

static int attack_encrypt(uint8_t *dest, const ngtcp2_crypto_aead *aead,
                          const ngtcp2_crypto_aead_ctx *aead_ctx, const uint8_t *plaintext,
                          size_t plaintextlen, const uint8_t *nonce, size_t noncelen,
                          const uint8_t *aad, size_t aadlen);

static ngtcp2_callbacks client_callbacks(void)
{
    return (ngtcp2_callbacks){
        .client_initial = ngtcp2_crypto_client_initial_cb,
        .recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb,
        .handshake_completed = handshake_completed,
        .encrypt = attack_encrypt,
        .decrypt = ngtcp2_crypto_decrypt_cb,
        .hp_mask = ngtcp2_crypto_hp_mask_cb,
        .recv_stream_data = recv_stream_data,
        .acked_stream_data_offset = acked_stream_data_offset,
        .stream_close = stream_close_cb,
        .recv_retry = ngtcp2_crypto_recv_retry_cb,
        .extend_max_local_streams_bidi = extend_max_local_streams_bidi,
        .rand = rand_cb,
        .get_new_connection_id = get_new_connection_id,
        .update_key = ngtcp2_crypto_update_key_cb,
        .stream_reset = stream_reset_cb,
        .extend_max_stream_data = extend_max_stream_data,
        .delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb,
        .delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb,
        .get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb,
        .stream_stop_sending = stream_stop_sending_cb,
        .version_negotiation = ngtcp2_crypto_version_negotiation_cb,
    };
}

/* ---- nghttp3's callbacks ------------------------------------------------------------------ */

static int h_stream_close(nghttp3_conn *h3, int64_t id, uint64_t code, void *ud, void *sud)
{
    (void)h3, (void)id;
    struct conn *c = ud;
    struct stream *s = sud;
    if (s) {
        if (mode->closed)
            mode->closed(s, code);
        stream_free(c, s);
    }
    return 0;
}

static int h_recv_data(nghttp3_conn *h3, int64_t id, const uint8_t *data, size_t n, void *ud,
                       void *sud)
{
    (void)h3;
    struct conn *c = ud;
    struct stream *s = sud;
    if (s && mode->field == NULL)
        c->bytes += n; /* load mode counts, keeps nothing */
    else if (s)
        bytes_add(&s->body, data, n);
    ngtcp2_conn_extend_max_stream_offset(c->qc, id, n);
    ngtcp2_conn_extend_max_offset(c->qc, n);
    return 0;
}

static int h_deferred_consume(nghttp3_conn *h3, int64_t id, size_t n, void *ud, void *sud)
{
    (void)h3, (void)sud;
    struct conn *c = ud;
    ngtcp2_conn_extend_max_stream_offset(c->qc, id, n);
    ngtcp2_conn_extend_max_offset(c->qc, n);
    return 0;
}

static int h_begin_headers(nghttp3_conn *h3, int64_t id, void *ud, void *sud)
{
    (void)h3, (void)id, (void)ud;
    if (sud && mode->begin)
        mode->begin(sud);
    return 0;
}

static int h_recv_header(nghttp3_conn *h3, int64_t id, int32_t token, nghttp3_rcbuf *name,
                         nghttp3_rcbuf *value, uint8_t flags, void *ud, void *sud)
{
    (void)h3, (void)id, (void)token, (void)flags, (void)ud;
    struct stream *s = sud;
    if (!s)
        return 0;
    nghttp3_vec n = nghttp3_rcbuf_get_buf(name), v = nghttp3_rcbuf_get_buf(value);
    if (n.len == 7 && memcmp(n.base, ":status", 7) == 0) {
        s->status = 0;
        for (size_t i = 0; i < v.len; i++)
            s->status = s->status * 10 + (uint64_t)(v.base[i] - '0');
    }
    if (mode->field)
        mode->field(s, n.base, n.len, v.base, v.len);
    return 0;
}

static int h_end_stream(nghttp3_conn *h3, int64_t id, void *ud, void *sud)
{
    (void)h3, (void)id, (void)ud;
    if (sud)
        ((struct stream *)sud)->ended = true;
    return 0;
}

static int h_stop_sending(nghttp3_conn *h3, int64_t id, uint64_t code, void *ud, void *sud)
{
    (void)h3, (void)sud;
    struct conn *c = ud;
    ngtcp2_conn_shutdown_stream_read(c->qc, 0, id, code);
    return 0;
}

static int h_reset_stream(nghttp3_conn *h3, int64_t id, uint64_t code, void *ud, void *sud)
{
    (void)h3, (void)sud;
    struct conn *c = ud;
    ngtcp2_conn_shutdown_stream_write(c->qc, 0, id, code);
    return 0;
}

static int h3_setup(struct conn *c)
{
    static const nghttp3_callbacks cb = {
        .stream_close = h_stream_close,
        .recv_data = h_recv_data,
        .deferred_consume = h_deferred_consume,
        .begin_headers = h_begin_headers,
        .recv_header = h_recv_header,
        .stop_sending = h_stop_sending,
        .end_stream = h_end_stream,
        .reset_stream = h_reset_stream,
    };
    nghttp3_settings s;
    nghttp3_settings_default(&s);
    s.qpack_max_dtable_capacity = 4096;
    s.qpack_blocked_streams = 100;
    if (nghttp3_conn_client_new(&c->h3, &cb, &s, NULL, c) != 0)
        return -1;
    int64_t ctrl, enc, dec;
    if (ngtcp2_conn_open_uni_stream(c->qc, &ctrl, NULL) != 0 ||
        nghttp3_conn_bind_control_stream(c->h3, ctrl) != 0 ||
        ngtcp2_conn_open_uni_stream(c->qc, &enc, NULL) != 0 ||
        ngtcp2_conn_open_uni_stream(c->qc, &dec, NULL) != 0 ||
        nghttp3_conn_bind_qpack_streams(c->h3, enc, dec) != 0)
        return -1;
    return 0;
}

/* ---- requests ---------------------------------------------------------------------------- */

static nghttp3_ssize read_req_body(nghttp3_conn *h3, int64_t id, nghttp3_vec *vec, size_t veccnt,
                                   uint32_t *pflags, void *ud, void *sud)
{
    (void)h3, (void)id, (void)ud, (void)veccnt;
    struct stream *s = sud;
    vec[0] = (nghttp3_vec){s->req.p + s->req_off, s->req.n - s->req_off};
    s->req_off = s->req.n;
    *pflags |= NGHTTP3_DATA_FLAG_EOF;
    return 1;
}

/* Opens a stream for p and submits it; false when no stream id is free. */
static bool submit(struct conn *c, struct pending *p)
{
    int64_t id;
    if (ngtcp2_conn_open_bidi_stream(c->qc, &id, NULL) != 0)
        return false;
    struct stream *s = xmalloc(sizeof *s);
    *s = (struct stream){.c = c, .id = id, .next = c->streams};
    snprintf(s->tag, sizeof s->tag, "%s", p->tag);
    c->streams = s;
    /* the names and values were stored as offsets: make them pointers */
    nghttp3_nv nv[MAX_FIELDS];
    for (size_t i = 0; i < p->nnv; i++) {
        nv[i] = p->nv[i];
        nv[i].name = p->store.p + (uintptr_t)p->nv[i].name;
        nv[i].value = p->store.p + (uintptr_t)p->nv[i].value;
    }
    nghttp3_data_reader dr = {.read_data = read_req_body};
    if (p->body.n) {
        s->req = p->body;
        p->body = (struct bytes){0};
    }
    if (nghttp3_conn_submit_request(c->h3, id, nv, p->nnv, s->req.n ? &dr : NULL, s) != 0)
        die("nghttp3_conn_submit_request failed");
    return true;
}

static void submit_queued(struct conn *c)
{
    while (c->queue && submit(c, c->queue)) {
        struct pending *p = c->queue;
        c->queue = p->next;
        if (!c->queue)
            c->queue_tail = NULL;
        free(p->store.p);
        free(p->body.p);
        free(p);
    }
}

static struct pending *pending_new(const char *tag)
{
    struct pending *p = xmalloc(sizeof *p);
    *p = (struct pending){0};
    snprintf(p->tag, sizeof p->tag, "%s", tag);
    return p;
}

static void pending_field(struct pending *p, const void *n, size_t nl, const void *v, size_t vl)
{
    if (p->nnv == MAX_FIELDS)
        die("more than %d fields", MAX_FIELDS);
    /* offsets now, pointers at submit (the store may move) */
    p->nv[p->nnv] =
        (nghttp3_nv){(uint8_t *)(uintptr_t)p->store.n, NULL, nl, vl, NGHTTP3_NV_FLAG_NONE};
    bytes_add(&p->store, n, nl);
    p->nv[p->nnv].value = (uint8_t *)(uintptr_t)p->store.n;
    bytes_add(&p->store, v, vl);
    p->nnv++;
}

static void request(struct conn *c, struct pending *p)
{
    if (c->queue_tail)
        c->queue_tail->next = p;
    else
        c->queue = p;
    c->queue_tail = p;
    if (c->h3)
        submit_queued(c);
}

/* ---- the wire ------------------------------------------------------------------------------ */

static int epfd = -1;

static void conn_report_end(struct conn *c, const char *kind)
{
    if (c->closed)
        return;
    c->closed = true;
    if (mode->conn_end) {
        const ngtcp2_ccerr *e = ngtcp2_conn_get_ccerr(c->qc);
        mode->conn_end(c, kind, e->error_code, e->reason, e->reasonlen);
    }
}

static void conn_send(struct conn *c, const uint8_t *p, size_t n)
{
    for (;;) {
        ssize_t r = send(c->fd, p, n, 0);
        if (r >= 0 || errno != EINTR)
            return; /* EAGAIN and errors: a loss, which QUIC recovers */
    }
}

static void conn_write(struct conn *c);

static ngtcp2_ssize write_one(struct conn *c, uint8_t *buf, size_t max)
{
    for (;;) {
        int64_t sid = -1;
        int fin = 0;
        nghttp3_vec vec[16];
        nghttp3_ssize cnt = 0;
        if (c->h3 && ngtcp2_conn_get_max_data_left(c->qc)) {
            cnt = nghttp3_conn_writev_stream(c->h3, &sid, &fin, vec, 16);
            if (cnt < 0)
                return NGTCP2_ERR_CALLBACK_FAILURE;
        }
        uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE | (fin ? NGTCP2_WRITE_STREAM_FLAG_FIN : 0);
        ngtcp2_ssize ndata = -1;
        ngtcp2_path_storage ps;
        ngtcp2_path_storage_zero(&ps);
        ngtcp2_pkt_info pi;
        ngtcp2_ssize n =
            ngtcp2_conn_writev_stream(c->qc, &ps.path, &pi, buf, max, &ndata, flags, sid,
                                      (const ngtcp2_vec *)vec, (size_t)cnt, now_ns());
        if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED) {
            nghttp3_conn_block_stream(c->h3, sid);
            continue;
        }
        if (n == NGTCP2_ERR_STREAM_SHUT_WR) {
            nghttp3_conn_shutdown_stream_write(c->h3, sid);
            continue;
        }
        if (ndata >= 0 && sid >= 0 && nghttp3_conn_add_write_offset(c->h3, sid, (size_t)ndata))
            return NGTCP2_ERR_CALLBACK_FAILURE;
        if (n == NGTCP2_ERR_WRITE_MORE)
            continue;
        return n;
    }
}

static void conn_write(struct conn *c)
{
    if (c->closed)
        return;
    uint8_t buf[MAX_PKT];
    for (int i = 0; i < 64; i++) {
        ngtcp2_ssize n = write_one(c, buf, sizeof buf);
        if (n < 0) {
            if (debug)
                fprintf(stderr, "h3client: write: %s\n", ngtcp2_strerror((int)n));
            conn_report_end(c, "internal");
            return;
        }
        if (n == 0)
            break;
        conn_send(c, buf, (size_t)n);
    }
    ngtcp2_conn_update_pkt_tx_time(c->qc, now_ns());
}

static void conn_read(struct conn *c)
{
    uint8_t buf[65536];
    for (int i = 0; i < 64 && !c->closed; i++) {
        ssize_t n = recv(c->fd, buf, sizeof buf, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != ECONNREFUSED)
                conn_report_end(c, "internal");
            break;
        }
        ngtcp2_path path = {{(ngtcp2_sockaddr *)&c->local, c->local_len},
                            {(ngtcp2_sockaddr *)&c->remote, c->remote_len},
                            NULL};
        ngtcp2_pkt_info pi = {0};
        int rv = ngtcp2_conn_read_pkt(c->qc, &path, &pi, buf, (size_t)n, now_ns());
        if (rv == NGTCP2_ERR_DRAINING || rv == NGTCP2_ERR_CLOSING) {
            const ngtcp2_ccerr *e = ngtcp2_conn_get_ccerr(c->qc);
            conn_report_end(c,
                            e->type == NGTCP2_CCERR_TYPE_APPLICATION ? "application" : "transport");
            return;
        }
        if (rv == NGTCP2_ERR_CRYPTO || (rv != 0 && !ngtcp2_conn_get_handshake_completed(c->qc))) {
            if (debug)
                fprintf(stderr, "h3client: read: %s\n", ngtcp2_strerror(rv));
            c->failed = true;
            conn_report_end(c, "handshake");
            return;
        }
        if (rv != 0) {
            if (debug)
                fprintf(stderr, "h3client: read: %s\n", ngtcp2_strerror(rv));
            conn_report_end(c, "internal");
            return;
        }
    }
    conn_write(c);
}

static void conn_expire(struct conn *c)
{
    if (c->closed)
        return;
    int rv = ngtcp2_conn_handle_expiry(c->qc, now_ns());
    if (rv == NGTCP2_ERR_IDLE_CLOSE) {
        conn_report_end(c, c->ready ? "idle" : "handshake");
        return;
    }
    if (rv != 0) {
        conn_report_end(c, c->ready ? "internal" : "handshake");
        return;
    }
    conn_write(c);
}

/* Sends CONNECTION_CLOSE with an application code (H3_NO_ERROR: a clean end). */
static void conn_close(struct conn *c, uint64_t code)
{
    if (c->closed)
        return;
    uint8_t buf[MAX_PKT];
    ngtcp2_ccerr e;
    ngtcp2_ccerr_default(&e);
    ngtcp2_ccerr_set_application_error(&e, code, NULL, 0);
    ngtcp2_path_storage ps;
    ngtcp2_path_storage_zero(&ps);
    ngtcp2_ssize n =
        ngtcp2_conn_write_connection_close(c->qc, &ps.path, NULL, buf, sizeof buf, &e, now_ns());
    if (n > 0)
        conn_send(c, buf, (size_t)n);
    c->closed = true;
}

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref)
{
    return ((struct conn *)ref->user_data)->qc;
}

static void tls_init(void)
{
    if (gnutls_certificate_allocate_credentials(&cred) != 0)
        die("gnutls credentials");
    if (cafile && gnutls_certificate_set_x509_trust_file(cred, cafile, GNUTLS_X509_FMT_PEM) < 0)
        die("cannot read %s", cafile);
}

static struct conn *conn_new(void)
{
    struct conn *c = xmalloc(sizeof *c);
    *c = (struct conn){0};
    ngtcp2_ccerr_default(&c->last_error);
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)server_port)};
    struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)server_port)};
    if (inet_pton(AF_INET, server_ip, &a4.sin_addr) == 1) {
        memcpy(&c->remote, &a4, sizeof a4);
        c->remote_len = sizeof a4;
    } else if (inet_pton(AF_INET6, server_ip, &a6.sin6_addr) == 1) {
        memcpy(&c->remote, &a6, sizeof a6);
        c->remote_len = sizeof a6;
    } else {
        die("bad address %s", server_ip);
    }
    c->fd = socket(c->remote.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&c->remote, c->remote_len) != 0)
        die("socket: %s", strerror(errno));
    int big = 4 << 20;
    setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    c->local_len = sizeof c->local;
    getsockname(c->fd, (struct sockaddr *)&c->local, &c->local_len);

    ngtcp2_cid dcid = {.datalen = 18}, scid = {.datalen = 8};
    rand_cb(dcid.data, dcid.datalen, NULL);
    rand_cb(scid.data, scid.datalen, NULL);
    ngtcp2_settings s;
    ngtcp2_settings_default(&s);
    s.initial_ts = now_ns();
    s.handshake_timeout = 5 * NGTCP2_SECONDS;
    s.cc_algo = NGTCP2_CC_ALGO_CUBIC;
    ngtcp2_transport_params p;
    ngtcp2_transport_params_default(&p);
    p.initial_max_stream_data_bidi_local = WINDOW;
    p.initial_max_stream_data_uni = WINDOW;
    p.initial_max_data = WINDOW;
    p.initial_max_streams_uni = 3;
    p.max_idle_timeout = 60 * NGTCP2_SECONDS;
    ngtcp2_callbacks cb = client_callbacks();
    ngtcp2_path path = {{(ngtcp2_sockaddr *)&c->local, c->local_len},
                        {(ngtcp2_sockaddr *)&c->remote, c->remote_len},
                        NULL};
    if (ngtcp2_conn_client_new(&c->qc, &dcid, &scid, &path, NGTCP2_PROTO_VER_V1, &cb, &s, &p, NULL,
                               c) != 0)
        die("ngtcp2_conn_client_new");

    static const gnutls_datum_t alpn = {(unsigned char *)"h3", 2};
    c->ref = (ngtcp2_crypto_conn_ref){get_conn, c};
    if (gnutls_init(&c->tls,
                    GNUTLS_CLIENT | GNUTLS_ENABLE_EARLY_DATA | GNUTLS_NO_END_OF_EARLY_DATA) != 0 ||
        gnutls_priority_set_direct(
            c->tls, "NORMAL:-VERS-ALL:+VERS-TLS1.3:%DISABLE_TLS13_COMPAT_MODE", NULL) != 0 ||
        ngtcp2_crypto_gnutls_configure_client_session(c->tls) != 0 ||
        gnutls_credentials_set(c->tls, GNUTLS_CRD_CERTIFICATE, cred) != 0 ||
        gnutls_alpn_set_protocols(c->tls, &alpn, 1, GNUTLS_ALPN_MANDATORY) != 0 ||
        gnutls_server_name_set(c->tls, GNUTLS_NAME_DNS, sni, strlen(sni)) != 0)
        die("gnutls session");
    gnutls_session_set_ptr(c->tls, &c->ref);
    if (cafile)
        gnutls_session_set_verify_cert(c->tls, sni, 0);
    ngtcp2_conn_set_tls_native_handle(c->qc, c->tls);

    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0)
        die("epoll_ctl");
    conn_write(c);
    return c;
}

static void conn_free(struct conn *c)
{
    while (c->streams)
        stream_free(c, c->streams);
    while (c->queue) {
        struct pending *p = c->queue;
        c->queue = p->next;
        free(p->store.p);
        free(p->body.p);
        free(p);
    }
    if (c->h3)
        nghttp3_conn_del(c->h3);
    ngtcp2_conn_del(c->qc);
    gnutls_deinit(c->tls);
    close(c->fd);
    free(c);
}

/* Milliseconds until the earliest expiry of conns (at most cap). */
static int next_timeout(struct conn **conns, size_t n, int cap)
{
    uint64_t now = now_ns(), at = UINT64_MAX;
    for (size_t i = 0; i < n; i++)
        if (conns[i] && !conns[i]->closed) {
            uint64_t e = ngtcp2_conn_get_expiry(conns[i]->qc);
            if (e < at)
                at = e;
        }
    if (at == UINT64_MAX)
        return cap;
    int ms = at <= now ? 0 : (int)((at - now + 999999) / 1000000);
    return cap >= 0 && cap < ms ? cap : ms;
}

static void expire_all(struct conn **conns, size_t n)
{
    uint64_t now = now_ns();
    for (size_t i = 0; i < n; i++)
        if (conns[i] && !conns[i]->closed && ngtcp2_conn_get_expiry(conns[i]->qc) <= now)
            conn_expire(conns[i]);
}

/* ---- hex tokens ------------------------------------------------------------------------------ */

static void put_hex(FILE *f, const uint8_t *p, size_t n)
{
    static const char d[] = "0123456789abcdef";
    if (n == 0) {
        fputc('-', f);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        fputc(d[p[i] >> 4], f);
        fputc(d[p[i] & 15], f);
    }
}

static int hexval(char ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* Decodes the hex token at *s into out (its length back), moving *s past it. */
static size_t get_hex(char **s, struct bytes *out)
{
    char *t = strsep(s, " ");
    if (!t)
        die("stdio: a token is missing");
    size_t n0 = out->n;
    if (strcmp(t, "-") == 0)
        return 0;
    for (size_t i = 0; t[i] && t[i + 1]; i += 2) {
        int hi = hexval(t[i]), lo = hexval(t[i + 1]);
        if (hi < 0 || lo < 0)
            die("stdio: bad hex");
        uint8_t b = (uint8_t)(hi << 4 | lo);
        bytes_add(out, &b, 1);
    }
    return out->n - n0;
}

/* ---- stdio mode --------------------------------------------------------------------------------
 */

static struct conn *the_conn;
static bool stdio_quit;

static void stdio_ready(struct conn *c)
{
    (void)c;
    printf("READY\n");
}

static void stdio_field(struct stream *s, const uint8_t *n, size_t nl, const uint8_t *v, size_t vl)
{
    printf("H %s ", s->tag);
    put_hex(stdout, n, nl);
    putchar(' ');
    put_hex(stdout, v, vl);
    putchar('\n');
}

static void stdio_closed(struct stream *s, uint64_t code)
{
    if (code == NGHTTP3_H3_NO_ERROR && s->ended) {
        printf("E %s %zu\n", s->tag, s->body.n);
        fwrite(s->body.p, 1, s->body.n, stdout);
    } else {
        printf("X %s %llu\n", s->tag, (unsigned long long)code);
    }
}

static void stdio_conn_end(struct conn *c, const char *kind, uint64_t code, const uint8_t *r,
                           size_t rl)
{
    if (!c->ready && strcmp(kind, "handshake") == 0)
        printf("FAIL handshake\n");
    printf("CLOSED %s %llu ", kind, (unsigned long long)code);
    put_hex(stdout, r, rl);
    putchar('\n');
}

static const struct mode stdio_mode = {stdio_ready, NULL, stdio_field, stdio_closed,
                                       stdio_conn_end};

static void stdio_line(char *line)
{
    char *s = line;
    char *cmd = strsep(&s, " ");
    if (strcmp(cmd, "C") == 0) {
        conn_close(the_conn, NGHTTP3_H3_NO_ERROR);
        stdio_quit = true;
        return;
    }
    if (strcmp(cmd, "R") != 0 || !s)
        die("stdio: unknown command %s", cmd);
    char *tag = strsep(&s, " ");
    char *count = strsep(&s, " ");
    if (!tag || !count)
        die("stdio: R TAG N ...");
    struct pending *p = pending_new(tag);
    unsigned long n = strtoul(count, NULL, 10);
    struct bytes tmp = {0};
    for (unsigned long i = 0; i < n; i++) {
        tmp.n = 0;
        size_t nl = get_hex(&s, &tmp);
        size_t vl = get_hex(&s, &tmp);
        pending_field(p, tmp.p, nl, tmp.p + nl, vl);
    }
    free(tmp.p);
    get_hex(&s, &p->body);
    request(the_conn, p);
}

static int run_stdio(void)
{
    mode = &stdio_mode;
    tls_init();
    the_conn = conn_new();
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    fcntl(0, F_SETFL, O_NONBLOCK);
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, 0, &ev) != 0)
        die("epoll_ctl stdin");
    struct bytes in = {0};
    while (!stdio_quit) {
        fflush(stdout);
        struct epoll_event evs[4];
        int n = epoll_wait(epfd, evs, 4, next_timeout(&the_conn, 1, 1000));
        for (int i = 0; i < n; i++) {
            if (evs[i].data.ptr) {
                conn_read(evs[i].data.ptr);
                continue;
            }
            char buf[65536];
            ssize_t r = read(0, buf, sizeof buf);
            if (r == 0) {
                conn_close(the_conn, NGHTTP3_H3_NO_ERROR);
                stdio_quit = true;
                break;
            }
            if (r < 0)
                continue;
            bytes_add(&in, buf, (size_t)r);
            size_t start = 0;
            for (size_t j = 0; j < in.n && !stdio_quit; j++)
                if (in.p[j] == '\n') {
                    in.p[j] = '\0';
                    stdio_line((char *)in.p + start);
                    start = j + 1;
                }
            memmove(in.p, in.p + start, in.n - start);
            in.n -= start;
            conn_write(the_conn);
        }
        expire_all(&the_conn, 1);
        if (the_conn->closed && !stdio_quit) {
            /* the connection ended: say so once, then wait for C or EOF */
            fflush(stdout);
            char buf[4096];
            fcntl(0, F_SETFL, 0);
            while (read(0, buf, sizeof buf) > 0)
                ;
            break;
        }
    }
    fflush(stdout);
    conn_free(the_conn);
    free(in.p);
    return 0;
}

/* ---- load mode
 * ----------------------------------------------------------------------------------- */

static char **load_paths;
static unsigned load_npaths, load_streams;
static uint64_t load_total, load_issued, load_done, load_errors, load_deadline;

static void load_next(struct conn *c)
{
    while (c->inflight < load_streams && (load_total == 0 || load_issued < load_total) &&
           (load_deadline == 0 || now_ns() < load_deadline)) {
        const char *path = load_paths[c->next_path++ % load_npaths];
        struct pending *p = pending_new("-");
        pending_field(p, ":method", 7, "GET", 3);
        pending_field(p, ":scheme", 7, "https", 5);
        pending_field(p, ":authority", 10, sni, strlen(sni));
        pending_field(p, ":path", 5, path, strlen(path));
        request(c, p);
        c->inflight++;
        load_issued++;
    }
}

static void load_ready(struct conn *c)
{
    load_next(c);
}

static void load_closed(struct stream *s)
{
    struct conn *c = s->c;
    c->inflight--;
    c->done++;
    if (s->status == 200 && s->ended)
        load_done++;
    else
        load_errors++;
    load_next(c);
}

static void load_closed_cb(struct stream *s, uint64_t code)
{
    (void)code;
    load_closed(s);
}

static void load_conn_end(struct conn *c, const char *kind, uint64_t code, const uint8_t *r,
                          size_t rl)
{
    (void)c, (void)r, (void)rl;
    fprintf(stderr, "h3client: a connection ended: %s %llu\n", kind, (unsigned long long)code);
    load_errors++;
}

static const struct mode load_mode = {load_ready, NULL, NULL, load_closed_cb, load_conn_end};

static int run_load(unsigned nconns, double seconds)
{
    mode = &load_mode;
    tls_init();
    struct conn **conns = xmalloc(nconns * sizeof *conns);
    for (unsigned i = 0; i < nconns; i++)
        conns[i] = conn_new();
    uint64_t start = now_ns();
    if (seconds > 0)
        load_deadline = start + (uint64_t)(seconds * 1e9);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    for (;;) {
        bool busy = false;
        for (unsigned i = 0; i < nconns; i++)
            if (!conns[i]->closed && (conns[i]->inflight || conns[i]->queue || !conns[i]->ready))
                busy = true;
        if (!busy)
            break;
        if (now_ns() - start > (uint64_t)((seconds > 0 ? seconds : 600) + 30) * 1000000000u) {
            fprintf(stderr, "h3client: load: stalled\n");
            return 1;
        }
        struct epoll_event evs[64];
        int n = epoll_wait(epfd, evs, 64, next_timeout(conns, nconns, 100));
        for (int i = 0; i < n; i++)
            conn_read(evs[i].data.ptr);
        expire_all(conns, nconns);
    }
    uint64_t end = now_ns();
    getrusage(RUSAGE_SELF, &ru1);
    uint64_t bytes = 0;
    for (unsigned i = 0; i < nconns; i++)
        bytes += conns[i]->bytes;
    double secs = (double)(end - start) / 1e9;
    double cpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) +
                 (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6 +
                 (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
                 (double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
    printf("requests=%llu errors=%llu seconds=%.3f bytes=%llu req_per_s=%.0f MB_per_s=%.1f "
           "client_cpu_s=%.3f\n",
           (unsigned long long)load_done, (unsigned long long)load_errors, secs,
           (unsigned long long)bytes, (double)load_done / secs, (double)bytes / secs / 1e6, cpu);
    for (unsigned i = 0; i < nconns; i++) {
        conn_close(conns[i], NGHTTP3_H3_NO_ERROR);
        conn_free(conns[i]);
    }
    free(conns);
    return load_errors ? 1 : 0;
}

/* ---- the packets ngtcp2 seals
 * --------------------------------------------------------------------- */

static int attack_encrypt(uint8_t *dest, const ngtcp2_crypto_aead *aead,
                          const ngtcp2_crypto_aead_ctx *aead_ctx, const uint8_t *plaintext,
                          size_t plaintextlen, const uint8_t *nonce, size_t noncelen,
                          const uint8_t *aad, size_t aadlen)
{
    return ngtcp2_crypto_encrypt_cb(dest, aead, aead_ctx, plaintext, plaintextlen, nonce, noncelen,
                                    aad, aadlen);
}

/* ---- main
 * -------------------------------------------------------------------------------------------- */

static void usage(void)
{
    fputs("usage: h3client stdio PORT [--sni NAME] [--ca FILE] [--addr IP]\n"
          "       h3client load PORT -c CONNS -m STREAMS (-n REQUESTS | -d SECONDS) PATH...\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        usage();
    const char *cmd = argv[1];
    server_port = (unsigned)strtoul(argv[2], NULL, 10);
    debug = getenv("H3CLIENT_DEBUG") != NULL;
    unsigned nconns = 1;
    double seconds = 0;
    load_streams = 1;
    int i = 3;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            usage();
        i++;
        if (strcmp(o, "--sni") == 0)
            sni = v;
        else if (strcmp(o, "--ca") == 0)
            cafile = v;
        else if (strcmp(o, "--addr") == 0)
            server_ip = v;
        else if (strcmp(o, "-c") == 0)
            nconns = (unsigned)strtoul(v, NULL, 10);
        else if (strcmp(o, "-m") == 0)
            load_streams = (unsigned)strtoul(v, NULL, 10);
        else if (strcmp(o, "-n") == 0)
            load_total = strtoull(v, NULL, 10);
        else if (strcmp(o, "-d") == 0)
            seconds = strtod(v, NULL);
        else
            usage();
    }
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0)
        die("epoll_create1");
    if (strcmp(cmd, "stdio") == 0)
        return run_stdio();
    if (strcmp(cmd, "load") == 0) {
        load_paths = argv + i;
        load_npaths = (unsigned)(argc - i);
        if (!load_npaths || !nconns || !load_streams || (!load_total && seconds <= 0))
            usage();
        return run_load(nconns, seconds);
    }
    usage();
    return 2;
}

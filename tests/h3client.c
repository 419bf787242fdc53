/* SPDX-License-Identifier: MIT */
/*
 * h3client - an HTTP/3 client over ngtcp2 (GnuTLS) and nghttp3 for pith's
 * tests and benchmarks (issue 34). Not part of pith: a tool, built as
 * build/h3client by the Makefile, that speaks QUIC the way a real client
 * does (ngtcp2 makes every packet) and lets a test see and shape what
 * libcurl hides.
 *
 *   Every mode takes --bind IP: its connections come from that local address
 *   (127.0.0.2 and up: another client, for the per-client limits).
 *
 *   h3client stdio PORT [--sni NAME] [--ca FILE] [--addr IP] [--progress]
 *       One connection; requests come on stdin, answers go to stdout
 *       (tests/h3_adapter.py drives it: the black-box suite over HTTP/3).
 *       Every token but TAG and LEN is hex, "-" when empty.
 *         in:  R TAG N NAME VALUE ... (N fields, pseudo-fields first) BODY
 *              P TAG VALUE               a PRIORITY_UPDATE (RFC 9218 §7.2) for
 *                                        TAG's open stream: VALUE a priority
 *                                        field value, e.g. "u=0"
 *              C                         close (H3_NO_ERROR) and exit
 *         out: READY | FAIL WHY
 *              H TAG NAME VALUE          one response field, as decoded
 *              D TAG LEN                 --progress: LEN bytes of the body so
 *                                        far, at each piece that comes (the
 *                                        order in which a connection's
 *                                        streams were served, without clocks:
 *                                        tests/test_h3_priority.py)
 *              E TAG LEN\n<LEN bytes>    the stream ended: the body
 *              X TAG CODE                the stream ended with an error (reset)
 *              CLOSED KIND CODE REASON   the connection ended (KIND: transport,
 *                                        application, idle, handshake)
 *
 *   h3client load PORT -c CONNS -m STREAMS (-n REQUESTS | -d SECONDS) [--hold S] PATH...
 *       CONNS connections (their handshakes first, outside the figures),
 *       STREAMS requests in flight on each, PATHs in turn; prints one line
 *       of figures (bench/run --h3); --hold keeps the connections open and
 *       idle S seconds more (bench/h3-memory); --delay MS holds each datagram
 *       received MS before reading it: a path of that round-trip time;
 *       --with-handshake starts the clock before the handshakes (a page
 *       load on a fresh connection). The line ends with each request's
 *       mean time and 99th percentile, from its stream's opening to its end.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <netinet/udp.h>
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
static const char *bind_ip; /* --bind: the local address connections come from */
/* The client's windows and ID limit (attack mode changes them); with
 * manual_window the windows move only when the attack grants. */
static uint64_t stream_window = WINDOW, conn_window = WINDOW, cid_limit = 2;
static bool manual_window;
static unsigned server_port;
static gnutls_certificate_credentials_t cred;
static bool debug;
static bool progress; /* stdio --progress: a D event at each piece of a body */

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...)
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
    uint64_t t0; /* when it was opened (load mode's latency) */
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
    bool raw;         /* attack mode: no nghttp3, the HTTP/3 bytes written by hand */
    bool takeover;    /* attack mode: ngtcp2 is done with; packets are made here */
    uint64_t rx, rxn; /* bytes and frames received on request streams */
    unsigned repeats; /* takeover: datagrams that came twice (a kept CONNECTION_CLOSE) */
    uint8_t seen[8][48];
    size_t seen_n;
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
    if (ngtcp2_is_bidi_stream(id)) {
        c->rx += len; /* a request stream's bytes and frames (attack mode says) */
        c->rxn++;
    }
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
    if (!manual_window) {
        ngtcp2_conn_extend_max_stream_offset(qc, id, (uint64_t)n);
        ngtcp2_conn_extend_max_offset(qc, (uint64_t)n);
    }
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
    if (!c->raw && h3_setup(c) != 0)
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
static int attack_hp_mask(uint8_t *dest, const ngtcp2_crypto_cipher *hp,
                          const ngtcp2_crypto_cipher_ctx *hp_ctx, const uint8_t *sample);

static ngtcp2_callbacks client_callbacks(void)
{
    return (ngtcp2_callbacks){
        .client_initial = ngtcp2_crypto_client_initial_cb,
        .recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb,
        .handshake_completed = handshake_completed,
        .encrypt = attack_encrypt,
        .decrypt = ngtcp2_crypto_decrypt_cb,
        .hp_mask = attack_hp_mask,
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
    else if (s) {
        bytes_add(&s->body, data, n);
        if (progress)
            printf("D %s %zu\n", s->tag, s->body.n);
    }
    if (!manual_window) {
        ngtcp2_conn_extend_max_stream_offset(c->qc, id, n);
        ngtcp2_conn_extend_max_offset(c->qc, n);
    }
    return 0;
}

static int h_deferred_consume(nghttp3_conn *h3, int64_t id, size_t n, void *ud, void *sud)
{
    (void)h3, (void)sud;
    struct conn *c = ud;
    if (!manual_window) {
        ngtcp2_conn_extend_max_stream_offset(c->qc, id, n);
        ngtcp2_conn_extend_max_offset(c->qc, n);
    }
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
    *s = (struct stream){.c = c, .id = id, .next = c->streams, .t0 = now_ns()};
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

static void takeover_read(struct conn *c);
static int read_one(struct conn *c, const uint8_t *buf, size_t n, uint8_t ecn);
/* Datagrams received, by the ECN codepoint of their IP header (Not-ECT,
 * ECT(1), ECT(0), CE): load mode prints them, so a test can see whether the
 * server marks its packets. */
static uint64_t ecn_seen[4];

/* --delay MS: each datagram the server sent waits MS before ngtcp2 reads it
 * (and acknowledges it), so the server sees a path of that round-trip time
 * (bench/run --h3's long fat path; loopback has no netem here). */
static uint64_t delay_ns;
struct held {
    struct conn *c;
    uint64_t due;
    size_t n;
    struct held *next;
    uint8_t data[];
};
static struct held *held_head, *held_tail;

static void hold(struct conn *c, const uint8_t *p, size_t n)
{
    struct held *h = malloc(sizeof *h + n);
    if (!h)
        return; /* a loss */
    *h = (struct held){.c = c, .due = now_ns() + delay_ns, .n = n};
    memcpy(h->data, p, n);
    if (held_tail)
        held_tail->next = h;
    else
        held_head = h;
    held_tail = h;
}

static void conn_write(struct conn *c);

/* The held datagrams that are due, to ngtcp2. */
static void deliver_held(void)
{
    uint64_t now = now_ns();
    while (held_head && held_head->due <= now) {
        struct held *h = held_head;
        held_head = h->next;
        if (!held_head)
            held_tail = NULL;
        if (!h->c->closed && read_one(h->c, h->data, h->n, 0) == 0 &&
            (!held_head || held_head->c != h->c || held_head->due > now))
            conn_write(h->c);
        free(h);
    }
}

static void conn_read(struct conn *c)
{
    uint8_t buf[65536];
    if (c->takeover) {
        takeover_read(c);
        return;
    }
    for (int i = 0; i < 64 && !c->closed; i++) {
        /* UDP_GRO: a train of datagrams may come as one buffer, cut every
         * gso bytes (what a client on a real NIC gets from GRO, and what
         * TCP's loopback gets for free) */
        char cbuf[CMSG_SPACE(sizeof(int)) * 2] __attribute__((aligned(8)));
        struct iovec iov = {buf, sizeof buf};
        struct msghdr m = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
        ssize_t n = recvmsg(c->fd, &m, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != ECONNREFUSED)
                conn_report_end(c, "internal");
            break;
        }
        size_t gso = (size_t)n;
        uint8_t ecn = 0;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
            if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO) {
                int g;
                memcpy(&g, CMSG_DATA(cm), sizeof g);
                gso = g > 0 ? (size_t)g : gso;
            } else if ((cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TOS) ||
                       (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_TCLASS)) {
                /* IP_TOS comes as a byte, IPV6_TCLASS as an int */
                int v = 0;
                memcpy(&v, CMSG_DATA(cm), cm->cmsg_len > CMSG_LEN(1) ? sizeof v : 1);
                ecn = (uint8_t)(v & 3);
            }
        for (size_t at = 0; at < (size_t)n && !c->closed; at += gso) {
            size_t k = (size_t)n - at < gso ? (size_t)n - at : gso;
            if (delay_ns) {
                hold(c, buf + at, k);
                continue;
            }
            ecn_seen[ecn]++;
            if (read_one(c, buf + at, k, ecn) < 0)
                return;
        }
    }
    conn_write(c);
}

/* One datagram into ngtcp2; -1 once the connection ended. */
static int read_one(struct conn *c, const uint8_t *buf, size_t n, uint8_t ecn)
{
    {
        ngtcp2_path path = {{(ngtcp2_sockaddr *)&c->local, c->local_len},
                            {(ngtcp2_sockaddr *)&c->remote, c->remote_len},
                            NULL};
        ngtcp2_pkt_info pi = {.ecn = ecn}; /* ngtcp2 acknowledges the marks (RFC 9000 §13.4) */
        int rv = ngtcp2_conn_read_pkt(c->qc, &path, &pi, buf, n, now_ns());
        if (rv == NGTCP2_ERR_DRAINING || rv == NGTCP2_ERR_CLOSING) {
            const ngtcp2_ccerr *e = ngtcp2_conn_get_ccerr(c->qc);
            conn_report_end(c,
                            e->type == NGTCP2_CCERR_TYPE_APPLICATION ? "application" : "transport");
            return -1;
        }
        if (rv == NGTCP2_ERR_CRYPTO || (rv != 0 && !ngtcp2_conn_get_handshake_completed(c->qc))) {
            if (debug)
                fprintf(stderr, "h3client: read: %s\n", ngtcp2_strerror(rv));
            c->failed = true;
            conn_report_end(c, "handshake");
            return -1;
        }
        if (rv != 0) {
            if (debug)
                fprintf(stderr, "h3client: read: %s\n", ngtcp2_strerror(rv));
            conn_report_end(c, "internal");
            return -1;
        }
    }
    return 0;
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

/* --bind: the socket's local address, any port. */
static void bind_local(struct conn *c)
{
    if (!bind_ip)
        return;
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6};
    struct sockaddr_in a4 = {.sin_family = AF_INET};
    int r;
    if (c->remote.ss_family == AF_INET && inet_pton(AF_INET, bind_ip, &a4.sin_addr) == 1)
        r = bind(c->fd, (struct sockaddr *)&a4, sizeof a4);
    else if (c->remote.ss_family == AF_INET6 && inet_pton(AF_INET6, bind_ip, &a6.sin6_addr) == 1)
        r = bind(c->fd, (struct sockaddr *)&a6, sizeof a6);
    else
        die("--bind %s: not an address of the server's family", bind_ip);
    if (r != 0)
        die("bind %s: %s", bind_ip, strerror(errno));
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
    if (c->fd < 0)
        die("socket: %s", strerror(errno));
    bind_local(c);
    if (connect(c->fd, (struct sockaddr *)&c->remote, c->remote_len) != 0)
        die("connect: %s", strerror(errno));
    int big = 4 << 20, on = 1;
    setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    setsockopt(c->fd, SOL_UDP, UDP_GRO, &on, sizeof on);
    if (c->remote.ss_family == AF_INET6)
        setsockopt(c->fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &on, sizeof on);
    else
        setsockopt(c->fd, IPPROTO_IP, IP_RECVTOS, &on, sizeof on);
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
    p.initial_max_stream_data_bidi_local = stream_window;
    p.initial_max_stream_data_uni = WINDOW;
    p.initial_max_data = conn_window;
    p.active_connection_id_limit = cid_limit;
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
        if (conns[i] && !conns[i]->closed && !conns[i]->takeover) {
            uint64_t e = ngtcp2_conn_get_expiry(conns[i]->qc);
            if (e < at)
                at = e;
        }
    if (held_head && held_head->due < at)
        at = held_head->due;
    if (at == UINT64_MAX)
        return cap;
    int ms = at <= now ? 0 : (int)((at - now + 999999) / 1000000);
    return cap >= 0 && cap < ms ? cap : ms;
}

static void expire_all(struct conn **conns, size_t n)
{
    deliver_held();
    uint64_t now = now_ns();
    for (size_t i = 0; i < n; i++)
        if (conns[i] && !conns[i]->closed && !conns[i]->takeover &&
            ngtcp2_conn_get_expiry(conns[i]->qc) <= now)
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

/* P TAG VALUE: nghttp3 sends the PRIORITY_UPDATE on our control stream
 * (frame 0xF0700, RFC 9218 §7.2), which goes ahead of any request stream's
 * bytes; the stream must be open (its request submitted, not yet ended). */
static void priority_update(char *s)
{
    char *tag = strsep(&s, " ");
    if (!tag || !s)
        die("stdio: P TAG VALUE");
    struct stream *st = the_conn->streams;
    while (st && strcmp(st->tag, tag) != 0)
        st = st->next;
    if (!st)
        die("stdio: P %s: no open stream has that tag", tag);
    struct bytes v = {0};
    size_t n = get_hex(&s, &v);
    if (nghttp3_conn_set_client_stream_priority(the_conn->h3, st->id, v.p, n) != 0)
        die("stdio: P %s: nghttp3_conn_set_client_stream_priority failed", tag);
    free(v.p);
}

static void stdio_line(char *line)
{
    char *s = line;
    char *cmd = strsep(&s, " ");
    if (strcmp(cmd, "C") == 0) {
        conn_close(the_conn, NGHTTP3_H3_NO_ERROR);
        stdio_quit = true;
        return;
    }
    if (strcmp(cmd, "P") == 0) {
        priority_update(s);
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
static bool load_started; /* every connection's handshake done: the clock runs */
static bool load_with_hs; /* --with-handshake: the handshakes count (bench/run's page) */
static uint32_t *lat_us;  /* each request's time, open to end */
static size_t nlat, lat_cap;
static double load_hold; /* seconds to keep the connections open, idle, after */

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
    if (load_started)
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
    if (nlat == lat_cap) {
        lat_cap = lat_cap ? 2 * lat_cap : 65536;
        lat_us = realloc(lat_us, lat_cap * sizeof *lat_us);
        if (!lat_us)
            die("out of memory");
    }
    lat_us[nlat++] = (uint32_t)((now_ns() - s->t0) / 1000);
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

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int run_load(unsigned nconns, double seconds)
{
    mode = &load_mode;
    tls_init();
    struct conn **conns = xmalloc(nconns * sizeof *conns);
    uint64_t start = now_ns();
    if (load_with_hs) {
        load_started = true; /* the requests go as each handshake ends */
        if (seconds > 0)
            load_deadline = start + (uint64_t)(seconds * 1e9);
    }
    /* The handshakes first, a few at a time, outside the figures. */
    for (unsigned i = 0; i < nconns && load_with_hs; i++)
        conns[i] = conn_new();
    for (unsigned i = 0; i < nconns && !load_with_hs; i++) {
        conns[i] = conn_new();
        for (uint64_t until = now_ns() + 2000000000u; !conns[i]->ready && now_ns() < until;) {
            struct epoll_event evs[64];
            int n = epoll_wait(epfd, evs, 64, next_timeout(conns, i + 1, 10));
            for (int k = 0; k < n; k++)
                conn_read(evs[k].data.ptr);
            expire_all(conns, i + 1);
            if (conns[i]->closed)
                break;
        }
        if (!conns[i]->ready) {
            fprintf(stderr, "h3client: load: connection %u made no handshake\n", i);
            return 1;
        }
    }
    if (!load_with_hs) {
        start = now_ns();
        if (seconds > 0)
            load_deadline = start + (uint64_t)(seconds * 1e9);
        load_started = true;
        for (unsigned i = 0; i < nconns; i++) {
            load_next(conns[i]);
            conn_write(conns[i]);
        }
    }
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
    double lat_sum = 0;
    for (size_t i = 0; i < nlat; i++)
        lat_sum += lat_us[i];
    qsort(lat_us, nlat, sizeof *lat_us, cmp_u32);
    printf("requests=%llu errors=%llu seconds=%.3f bytes=%llu req_per_s=%.0f MB_per_s=%.1f "
           "client_cpu_s=%.3f lat_mean_us=%.0f lat_p99_us=%u "
           "ecn_not=%llu ecn_ect1=%llu ecn_ect0=%llu ecn_ce=%llu\n",
           (unsigned long long)load_done, (unsigned long long)load_errors, secs,
           (unsigned long long)bytes, (double)load_done / secs, (double)bytes / secs / 1e6, cpu,
           nlat ? lat_sum / (double)nlat : 0, nlat ? lat_us[nlat * 99 / 100] : 0,
           (unsigned long long)ecn_seen[0], (unsigned long long)ecn_seen[1],
           (unsigned long long)ecn_seen[2], (unsigned long long)ecn_seen[3]);
    fflush(stdout);
    /* --hold: the connections stay open and idle (bench/h3-memory) */
    for (uint64_t until = now_ns() + (uint64_t)(load_hold * 1e9); now_ns() < until;) {
        struct epoll_event evs[64];
        int n = epoll_wait(epfd, evs, 64, next_timeout(conns, nconns, 100));
        for (int i = 0; i < n; i++)
            conn_read(evs[i].data.ptr);
        expire_all(conns, nconns);
    }
    for (unsigned i = 0; i < nconns; i++) {
        conn_close(conns[i], NGHTTP3_H3_NO_ERROR);
        conn_free(conns[i]);
    }
    free(conns);
    return load_errors ? 1 : 0;
}

/* ---- attacks ------------------------------------------------------------------------------------
 */

/* What ngtcp2 used for its last 1-RTT packet, kept so that attack mode can
 * seal packets of its own once it has taken the connection over: the AEAD
 * and its context, the IV (the nonce less the packet number), the header
 * protection, the header up to the packet number (first byte, DCID). */
static struct {
    /* copies: ngtcp2 passes them from a record of the packet being made */
    ngtcp2_crypto_aead aead;
    ngtcp2_crypto_aead_ctx aead_ctx;
    ngtcp2_crypto_cipher hp;
    ngtcp2_crypto_cipher_ctx hp_ctx;
    uint8_t iv[32], hdr[32];
    size_t ivlen, hdrlen;
    uint64_t pn;
    bool short_pending, have;
} keys;

static int attack_encrypt(uint8_t *dest, const ngtcp2_crypto_aead *aead,
                          const ngtcp2_crypto_aead_ctx *aead_ctx, const uint8_t *plaintext,
                          size_t plaintextlen, const uint8_t *nonce, size_t noncelen,
                          const uint8_t *aad, size_t aadlen)
{
    if (aadlen > 0 && !(aad[0] & 0x80) && noncelen <= sizeof keys.iv && aadlen <= sizeof keys.hdr) {
        size_t pnlen = (size_t)(aad[0] & 3) + 1;
        uint64_t pn = 0;
        for (size_t i = aadlen - pnlen; i < aadlen; i++)
            pn = pn << 8 | aad[i];
        keys.aead = *aead;
        keys.aead_ctx = *aead_ctx;
        keys.ivlen = noncelen;
        memcpy(keys.iv, nonce, noncelen);
        for (size_t i = 0; i < 8; i++)
            keys.iv[noncelen - 1 - i] ^= (uint8_t)(pn >> (8 * i));
        keys.hdrlen = aadlen - pnlen;
        memcpy(keys.hdr, aad, keys.hdrlen);
        if (pn > keys.pn)
            keys.pn = pn;
        keys.short_pending = true;
    }
    return ngtcp2_crypto_encrypt_cb(dest, aead, aead_ctx, plaintext, plaintextlen, nonce, noncelen,
                                    aad, aadlen);
}

static int attack_hp_mask(uint8_t *dest, const ngtcp2_crypto_cipher *hp,
                          const ngtcp2_crypto_cipher_ctx *hp_ctx, const uint8_t *sample)
{
    if (keys.short_pending) {
        keys.hp = *hp;
        keys.hp_ctx = *hp_ctx;
        keys.short_pending = false;
        keys.have = true;
    }
    return ngtcp2_crypto_hp_mask_cb(dest, hp, hp_ctx, sample);
}

/* Seals frames as a 1-RTT packet of the next packet number and sends it. */
static void seal_send(struct conn *c, const uint8_t *frames, size_t n)
{
    uint8_t pkt[MAX_PKT + 64], nonce[32], mask[NGTCP2_HP_SAMPLELEN];
    if (!keys.have || keys.hdrlen + 4 + n + keys.aead.max_overhead > sizeof pkt)
        die("attack: no 1-RTT keys yet, or frames too long");
    uint64_t pn = ++keys.pn;
    memcpy(pkt, keys.hdr, keys.hdrlen);
    pkt[0] = (uint8_t)((pkt[0] & ~3u) | 3u); /* a 4-byte packet number */
    for (int i = 0; i < 4; i++)
        pkt[keys.hdrlen + (size_t)i] = (uint8_t)(pn >> (8 * (3 - i)));
    size_t hl = keys.hdrlen + 4;
    memcpy(nonce, keys.iv, keys.ivlen);
    for (size_t i = 0; i < 8; i++)
        nonce[keys.ivlen - 1 - i] ^= (uint8_t)(pn >> (8 * i));
    if (ngtcp2_crypto_encrypt(pkt + hl, &keys.aead, &keys.aead_ctx, frames, n, nonce, keys.ivlen,
                              pkt, hl) != 0 ||
        ngtcp2_crypto_hp_mask(mask, &keys.hp, &keys.hp_ctx, pkt + hl) != 0)
        die("attack: sealing failed");
    pkt[0] ^= mask[0] & 0x1f;
    for (size_t i = 0; i < 4; i++)
        pkt[keys.hdrlen + i] ^= mask[1 + i];
    conn_send(c, pkt, hl + n + keys.aead.max_overhead);
}

/* After the takeover ngtcp2 reads nothing more: a datagram that comes a
 * second time is the server's kept CONNECTION_CLOSE (its ACKs all differ). */
static void takeover_read(struct conn *c)
{
    uint8_t buf[2048];
    ssize_t n;
    while ((n = recv(c->fd, buf, sizeof buf, 0)) > 0) {
        size_t k = (size_t)n < sizeof c->seen[0] ? (size_t)n : sizeof c->seen[0];
        bool again = false;
        for (size_t i = 0; i < c->seen_n && i < 8; i++)
            again = again || memcmp(c->seen[i], buf, k) == 0;
        if (again)
            c->repeats++;
        else
            memcpy(c->seen[c->seen_n++ % 8], buf, k);
    }
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
    if (v < 64) {
        p[0] = (uint8_t)v;
        return 1;
    }
    if (v < 16384) {
        p[0] = (uint8_t)(0x40 | v >> 8);
        p[1] = (uint8_t)v;
        return 2;
    }
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * (3 - i)));
    p[0] |= 0x80;
    return 4;
}

/* Runs the loop for up to ms milliseconds, or until done(c) says so. */
static void pump(struct conn *c, int ms, bool (*done)(struct conn *c))
{
    uint64_t end = now_ns() + (uint64_t)ms * 1000000u;
    while (!(done && done(c)) && now_ns() < end) {
        struct epoll_event ev[4];
        int left = (int)((end - now_ns()) / 1000000u);
        int n = epoll_wait(epfd, ev, 4, next_timeout(&c, 1, left < 1 ? 1 : left));
        for (int i = 0; i < n; i++)
            conn_read(ev[i].data.ptr);
        expire_all(&c, 1);
    }
}

static bool is_ready(struct conn *c)
{
    return c->ready || c->closed;
}

static bool is_closed(struct conn *c)
{
    return c->closed;
}

/* The attack's outcome, for the test: the connection's end as the client
 * saw it (none, or the kind and code of the server's CONNECTION_CLOSE, or
 * "repeated" for a takeover), what was sent, how long it took. */
static const char *atk_end = "none";
static uint64_t atk_code;
static unsigned atk_sent;
static uint64_t atk_bytes;

static void atk_conn_end(struct conn *c, const char *kind, uint64_t code, const uint8_t *r,
                         size_t rl)
{
    (void)c, (void)r, (void)rl;
    atk_end = kind;
    atk_code = code;
}

static void atk_closed(struct stream *s, uint64_t code)
{
    (void)code;
    atk_bytes += s->body.n;
}

static void atk_field(struct stream *s, const uint8_t *n, size_t nl, const uint8_t *v, size_t vl)
{
    (void)s, (void)n, (void)nl, (void)v, (void)vl;
}

static const struct mode attack_mode = {NULL, NULL, atk_field, atk_closed, atk_conn_end};

static struct pending *get_request(const char *path)
{
    struct pending *p = pending_new("a");
    pending_field(p, ":method", 7, "GET", 3);
    pending_field(p, ":scheme", 7, "https", 5);
    pending_field(p, ":authority", 10, sni, strlen(sni));
    pending_field(p, ":path", 5, path, strlen(path));
    return p;
}

/* Writes bytes on a stream of a raw connection (no nghttp3), all of them. */
static void raw_write(struct conn *c, int64_t sid, const uint8_t *p, size_t n, bool fin)
{
    uint8_t buf[MAX_PKT];
    while (!c->closed) {
        ngtcp2_ssize ndata = 0;
        ngtcp2_vec v = {(uint8_t *)(uintptr_t)p, n};
        ngtcp2_ssize w =
            ngtcp2_conn_writev_stream(c->qc, NULL, NULL, buf, sizeof buf, &ndata,
                                      fin ? NGTCP2_WRITE_STREAM_FLAG_FIN : 0, sid, &v, 1, now_ns());
        if (w < 0)
            die("attack: raw write: %s", ngtcp2_strerror((int)w));
        if (w > 0)
            conn_send(c, buf, (size_t)w);
        if (ndata > 0) {
            p += ndata;
            n -= (size_t)ndata;
        }
        if (n == 0 && (ndata >= 0 || w == 0))
            break;
        if (w == 0)
            pump(c, 5, NULL);
    }
}

/* The HTTP/3 streams every connection opens, by hand: control (SETTINGS,
 * empty), QPACK encoder and decoder. */
static int64_t raw_setup(struct conn *c, int64_t *enc)
{
    static const uint8_t ctrl[] = {0x00, 0x04, 0x00}, encs[] = {0x02}, decs[] = {0x03};
    int64_t a, b, d;
    if (ngtcp2_conn_open_uni_stream(c->qc, &a, NULL) != 0 ||
        ngtcp2_conn_open_uni_stream(c->qc, &b, NULL) != 0 ||
        ngtcp2_conn_open_uni_stream(c->qc, &d, NULL) != 0)
        die("attack: uni streams");
    raw_write(c, a, ctrl, sizeof ctrl, false);
    raw_write(c, b, encs, sizeof encs, false);
    raw_write(c, d, decs, sizeof decs, false);
    *enc = b;
    return a;
}

/* Takes the connection over once ngtcp2 has sealed 1-RTT packets (the
 * handshake done, the server's HANDSHAKE_DONE acknowledged). */
static void take_over(struct conn *c, int wait_ms)
{
    pump(c, wait_ms, NULL);
    if (!keys.have)
        die("attack: no 1-RTT packet was sealed");
    c->takeover = true;
}

static bool flood_over(struct conn *c)
{
    return c->repeats > 0;
}

/* Sends count packets of frames (takeover), pausing every burst; stops at
 * the server's close. */
static void flood(struct conn *c, const uint8_t *frames, size_t n, unsigned count, unsigned burst,
                  int pause_ms)
{
    take_over(c, 100);
    for (atk_sent = 0; atk_sent < count && !c->repeats; atk_sent++) {
        seal_send(c, frames, n);
        if ((atk_sent + 1) % burst == 0)
            pump(c, pause_ms, flood_over);
    }
    pump(c, 1000, flood_over);
    if (c->repeats)
        atk_end = "repeated";
}

static bool has_body(struct conn *c)
{
    return c->closed || (c->streams && c->streams->body.n > 0);
}

static bool stream_done(struct conn *c)
{
    return c->closed || (c->streams == NULL && c->queue == NULL);
}

static int run_attack(const char *name, unsigned count, const char *path, unsigned grant)
{
    mode = &attack_mode;
    if (strcmp(name, "dribble") == 0 || strcmp(name, "window") == 0) {
        manual_window = true;
        stream_window = grant ? grant : 1;
    } else if (strcmp(name, "dribble_conn") == 0) {
        manual_window = true;
        conn_window = 1;
    } else if (strcmp(name, "retire") == 0) {
        cid_limit = 8;
    }
    tls_init();
    struct conn *c = conn_new();
    c->raw = strncmp(name, "qpack", 5) == 0 || strcmp(name, "slow_request") == 0;
    uint64_t start = now_ns();
    pump(c, 5000, is_ready);
    if (!c->ready)
        die("attack: no handshake (%s)", atk_end);
    uint8_t f[MAX_PKT];
    size_t n = 0;
    if (strcmp(name, "rapid_reset") == 0) {
        /* HEADERS then RESET_STREAM, again and again (HTTP/3's Rapid Reset) */
        for (atk_sent = 0; atk_sent < count && !c->closed;) {
            int64_t id;
            if (ngtcp2_conn_open_bidi_stream(c->qc, &id, NULL) != 0) {
                pump(c, 5, NULL); /* MAX_STREAMS comes as the server closes them */
                continue;
            }
            struct pending *p = get_request(path);
            nghttp3_nv nv[8];
            for (size_t i = 0; i < p->nnv; i++) {
                nv[i] = p->nv[i];
                nv[i].name = p->store.p + (uintptr_t)p->nv[i].name;
                nv[i].value = p->store.p + (uintptr_t)p->nv[i].value;
            }
            if (nghttp3_conn_submit_request(c->h3, id, nv, p->nnv, NULL, NULL) != 0)
                die("submit");
            free(p->store.p);
            free(p);
            conn_write(c);
            ngtcp2_conn_shutdown_stream(c->qc, 0, id, NGHTTP3_H3_REQUEST_CANCELLED);
            conn_write(c);
            atk_sent++;
            if (atk_sent % 16 == 0)
                pump(c, 1, NULL);
        }
        pump(c, 2000, is_closed);
    } else if (strcmp(name, "ping") == 0) {
        f[n++] = 0x01; /* PING, then PADDING */
        n = 20;
        memset(f + 1, 0, n - 1);
        flood(c, f, n, count, 32, 1);
    } else if (strcmp(name, "ncid") == 0) {
        /* NEW_CONNECTION_ID that retires every earlier ID (the server
         * switches to it and retires ours), then the same frame over and
         * over: a duplicate changes nothing */
        f[n++] = 0x18;
        n += put_varint(f + n, 100);
        n += put_varint(f + n, 100);
        f[n++] = 8;
        rand_cb(f + n, 8 + 16, NULL);
        n += 8 + 16;
        flood(c, f, n, count, 32, 1);
    } else if (strcmp(name, "crypto") == 0) {
        /* TLS data after the handshake (a client has none to send) */
        f[n++] = 0x06;
        n += put_varint(f + n, 0);
        n += put_varint(f + n, 5);
        memcpy(f + n, "\x16\x03\x03\x00\x00", 5);
        n += 5;
        flood(c, f, n, count, 1, 50);
    } else if (strcmp(name, "empty_stream") == 0) {
        /* request stream 0 (a whole request), then STREAM frames of no bytes */
        request(c, get_request(path));
        pump(c, 2000, stream_done);
        for (int i = 0; i < 100; i++) {
            f[n++] = 0x0a; /* STREAM, LEN, no OFF, no FIN */
            n += put_varint(f + n, 0);
            n += put_varint(f + n, 0);
        }
        flood(c, f, n, count, 32, 1);
    } else if (strcmp(name, "retire") == 0) {
        /* RETIRE_CONNECTION_ID of each ID the server issued, in turn: it
         * makes a new one each time (random bytes, a reset token, the
         * table); a pause lets it issue the next before it is retired */
        take_over(c, 100);
        for (atk_sent = 0; atk_sent < count && !c->repeats; atk_sent++) {
            n = 0;
            f[n++] = 0x19;
            n += put_varint(f + n, atk_sent + 1);
            seal_send(c, f, n);
            pump(c, 2, flood_over);
        }
        pump(c, 1000, flood_over);
        if (c->repeats)
            atk_end = "repeated";
    } else if (strcmp(name, "dribble") == 0 || strcmp(name, "dribble_conn") == 0 ||
               strcmp(name, "window") == 0) {
        /* a window granted grant bytes at a time (1: a dribble) */
        request(c, get_request(path));
        uint64_t step = grant ? grant : 1;
        for (atk_sent = 0; atk_sent < count && !stream_done(c); atk_sent++) {
            pump(c, 1, NULL);
            if (strcmp(name, "dribble_conn") == 0) {
                ngtcp2_conn_extend_max_offset(c->qc, step);
            } else if (c->streams) {
                ngtcp2_conn_extend_max_stream_offset(c->qc, c->streams->id, step);
                ngtcp2_conn_extend_max_offset(c->qc, step);
            }
            conn_write(c);
        }
        pump(c, 3000, stream_done);
    } else if (strcmp(name, "qpack_capacity") == 0) {
        /* Set Dynamic Table Capacity past what our SETTINGS allow (4096) */
        int64_t enc;
        raw_setup(c, &enc);
        static const uint8_t cap[] = {0x3f, 0xe2, 0x1f}; /* 4097 */
        raw_write(c, enc, cap, sizeof cap, false);
        atk_sent = 1;
        pump(c, 3000, is_closed);
    } else if (strcmp(name, "qpack_blocked") == 0) {
        /* requests waiting on a dynamic table entry that never comes */
        int64_t enc;
        raw_setup(c, &enc);
        static const uint8_t headers[] = {0x01, 0x03, 0x02, 0x00, 0x80};
        for (atk_sent = 0; atk_sent < count && !c->closed; atk_sent++) {
            int64_t id;
            if (ngtcp2_conn_open_bidi_stream(c->qc, &id, NULL) != 0)
                break;
            raw_write(c, id, headers, sizeof headers, false);
            pump(c, 20, is_closed);
        }
        pump(c, 3000, is_closed);
    } else if (strcmp(name, "slow_request") == 0) {
        /* a HEADERS frame that never ends, a byte a second */
        int64_t enc, id;
        raw_setup(c, &enc);
        if (ngtcp2_conn_open_bidi_stream(c->qc, &id, NULL) != 0)
            die("attack: a stream");
        /* HEADERS of 100 bytes: the prefix, :path (static 1) with a value
         * of 80 bytes, which come one at a time */
        static const uint8_t start_of[] = {0x01, 0x40, 0x64, 0x00, 0x00, 0x51, 0x50};
        raw_write(c, id, start_of, sizeof start_of, false);
        static const uint8_t lit[] = {'a'};
        for (atk_sent = 0; atk_sent < count && !c->closed; atk_sent++) {
            pump(c, 1000, is_closed);
            raw_write(c, id, lit, 1, false);
        }
        pump(c, 1000, is_closed);
    } else if (strcmp(name, "idle") == 0 || strcmp(name, "ping_idle") == 0) {
        /* one answer, then nothing (or PINGs every 200 ms) */
        request(c, get_request(path));
        pump(c, 2000, stream_done);
        if (strcmp(name, "ping_idle") == 0)
            ngtcp2_conn_set_keep_alive_timeout(c->qc, 200 * NGTCP2_MILLISECONDS);
        pump(c, (int)count * 1000, is_closed);
    } else if (strcmp(name, "noack") == 0) {
        /* a download, then PINGs every 100 ms and not one acknowledgement */
        request(c, get_request(path));
        pump(c, 2000, has_body);
        f[0] = 0x01;
        memset(f + 1, 0, 19);
        take_over(c, 0);
        for (atk_sent = 0; atk_sent < count * 10 && !c->repeats; atk_sent++) {
            seal_send(c, f, 20);
            pump(c, 100, flood_over);
        }
        if (c->repeats)
            atk_end = "repeated";
    } else {
        die("unknown attack %s", name);
    }
    if (!c->closed && !c->takeover)
        conn_close(c, NGHTTP3_H3_NO_ERROR);
    printf("attack=%s sent=%u end=%s code=%llu bytes=%llu rx=%llu rxn=%llu seconds=%.3f\n", name,
           atk_sent, atk_end, (unsigned long long)atk_code, (unsigned long long)atk_bytes,
           (unsigned long long)c->rx, (unsigned long long)c->rxn, (double)(now_ns() - start) / 1e9);
    return 0;
}

/* Initials from many addresses (each its own socket: a port of its own),
 * none of which ever finishes its handshake: how many were answered with
 * a Retry (no state kept), how many with an Initial of the server's (a
 * handshake it keeps state for until its timeout). */
static int run_initials(unsigned count)
{
    mode = &attack_mode;
    tls_init();
    struct conn **cs = xmalloc(count * sizeof *cs);
    for (unsigned i = 0; i < count; i++)
        cs[i] = conn_new(); /* writes its first flight, then is never driven */
    unsigned retry = 0, initial = 0, other = 0;
    uint64_t end = now_ns() + 1000000000u;
    while (now_ns() < end) {
        struct epoll_event ev[64];
        int n = epoll_wait(epfd, ev, 64, 50);
        for (int i = 0; i < n; i++) {
            struct conn *c = ev[i].data.ptr;
            uint8_t buf[2048];
            ssize_t r;
            while ((r = recv(c->fd, buf, sizeof buf, 0)) > 0) {
                if (c->seen_n++)
                    continue; /* each connection's first answer says which */
                if ((buf[0] & 0xb0) == 0xb0)
                    retry++;
                else if ((buf[0] & 0xb0) == 0x80)
                    initial++;
                else
                    other++;
            }
        }
    }
    printf("attack=initials sent=%u retry=%u initial=%u other=%u\n", count, retry, initial, other);
    for (unsigned i = 0; i < count; i++)
        conn_free(cs[i]);
    free(cs);
    return 0;
}

/* ---- main
 * -------------------------------------------------------------------------------------------- */

static void usage(void)
{
    fputs("usage: h3client stdio PORT [--sni NAME] [--ca FILE] [--addr IP] [--bind IP] "
          "[--progress]\n"
          "       h3client load PORT -c CONNS -m STREAMS (-n REQUESTS | -d SECONDS) [--hold S] "
          "PATH...\n"
          "       h3client attack NAME PORT [-n COUNT] [--path PATH] [--grant BYTES]\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        usage();
    const char *cmd = argv[1], *attack = NULL, *path = "/big.bin";
    if (strcmp(cmd, "attack") == 0) {
        attack = argv[2];
        argv++;
        argc--;
        if (argc < 3)
            usage();
    }
    server_port = (unsigned)strtoul(argv[2], NULL, 10);
    unsigned grant = 0;
    debug = getenv("H3CLIENT_DEBUG") != NULL;
    unsigned nconns = 1;
    double seconds = 0;
    load_streams = 1;
    int i = 3;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(o, "--progress") == 0) {
            progress = true; /* no value */
            continue;
        }
        if (!v)
            usage();
        i++;
        if (strcmp(o, "--sni") == 0)
            sni = v;
        else if (strcmp(o, "--ca") == 0)
            cafile = v;
        else if (strcmp(o, "--addr") == 0)
            server_ip = v;
        else if (strcmp(o, "--bind") == 0)
            bind_ip = v;
        else if (strcmp(o, "-c") == 0)
            nconns = (unsigned)strtoul(v, NULL, 10);
        else if (strcmp(o, "-m") == 0)
            load_streams = (unsigned)strtoul(v, NULL, 10);
        else if (strcmp(o, "-n") == 0)
            load_total = strtoull(v, NULL, 10);
        else if (strcmp(o, "-d") == 0)
            seconds = strtod(v, NULL);
        else if (strcmp(o, "--path") == 0)
            path = v;
        else if (strcmp(o, "--with-handshake") == 0) {
            load_with_hs = true;
            i--; /* no value */
        } else if (strcmp(o, "--delay") == 0)
            delay_ns = (uint64_t)(strtod(v, NULL) * 1e6);
        else if (strcmp(o, "--hold") == 0)
            load_hold = strtod(v, NULL);
        else if (strcmp(o, "--grant") == 0)
            grant = (unsigned)strtoul(v, NULL, 10);
        else
            usage();
    }
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0)
        die("epoll_create1");
    if (strcmp(cmd, "stdio") == 0)
        return run_stdio();
    if (attack && strcmp(attack, "initials") == 0)
        return run_initials(load_total ? (unsigned)load_total : 100);
    if (attack)
        return run_attack(attack, load_total ? (unsigned)load_total : 1000, path, grant);
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

/* SPDX-License-Identifier: MIT */
/*
 * h3_internal.h - what the HTTP/3 modules share with each other and with
 * nothing else (h3.h is the interface):
 *
 *   h3_worker.c  the master's preparation and a worker's state: init, exit,
 *                the loop's entry points, the report
 *   h3_accept.c  a datagram's arrival: to its connection, or the admission
 *                of a new one (Retry, refusal, the ngtcp2 connection made),
 *                Version Negotiation, stateless reset
 *   h3_conn.c    one live QUIC connection (ngtcp2): read, callbacks, write,
 *                timers, close
 *   h3_http.c    one connection's HTTP/3 layer (nghttp3) and its callbacks
 *   h3_stream.c  one request stream on the exchange: fields into struct
 *                http_request, the response head from core's field list, the
 *                body from the output queue
 *   h3_client.c  a connection's place in the per-client counts
 *                (--max-conns-per-client, shared with TCP)
 *   h3_cid.c     connection ID -> connection, for every packet
 *   h3_tls.c     QUIC's TLS: GnuTLS credentials per certificate pair, the
 *                session of a connection, SNI and ALPN
 *   h3_token.c   the shared secrets, connection IDs, Retry and NEW_TOKEN
 *                tokens, stateless reset tokens
 *   h3_glitch.c  a hostile peer's glitch budget, and the mark (doom) of a
 *                close decided inside a library callback
 *   h3_sched.c   when connections act: the clock, the timer heap, the
 *                connections to flush after a batch of datagrams
 *   h3_udp.c     the UDP sockets: binding the group (master), receiving in
 *                batches with the local address, sending with GSO
 *   h3_bpf.c     the classic BPF program that steers by worker index
 *
 * Each file calls only files below it in this list, so their calls form no
 * cycle: a lower file that needs a higher one to act leaves a mark (a timer
 * armed, a connection to flush, a connection doomed) that the higher one
 * acts on when the call returns, never calling up.
 *
 * Memory: a worker reserves its connection records and stream slots at
 * start (address space, resident as touched); ngtcp2, nghttp3 and GnuTLS
 * allocate from malloc for what they hold per connection.
 */
#ifndef PITH_H3_INTERNAL_H
#define PITH_H3_INTERNAL_H

#include "base/close.h"
#include "base/stats.h"
#include "base/worker.h"
#include "core/core.h"
#include "http3/h3.h"

#include <gnutls/gnutls.h>
#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

struct worker;
struct exchange;

/* Server connection IDs: the worker's index in the first byte (the
 * steering program reads it from a short header, RFC 9000 §17.3), then
 * random bytes. 16 bytes leave 120 random bits. */
#define H3_CID_LEN          16
#define H3_SECRET_LEN       32
#define H3_MAX_UDP_PAYLOAD  1452 /* ngtcp2's default: fits a 1500-byte MTU over IPv6 */
#define H3_GSO_MAX          32   /* datagrams per GSO send (64 KiB / 1452 = 45) */
#define H3_RECV_BATCH       32   /* datagrams per recvmmsg */
#define H3_RECV_BUF         2048 /* a datagram larger than this is dropped (truncated) */
#define H3_MAX_STREAMS      100  /* concurrent request streams per connection */
#define H3_STREAM_SLOTS_MAX 1024 /* per worker: 64 MiB of address space */
/* Body bytes handed to nghttp3 stay until the peer acknowledges them: in
 * chunks of the worker's pool (h3_stream.c), at most H3_STREAM_CHUNKS a
 * stream and H3_CONN_CHUNKS a connection, so what a stream has in flight
 * is bounded by flow control and these, not by a ring of its own. */
#define H3_CHUNK            (32 * 1024)
#define H3_CHUNKS           2048  /* per worker: 64 MiB of address space */
#define H3_STREAM_CHUNKS    64    /* 2 MiB a stream */
#define H3_CONN_CHUNKS      128   /* 4 MiB a connection */
#define H3_WARM_CHUNKS      16    /* free chunks kept with their pages (512 KiB) */
#define H3_HEADER_LIST_MAX  16384 /* HTTP/1's head limit (431), also SETTINGS' */
#define H3_RETRY_TOKEN_S    10    /* a Retry token's lifetime */
#define H3_NEW_TOKEN_S      (24 * 3600)
#define H3_HANDSHAKES_RETRY 64   /* handshakes in progress per worker before Retry */
#define H3_RESETS_PER_S     100  /* stateless resets a worker sends per second at most */
#define H3_WINDOW_MIN       1024 /* no STREAM frame shorter, for a short window, unless it ends */
#define H3_WARM_SLOTS       16   /* free stream slots kept with their pages */
#define H3_TRIM_CONNS       16   /* connections gone since the peak before a heap trim */
#define H3_TRIM_STREAMS     256  /* or streams gone since the last trim */

/* The master's, copied into each worker by fork: the secrets all workers
 * share (a connection's reset token and a client's token must verify in
 * whichever worker the packet reaches), the bound port. */
struct h3_server {
    uint8_t reset_secret[H3_SECRET_LEN];
    uint8_t token_secret[H3_SECRET_LEN];
    unsigned port;
    int gso;          /* 1: UDP_SEGMENT works here; 0: one datagram per send */
    uint8_t cid_base; /* our connection IDs' first byte: this plus the worker's index */
    bool ebpf;        /* steered by key through a map (h3_bpf.c), else by group order */
    int ebpf_errno;   /* why not (the start line says) */
    char describe[160];
};

/* One datagram's addresses (the path) and ECN. */
struct h3_path {
    struct sockaddr_storage local, peer;
    socklen_t local_len, peer_len;
    uint8_t ecn;
};

struct h3_stream;

/* The client's control stream as pith reads it beside nghttp3 (h3_http.c),
 * for its PRIORITY_UPDATE frames only: nghttp3 checks the stream and
 * applies what it may itself. */
#define H3_PRIO_MAX 64 /* a PRIORITY_UPDATE's bytes kept: the stream's ID and the value */
struct h3_ctrl_reader {
    int64_t id;         /* the stream; 0 (a request stream's ID) until its type came */
    uint8_t step;       /* 0: a frame's type, 1: its length, 2: its payload */
    uint8_t vn, vlen;   /* a varint's bytes read, and how many it has */
    uint8_t kept;       /* of a PRIORITY_UPDATE's payload */
    uint64_t v;         /* the varint so far */
    uint64_t type, len; /* the frame's */
    uint64_t left;      /* of its payload, to come */
    uint8_t buf[H3_PRIO_MAX];
};

/* One QUIC connection of a worker. */
struct h3_conn {
    struct h3_worker *hw;
    ngtcp2_conn *qc;
    nghttp3_conn *hc;
    gnutls_session_t tls;
    ngtcp2_crypto_conn_ref ref;
    ngtcp2_cid odcid; /* the client's first Destination Connection ID (mapped until freed) */
    struct h3_path path;
    int tls_pair;      /* the certificate pair SNI chose (sites: 421 for another) */
    uint32_t heap_at;  /* in the worker's timer heap (h3_sched.c); UINT32_MAX: not in it */
    uint64_t expiry;   /* ns, ngtcp2's next timer */
    uint64_t close_at; /* ns: the end of the closing or draining period; 0 */
    struct h3_stream *streams;
    /* The streams with no answer yet, oldest first (deadline() reads the
     * head), and the one whose answer's last byte nghttp3 took last: its
     * FIN is, as a rule, the next one written (h3_stream_fin_sent). Both
     * spare a walk over streams whose memory is cold. */
    struct h3_stream *waiting, *waiting_tail, *fin_hint;
    uint32_t nstreams;
    bool in_use;
    bool handshake_done;
    bool dirty;         /* in the worker's list of connections to flush */
    bool closing;       /* CONNECTION_CLOSE sent: answered again, rate-limited */
    bool draining;      /* the peer's CONNECTION_CLOSE: silence until close_at */
    bool goaway;        /* SIGTERM: GOAWAY sent */
    bool validated;     /* the client's address was validated by a token */
    enum h3_close why;  /* while closing or draining: the reason counted at the end */
    uint64_t app_err;   /* nghttp3's error to close with, from inside a callback; 0 */
    uint8_t *close_pkt; /* the CONNECTION_CLOSE packet, while closing */
    size_t close_len;
    uint32_t close_sent; /* times it was sent again */
    /* Send chunks (h3_stream.c): how many the streams hold; waiting for
     * one of the worker's (in hw->chunk_waiters), or for one of its own. */
    uint32_t nchunks;
    bool chunk_wait, cap_blocked;
    struct h3_conn *chunk_next_waiter;
    /* Hostile peers (issue 34, h3_glitch.c): a bucket of glitches spent by
     * what did no work, refilled with time; a close decided inside a
     * library callback waits for the callback's end (doomed). */
    uint32_t glitches; /* the bucket's level */
    int64_t glitch_at; /* ms: the last refill */
    bool useful;       /* the packet being read did some work */
    bool doomed;       /* close with doom_code (doom_why) once out of the library */
    enum h3_close doom_why;
    uint64_t doom_code;
    uint64_t active_at; /* ns: the client's last progress on its requests (the deadlines) */
    /* --max-conns-per-client (h3_client.c): the key of the address the
     * connection came from (0: no counts kept), and whether it counts
     * there now (from its address's validation until it closes). */
    uint64_t client_key;
    bool client_counted;
    struct h3_ctrl_reader ctrl; /* the client's PRIORITY_UPDATE frames */
    struct h3_conn *next_free;
};

/* One request stream, in a slot of the worker's stream region: this
 * record, the request (filled field by field), the exchange, its out
 * region and scratch. */
struct h3_stream {
    struct h3_conn *conn;
    int64_t id;
    struct h3_stream *next, *prev;
    struct h3_stream *wait_next, *wait_prev; /* in the connection's waiting list */
    struct exchange *x;
    struct span path, authority, scheme; /* the pseudo-headers */
    uint32_t bytes_len;                  /* of the request's bytes used */
    uint32_t list_bytes;                 /* name + value + 32 per field (RFC 9114 §4.2.2) */
    int refuse;                          /* HTTP/1's verdict (400, 414, 431), or 0 */
    int fields_verdict;                  /* http_fields' first refusal, or 0 */
    bool pseudo_done, too_big, malformed, answered, has_priority, blocked, read_done;
    /* pith set its priority (no priority field): the client's updates
     * are applied by h3_stream_priority_update, not nghttp3. */
    bool pri_shared;
    bool waiting;       /* in the connection's list of streams with no answer yet */
    bool exchanging;    /* x is active: kept here, so ending a stream need not touch x */
    uint64_t opened_at; /* ns: a request unfinished past --timeout-header ends the connection */
    /* The send chunks, oldest first (a ring of indices into the worker's
     * pool): bytes copied from the queue and handed to nghttp3, which
     * references them until the peer acknowledges them. */
    uint16_t chunk[H3_STREAM_CHUNKS], chunk_len[H3_STREAM_CHUNKS];
    uint8_t chunk_head, nchunks;
    uint32_t head_acked; /* bytes of the oldest chunk acknowledged */
    uint64_t body_given; /* bytes handed to nghttp3 */
    bool eof;            /* the last body byte went to nghttp3 */
};

/* A worker's HTTP/3 state. */
struct h3_worker {
    struct worker *w;
    const struct h3_server *srv;
    int fd;
    struct h3_conn *conns;
    uint32_t nconns, next_unused, active, handshakes;
    struct h3_conn *free_conns;
    /* The timer heap (h3_sched.c): connections by expiry (min-heap). */
    struct h3_conn **heap;
    uint32_t heap_n;
    /* Connection IDs -> connection (h3_cid.c). */
    struct h3_cidmap *map;
    /* Send chunks: H3_CHUNKS of H3_CHUNK bytes; free ones warm (pages
     * kept, taken first) up to H3_WARM_CHUNKS, cold past it; a link per
     * chunk, beside them, so a cold chunk is never touched to list it;
     * connections waiting for one, in order. */
    char *chunk_mem;
    uint16_t *chunk_link;
    uint32_t chunk_warm, chunk_cold, nwarm_chunks, next_chunk, chunks_used;
    struct h3_conn *chunk_waiters, *chunk_waiters_tail;
    /* Stream slots: free ones warm (their pages still there, reused
     * first) up to H3_WARM_SLOTS, cold (given back to the kernel) past it. */
    char *stream_mem;
    uint32_t nslots, slots_used, next_slot, nwarm;
    uint32_t slots_peak, chunks_peak; /* the most in use since the last trim */
    char *free_slot, *cold_slot;
    /* malloc's heap is trimmed once H3_TRIM_CONNS connections went since
     * the peak, or H3_TRIM_STREAMS streams since the last trim, at most
     * once a second (h3_worker.c). */
    uint32_t trim_peak, streams_gone;
    uint64_t trim_at;
    /* TLS (h3_tls.c). */
    struct h3_tls *tls;
    /* Callbacks and settings, made once. */
    ngtcp2_callbacks qcb;
    nghttp3_callbacks hcb;
    /* I/O buffers (h3_udp.c). */
    struct h3_io *io;
    uint8_t *tx; /* H3_GSO_MAX datagrams, for one send */
    /* The clock and the connections to flush (h3_sched.c). */
    uint64_t now_ns;        /* the clock after the last wait */
    struct h3_conn **dirty; /* connections to flush after this batch */
    uint32_t ndirty, dirty_taken;
    int64_t reset_sec; /* stateless resets: the second counted */
    uint32_t reset_n;  /* ... and how many in it */
    bool draining;
    /* Counts for the report. */
    uint64_t n_conns, n_streams, n_retries, n_resets, n_vn, n_migrations, n_tokens, n_glitches;
    uint64_t closes[H3_CLOSE_REASONS];
};

/* Counts an event in the worker's exit line (hw->n_NAME) and in /metrics
 * (stats.h's h3_NAME). */
#define H3_COUNT(hw, name) ((hw)->n_##name++, stats_add(&(hw)->w->stats->h3_##name, 1))

/* ---- h3_sched.c ------------------------------------------------------------------- */
/* The clock QUIC's timestamps come from (ns, monotonic): the system's;
 * fuzz/fuzz_h3.c runs its own, so that deadlines pass within one input. */
extern uint64_t (*h3_clock)(void);
/* Reads it, after each wait; h3_now is what was read (ngtcp2's timestamps). */
void h3_clock_read(struct h3_worker *hw);
uint64_t h3_now(struct h3_worker *hw);
/* The timer heap and the list to flush, for hw->nconns connections. 0 or -1. */
int h3_sched_init(struct h3_worker *hw);
/* The timer heap: hc's expiry changed (UINT64_MAX: none), or it leaves. */
void h3_heap_set(struct h3_worker *hw, struct h3_conn *hc, uint64_t at);
void h3_heap_del(struct h3_worker *hw, struct h3_conn *hc);
/* The earliest expiry (UINT64_MAX: no timer armed). */
uint64_t h3_heap_first(const struct h3_worker *hw);
/* A connection whose timer is due (by h3_now), taken out of the heap; NULL
 * when none is. */
struct h3_conn *h3_heap_due(struct h3_worker *hw);
/* hc has packets to send: flushed once the batch of datagrams is read. */
void h3_dirty(struct h3_conn *hc);
/* The next connection to flush, in order, its mark cleared; NULL once the
 * list is done (it is then empty). */
struct h3_conn *h3_dirty_next(struct h3_worker *hw);

/* ---- h3_glitch.c ------------------------------------------------------------------- */
/* Closes hc with code (counted as why) once the library that called us
 * has returned (h3_conn.c acts on the mark). The first decision stands. */
void h3_doom(struct h3_conn *hc, uint64_t code, enum h3_close why);
/* A glitch (hostile peers): something that did no work spends the bucket;
 * past it the connection is doomed with H3_EXCESSIVE_LOAD. */
void h3_glitch(struct h3_conn *hc);

/* ---- h3_udp.c ----------------------------------------------------------------------- */
/* The master: a socket per worker on addr (the TLS listener's), in one
 * reuseport group; probes GSO. 0 or -errno. */
int h3_udp_bind(const struct sockaddr_storage *addr, socklen_t len, int *fds, unsigned n);
int h3_udp_probe_gso(int fd);
struct h3_io;
struct h3_io *h3_io_new(void);
void h3_io_free(struct h3_io *io);
/* A received datagram's path: its source, the local address it was sent
 * to and its ECN bits, from m (recvmmsg's or the io_uring loop's). False
 * for a datagram that came truncated (dropped). */
bool h3_udp_path(struct h3_worker *hw, const struct msghdr *m, struct h3_path *path);
/* Receives up to H3_RECV_BATCH datagrams; calls got() for each. Returns the
 * count, 0 when none was waiting, or -errno. */
int h3_udp_recv(struct h3_worker *hw, void (*got)(struct h3_worker *hw, uint8_t *p, size_t n,
                                                  const struct h3_path *path));
/* Sends n bytes at p to path, as datagrams of seg bytes (the last may be
 * shorter) with GSO where there is more than one. -errno on failure
 * (EAGAIN: dropped, QUIC's loss recovery sends again). */
int h3_udp_send(struct h3_worker *hw, const struct h3_path *path, const uint8_t *p, size_t n,
                size_t seg);
/* The same, with ecn (RFC 3168's two bits, as ngtcp2 chose them for the
 * train: ECT(0) while it validates the path's ECN and once it has) in the
 * IP header; h3_udp_send's packets are Not-ECT. */
int h3_udp_send_marked(struct h3_worker *hw, const struct h3_path *path, const uint8_t *p, size_t n,
                       size_t seg, uint8_t ecn);

/* ---- h3_bpf.c ---------------------------------------------------------------------- */
/* Steers the group of srv->udp_fds: eBPF through srv->h3_map_fd (made
 * here, or an upgrade's) where the kernel allows it, else classic BPF;
 * sets h->cid_base and h->ebpf. 0 or -errno. */
int h3_bpf_steer(struct server *srv, struct h3_server *h);

/* ---- h3_token.c --------------------------------------------------------------------- */
int h3_secrets_make(struct h3_server *s);
/* A new server connection ID of worker index, with its reset token. */
int h3_cid_new(struct h3_worker *hw, ngtcp2_cid *cid, uint8_t *reset_token);
int h3_reset_token(const struct h3_server *s, const ngtcp2_cid *cid, uint8_t *token);
/* Sends a Retry for the Initial hd from path. */
void h3_send_retry(struct h3_worker *hw, const ngtcp2_pkt_hd *hd, const struct h3_path *path);
/* A Retry token's verdict: 1 valid (*odcid set), 0 none or not ours, -1
 * invalid (the caller closes with INVALID_TOKEN). */
int h3_verify_token(struct h3_worker *hw, const ngtcp2_pkt_hd *hd, const struct h3_path *path,
                    ngtcp2_cid *odcid, bool *regular);
/* A NEW_TOKEN token for a connection whose handshake completed. */
void h3_send_new_token(struct h3_conn *hc);
/* Answers a packet of an unknown connection with a stateless reset
 * (RFC 9000 §10.3), within H3_RESETS_PER_S. */
void h3_send_reset(struct h3_worker *hw, const uint8_t *dcid, size_t dcidlen, size_t pktlen,
                   const struct h3_path *path);
void h3_send_vn(struct h3_worker *hw, const ngtcp2_version_cid *vc, const struct h3_path *path);
/* Answers the Initial hd with CONNECTION_CLOSE carrying the transport
 * error code, keeping no state (INVALID_TOKEN, CONNECTION_REFUSED). */
void h3_send_close(struct h3_worker *hw, const ngtcp2_pkt_hd *hd, const struct h3_path *path,
                   uint64_t code);

/* ---- h3_tls.c ---------------------------------------------------------------------- */
struct h3_tls;
/* Builds credentials from the certificates the master published. */
struct h3_tls *h3_tls_new(struct worker *w);
void h3_tls_free(struct h3_tls *t);
/* SIGHUP: the published pairs again, when they changed. */
void h3_tls_reload(struct worker *w, struct h3_tls **t);
/* A server session for hc (ALPN h3 only, TLS 1.3, no early data). 0 or -1. */
int h3_tls_session(struct h3_worker *hw, struct h3_conn *hc);

/* ---- h3_cid.c ----------------------------------------------------------------------- */
struct h3_cidmap *h3_cidmap_new(uint32_t capacity);
void h3_cidmap_free(struct h3_cidmap *m);
int h3_cidmap_add(struct h3_cidmap *m, const uint8_t *cid, size_t len, struct h3_conn *hc);
void h3_cidmap_del(struct h3_cidmap *m, const uint8_t *cid, size_t len);
struct h3_conn *h3_cidmap_get(const struct h3_cidmap *m, const uint8_t *cid, size_t len);
/* IDs mapped now (every connection gone: 0). */
uint32_t h3_cidmap_count(const struct h3_cidmap *m);

/* ---- h3_accept.c -------------------------------------------------------------------- */
/* A datagram for this worker (h3_udp_recv's callback): to its connection,
 * or a new one admitted, or answered without state, or dropped. */
void h3_accept_datagram(struct h3_worker *hw, uint8_t *p, size_t n, const struct h3_path *path);

/* ---- h3_conn.c ---------------------------------------------------------------------- */
void h3_conn_callbacks(ngtcp2_callbacks *cb);
/* ngtcp2's view of path (its addresses, not copied). */
ngtcp2_path h3_path_ngtcp2(struct h3_path *p);
/* A datagram of hc's (h3_accept.c found or made hc for it) into ngtcp2. */
void h3_conn_read(struct h3_conn *hc, uint8_t *p, size_t n, const struct h3_path *path);
/* hc's record goes, at once and without a word, counted as why: its
 * streams, IDs, ngtcp2, nghttp3 and TLS state freed, the record back on
 * the worker's free list. */
void h3_conn_free(struct h3_conn *hc, enum h3_close why);
/* Writes and sends what hc has to send (packets, up to the pacing
 * quantum), then rearms its timer. */
void h3_conn_flush(struct h3_conn *hc);
/* Closes hc with an application error (H3_* code), or a transport one. */
void h3_conn_close_app(struct h3_conn *hc, uint64_t code, enum h3_close why);
void h3_conn_timer(struct h3_conn *hc);
void h3_conn_free_all(struct h3_worker *hw);
/* The client made progress: its packet did work; active: on its requests
 * (a request's bytes, an answer's bytes acknowledged), which moves the
 * deadlines. */
void h3_conn_progress(struct h3_conn *hc, bool active);

/* ---- h3_client.c -------------------------------------------------------------------- */
/* The per-client key of the address a datagram came from; 0 when no
 * counts are kept (no --max-conns-per-client, no basic auth). */
uint64_t h3_client_key(const struct h3_worker *hw, const struct h3_path *path);
/* The client has --max-conns-per-client connections (TCP and QUIC) now. */
bool h3_client_full(const struct h3_worker *hw, uint64_t key);
/* Counts a connection of a validated address for client key: false when
 * the client is at its limit (nothing counted). True, counting nothing,
 * for key 0. */
bool h3_client_open(struct h3_worker *hw, uint64_t key);
void h3_client_close(struct h3_worker *hw, uint64_t key);
/* hc's address was validated by its handshake: hc counts from now; false
 * when its client is at its limit (hc must then be refused). */
bool h3_client_validated(struct h3_conn *hc);
/* hc carries no more requests (closing, draining, freed): uncounted. */
void h3_client_release(struct h3_conn *hc);
/* A client over its limit was refused (/metrics: pith_client_limit_total). */
void h3_client_refused(struct h3_worker *hw);

/* ---- h3_http.c ---------------------------------------------------------------------- */
void h3_http_callbacks(nghttp3_callbacks *cb);
/* Sets hc's HTTP/3 layer up: the control and QPACK streams. 0 or -1. */
int h3_http_start(struct h3_conn *hc);
/* Stream data from ngtcp2 (at offset off of stream id) into nghttp3 (and
 * flow control). 0 or -1. */
int h3_http_recv(struct h3_conn *hc, int64_t id, uint64_t off, const uint8_t *p, size_t n,
                 bool fin);

/* ---- h3_stream.c -------------------------------------------------------------------- */
int h3_streams_init(struct h3_worker *hw);
void h3_streams_exit(struct h3_worker *hw);
/* A request stream opened by the client: its slot, or NULL (refused). */
struct h3_stream *h3_stream_open(struct h3_conn *hc, int64_t id);
void h3_stream_free(struct h3_stream *st);
void h3_stream_free_all(struct h3_conn *hc);
/* One decoded field; the end of the field section (the request is answered). */
void h3_stream_field(struct h3_stream *st, struct span name, struct span value);
void h3_stream_request(struct h3_stream *st);
/* The client's PRIORITY_UPDATE for request stream id (RFC 9218 §7.2), the
 * field value v: applied here to a stream whose priority pith set. */
void h3_stream_priority_update(struct h3_conn *hc, int64_t id, const uint8_t *v, size_t n);
/* nghttp3's read_data: the body from the queue into a chunk. */
nghttp3_ssize h3_stream_read_body(nghttp3_conn *conn, int64_t id, nghttp3_vec *vec, size_t veccnt,
                                  uint32_t *pflags, void *ud, void *sud);
/* The stream's last byte (its FIN) went into a packet: the answer is
 * logged and its exchange released (the file, the cache entry); what is
 * still unacknowledged stays in nghttp3's buffers and the chunks. */
void h3_stream_fin_sent(struct h3_conn *hc, int64_t id);
/* Free slots and chunks past those kept warm: their pages go back. */
bool h3_streams_surplus(const struct h3_worker *hw);
void h3_streams_trim(struct h3_worker *hw);
/* hc goes: out of the worker's queue of connections waiting for a chunk. */
void h3_chunks_conn_gone(struct h3_conn *hc);
/* n more body bytes were acknowledged: chunks back, maybe a resumed read. */
void h3_stream_acked(struct h3_stream *st, uint64_t n);

#endif

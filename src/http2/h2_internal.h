/* SPDX-License-Identifier: MIT */
/*
 * h2_internal.h - what h2_conn.c (the connection: session, input, timers,
 * its life), h2_worker.c (what the sessions share: tables, nghttp2's
 * callbacks for frames, the limits), h2_send.c (the connection's output
 * buffer, the pump and the cork), h2_stream.c (a stream: its request, its exchange, its HEADERS
 * and DATA) and h2_mem.c (nghttp2's allocator) share. Nothing outside them
 * includes it.
 *
 * Memory (docs/DESIGN.md §1, "HTTP/2"):
 *   - per connection: struct h2_conn (reserved per connection slot at start)
 *     and nghttp2's session (its own allocations: the session, two HPACK
 *     tables of at most 4 KiB each, one record per open stream); while it
 *     writes, the connection's pool slot, whose part after POOL_IN_SIZE
 *     (H2_OUT_CAP) is the one output buffer all frames go into. Received
 *     bytes go to nghttp2 at once from the worker's H2_RX_SIZE buffer, so
 *     an idle connection holds no buffer at all.
 *   - per open stream: a slot of the worker's stream pool (POOL_SLOT_SIZE,
 *     the same regions as a connection's: the stream record and its
 *     request, then the exchange, the out region and the scratch), taken
 *     when its HEADERS begin and given back when nghttp2 closes it.
 */
#ifndef PITH_H2_INTERNAL_H
#define PITH_H2_INTERNAL_H

#include "base/pool.h"
#include "core/core.h"
#include "core/siphash.h"

#include <nghttp2/nghttp2.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

struct worker;
struct conn;
struct exchange;

/* The output bound: bytes of frames a connection may have waiting for the
 * socket (what nghttp2 holds besides is bounded by max_outbound_ack and the
 * stream count). Past it no DATA is produced (NGHTTP2_ERR_DEFERRED) and no
 * more input is read until the socket takes what is there. */
#define H2_OUT_CAP (POOL_SLOT_SIZE - POOL_IN_SIZE)
/* Received bytes go to nghttp2 as they arrive, from one buffer per worker. */
#define H2_RX_SIZE (32 * 1024)
/* A DATA frame is not cut smaller than this to fit the buffer's rest (no
 * dribble of tiny frames; lighttpd defers frames under 2 KiB likewise). */
#define H2_FRAME_MIN 4096
/* Nor is a DATA frame sent smaller than this because the client's
 * flow-control window is (unless it carries the rest of the body's piece):
 * a client that grants a few bytes at a time (CVE-2019-9511, "data
 * dribble") would otherwise get a 9-byte header, a send and a TLS record
 * per byte it grants. The stream waits until its window reaches this, as
 * for a zero window; a frame's fixed cost stays under 4% of its bytes.
 * Only the rest of a grant of at least this much (WINDOW_UPDATE, the
 * initial window) goes smaller, in the one frame that empties it, so a
 * client that gives window back only once it is spent is not stalled.
 * And a client whose stream windows are small by its own setting (an
 * initial window under this, such as 100 bytes or 1) is served with
 * frames of what its window allows, as nginx and h2o serve it, each such
 * frame a glitch (h2_glitch): it gets about the glitch budget's worth of
 * them, then GOAWAY(ENHANCE_YOUR_CALM). lighttpd waits for 2048 bytes. */
#define H2_WINDOW_MIN 1024
/* TCP_NOTSENT_LOWAT of an HTTP/2 connection: the socket holds at most
 * about this much not yet sent (beyond what is in flight), so what goes
 * next is still nghttp2's choice (RFC 9218 priorities, round-robin) rather
 * than megabytes already queued in the kernel's send buffer ahead of a
 * small asset; one output buffer (32 KiB) plus this is what is committed.
 * 16 KiB: h2o's and Cloudflare's figure; a full frame fits. */
#define H2_NOTSENT_LOWAT (16 * 1024)
/* The header list a request may have: name + value + 32 per field (RFC 9113
 * §6.5.2), the same 16 KiB the HTTP/1 head gets; past it the answer is 431. */
#define H2_HEADER_LIST_MAX (16 * 1024)
/* SETTINGS_HEADER_TABLE_SIZE pith sends, and the most of the client's
 * that its HPACK encoder uses (RFC 7541's default). */
#define H2_HEADER_TABLE_SIZE 4096
/* A frame header's length (RFC 9113 §4.1). */
#define H2_FRAME_HDLEN 9
/* Stream slots (64 KiB of address space each, resident only once used):
 * each connection may always hold H2_STREAM_RESERVE of them (at most
 * --h2-max-streams), whatever the others hold; besides those reserves the
 * worker has max(H2_STREAM_SHARED_MIN, H2_STREAM_SLOTS_MAX - the
 * reserves) shared slots (no more than the connections could use), and
 * one client (an address, IPv6 by /64) holds at most half of those: 4096
 * slots in all by default, 2048 of them shared. A stream that can have no slot now waits,
 * with the rest of its connection's input, until one of the connection's
 * own streams gives its slot back (h2_conn.c, admit): it is never refused
 * because other connections hold the slots. */
#define H2_STREAM_SLOTS_MAX  4096u
#define H2_STREAM_RESERVE    2u
#define H2_STREAM_SHARED_MIN 2048u
/* Glitches (frames that do no work for the client: empty DATA, PRIORITY,
 * unknown types, malformed requests, header lists past the limit, streams
 * the server had to reset): a bucket of H2_GLITCH_BURST, refilled by
 * H2_GLITCH_RATE a second; empty, the connection ends with
 * GOAWAY(ENHANCE_YOUR_CALM) (CVE-2019-9516/9518, CVE-2025-8671). */
#define H2_GLITCH_BURST 1000
#define H2_GLITCH_RATE  100
/* Resets against completions (Rapid Reset, CVE-2023-44487, beside
 * nghttp2's own rate limit): each stream reset costs one of
 * H2_RESET_BUDGET, each response finished gives one back. */
#define H2_RESET_BUDGET 100
/* nghttp2 keeps one frame buffer per session of a frame header, a pad
 * byte and the largest payload (16,394 bytes), written from its start.
 * From malloc it shares pages with the session's other records, and the
 * allocator's bookkeeping touches its last page too; so each connection
 * gets a page-aligned region of its own for it (h2_mem.c),
 * of which an idle connection has touched only the first page. */
#define H2_FRAMEBUF_REGION (20 * 1024)

/* IDLE and WAIT count from when that wait began (the client's last
 * progress, or the change between them), not from pith's last send. */
enum h2_timer_mode {
    H2_TIMER_NONE,
    H2_TIMER_IDLE,  /* no open stream, nothing to send: timeout_keepalive */
    H2_TIMER_WAIT,  /* streams open, waiting for the client: timeout_header */
    H2_TIMER_WRITE, /* bytes waiting for the socket: timeout_send, rearmed on progress */
};

struct h2_stream;

struct h2_conn {
    nghttp2_session *session;
    nghttp2_mem mem;     /* nghttp2's allocator for this session (h2_mem_init) */
    char *framebuf;      /* the connection's H2_FRAMEBUF_REGION */
    bool framebuf_taken; /* nghttp2 holds it now */
    struct worker *w;
    struct conn *c;
    /* The output side (h2_send.c): frames are added at h2_out_tail(), which
     * out_len then grows past; the pump sends from out_sent. */
    uint32_t out_len, out_sent; /* the output buffer's bytes, and how many went */
    bool sending;               /* a send returned -EAGAIN: sent() or writable() follows */
    unsigned burst;             /* buffers written back to back since the socket last waited */
    bool corked;                /* TCP_CORK is on (pump: from a burst's second buffer) */
    bool no_cork;               /* the socket has no cork (Unix): not tried again */
    bool full;                  /* the socket filled in this burst: no cork until it ends */
    struct iovec iov;           /* the send in flight (io_uring reads it until done) */
    bool failed;                /* a callback decided the connection ends */
    bool recv_dead;             /* nghttp2 refused the input: nothing more is read */
    bool peer_ended;            /* the client ended its stream: what is owed goes, then close */
    bool goaway;                /* our GOAWAY is queued: close once nothing is left */
    bool terminated;            /* ... and it ends the session (not a drain's) */
    bool resume_on_write;       /* a body source paused: writable() resumes it */
    enum h2_timer_mode timer_mode;

    enum h2_timer_mode wait_mode; /* IDLE or WAIT: what pith waits for when it sends nothing */
    int64_t wait_ms;              /* since when: the client's last progress, or wait_mode's start */
    int64_t wait_deadline;        /* the deadline armed for that wait */

    int32_t max_stream_id; /* the highest client stream id seen in HEADERS */
    /* Stream slots (h2_stream.c): how many it holds, those taken for the
     * new streams of the input being fed (a list through their first
     * bytes), and its client's key in the worker's counts (0: none). */
    unsigned held;
    char *ready;
    uint64_t client_key;
    /* The input as admit() walks it: bytes left of the frame (or the
     * preface) being passed, the next frame header's bytes so far, the
     * highest new stream given a slot; and input held back while a new
     * stream waits for a slot (in the connection's slot, stash_off..). */
    uint32_t walk_left;
    uint8_t walk_hd[9];
    uint8_t walk_hd_len;
    int32_t walk_max_id;
    uint32_t stash_off, stash_len;
    unsigned open;           /* the client's streams nghttp2 holds open (refused ones too) */
    bool settings_told;      /* pith's first SETTINGS went into the buffer (tell_max_streams) */
    struct h2_stream *first; /* the open streams with a slot */
    unsigned nstreams;
    int64_t glitch_tokens; /* the glitch bucket, in thousandths */
    int64_t glitch_ms;     /* when it was last refilled */
    int reset_budget;
    uint32_t conn_window_need; /* the least window a stream waits for from the
                                  connection's (0: none waits for it) */
    uint32_t conn_grant;       /* the client's last grant of connection window */
    uint32_t initial_before;   /* the client's initial window before a SETTINGS frame */
};

struct h2_stream {
    struct h2_conn *hc;
    int32_t id;
    struct h2_stream *next, *prev;
    struct exchange *x;                  /* in the slot; active once the request is answered */
    uint32_t bytes_len;                  /* the request's bytes kept so far (h2_stream.c) */
    uint32_t list_bytes;                 /* the header list's size (name + value + 32 each) */
    struct span path, authority, scheme; /* the pseudo-headers (:method: the request's) */
    int refuse;            /* HTTP/1's parser's first verdict on it (400, 414, 431), or 0 */
    int fields_verdict;    /* http_fields' first refusal (negated status), or 0 */
    bool pseudo_done;      /* the pseudo-headers were checked (the first field came) */
    bool malformed;        /* reset with PROTOCOL_ERROR (RFC 9113 §8.1.1): no answer */
    bool has_priority;     /* the client said its RFC 9218 priority */
    bool too_big;          /* the header list passed H2_HEADER_LIST_MAX: 431 */
    bool answered;         /* the response was submitted */
    bool deferred;         /* its DATA waits for room (nghttp2_session_resume_data) */
    bool conn_window;      /* window_need waits on the connection's window */
    uint32_t window_need;  /* its DATA waits until the flow-control window is this (0: not) */
    uint32_t grant;        /* the client's last grant of stream window (or its initial one) */
    int32_t window_before; /* its window before a SETTINGS frame (h2_stream_windows_before) */
};

/* ---- h2_send.c, for h2_conn.c and h2_stream.c ---- */

/* Room left in the output buffer. */
uint32_t h2_out_room(const struct h2_conn *hc);
/* The output buffer's next free byte. */
char *h2_out_tail(struct h2_conn *hc);
/* Writes the output buffer to the transport, refilling it (h2_produce)
 * whenever all of it went, until the socket waits, nothing is left or the
 * connection closed; corks the socket within a burst of buffers, uncorks
 * it when the pump stops with no send in flight. */
void h2_pump(struct worker *w, struct h2_conn *hc);
/* The transport's send in flight finished with n (bytes, or -errno): taken
 * into account, then the pump goes on. false when there is nothing to
 * settle: the same bytes wait for room (writable() follows), or c closed. */
bool h2_sent(struct worker *w, struct h2_conn *hc, ssize_t n);
/* The socket has room again (the transport's writable()): the pump goes on. */
void h2_writable(struct worker *w, struct h2_conn *hc);
/* nghttp2's send callback (its frames other than DATA, h2_worker.c sets
 * it): copied into the output buffer, as much as there is room for. */
ssize_t h2_send_cb(nghttp2_session *s, const uint8_t *data, size_t length, int flags, void *ud);

/* ---- h2_conn.c, for h2_send.c and h2_stream.c ---- */

/* h2_send.c's one call back into the session: the output buffer went
 * whole (it is empty); the streams whose DATA waited for room resume, and
 * it is filled from every stream nghttp2 has something for. */
void h2_produce(struct worker *w, struct h2_conn *hc);
/* The client moved something on: a request, DATA of its own, or a body
 * its window let move (a DATA frame of ours with bytes in it). The wait
 * for it (idle or with streams open) starts again from here. */
void h2_progress(struct h2_conn *hc);

/* ---- h2_worker.c, for h2_conn.c and h2_stream.c ---- */

/* Ends the session with GOAWAY(code) (once; after a drain's GOAWAY too). */
void h2_goaway(struct worker *w, struct h2_conn *hc, uint32_t code);
/* A glitch happened; false when it emptied the bucket (GOAWAY is queued). */
bool h2_glitch(struct worker *w, struct h2_conn *hc);
/* A stream was reset (by either side); false when the budget ran out. */
bool h2_reset_spent(struct worker *w, struct h2_conn *hc);

/* ---- h2_stream.c, for h2_conn.c ---- */

/* The callbacks that make and answer streams, into cb. */
void h2_stream_callbacks(nghttp2_session_callbacks *cb);
/* Whether hc may take a stream slot now (its reserve, or a shared one
 * within its client's half). */
bool h2_slot_ready(struct worker *w, const struct h2_conn *hc);
/* Takes one (h2_slot_ready() said so) for a new stream of the input being
 * fed: h2_stream_begin() uses it. */
void h2_slot_take(struct worker *w, struct h2_conn *hc);
/* Gives back the slots taken and not used (after the input was fed). */
void h2_slots_untake(struct worker *w, struct h2_conn *hc);
/* Whether every stream holding a slot waits for the client's window: a
 * new stream waiting for one of their slots would wait for ever. */
bool h2_slots_stuck(const struct h2_conn *hc);
/* HEADERS of a new request began on stream id: the slot taken for it, or
 * REFUSED_STREAM when none was. */
void h2_stream_begin(struct worker *w, struct h2_conn *hc, int32_t id);
/* A request's header list ended (END_HEADERS of its HEADERS): answer it. */
void h2_stream_request(struct worker *w, struct h2_conn *hc, int32_t id);
/* Every stream still open goes (the connection ends): logged, released. */
void h2_stream_free_all(struct worker *w, struct h2_conn *hc);
/* Resumes the streams whose DATA waited for room in the output buffer. */
void h2_stream_resume(struct h2_conn *hc);
/* A SETTINGS frame with a payload begins (on_begin_frame): each stream's
 * flow-control window now, before nghttp2 applies it. */
void h2_stream_windows_before(struct h2_conn *hc);
/* Whether the SETTINGS frame f (received, applied by nghttp2) left every
 * stream's window within 2^31-1, its SETTINGS_INITIAL_WINDOW_SIZE entries
 * applied in order to the windows h2_stream_windows_before() noted, as
 * RFC 9113 §6.9.2 counts them. */
bool h2_stream_windows_fit(struct h2_conn *hc, const nghttp2_settings *f);
/* The client granted window: WINDOW_UPDATE of `grant` on stream id (0: the
 * connection's), or SETTINGS_INITIAL_WINDOW_SIZE of `grant` (id -1, every
 * stream's). Resumes the streams whose DATA waited for that much. */
void h2_stream_window(struct h2_conn *hc, int32_t id, uint32_t grant);

/* nghttp2's allocator (h2_mem.c): blocks of up to H2_BLOCK_MAX bytes go
 * back to free lists of the worker process, one per 16-byte class, which
 * keep at most H2_BLOCK_KEEP bytes in all. */
#define H2_BLOCK_MAX  1024
#define H2_BLOCK_KEEP (1024 * 1024)
/* hc's allocator (hc->mem) and frame buffer region, before its session. */
void h2_mem_init(struct worker *w, struct h2_conn *hc);

/* A client's shared stream slots in the worker. */
struct h2_client {
    uint64_t key; /* 0: a free entry */
    uint32_t shared;
};

/* The worker's HTTP/2 state (worker.h: w->h2). */
struct h2_worker {
    struct h2_conn *conns;     /* one per connection slot, by index */
    char *framebufs;           /* H2_FRAMEBUF_REGION per connection slot, by index */
    struct pool streams;       /* the stream slots */
    uint32_t reserve;          /* slots each connection may always hold */
    uint32_t reserved;         /* slots the connections' reserves still claim */
    uint32_t client_cap;       /* shared slots one client may hold */
    struct h2_client *clients; /* shared slots held per client (open addressing) */
    uint32_t client_mask;
    struct siphash_key client_k;
    char *rx; /* H2_RX_SIZE: where every connection receives (fed at once) */
    nghttp2_session_callbacks *callbacks;
    nghttp2_option *option;
};

#endif

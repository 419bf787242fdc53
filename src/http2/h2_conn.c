/* SPDX-License-Identifier: MIT */
/*
 * h2_conn.c - see h2_conn.h. One HTTP/2 connection's session and its life
 * over the transport: the received bytes go to nghttp2 as they come
 * (nothing of them is kept), and what nghttp2 has to send (its own frames
 * through send_cb, DATA through h2_stream.c's send_data) is written into the
 * connection's one output buffer, across all streams, which h2_send.c owns
 * and hands to the transport (the pump, the cork). While a send waits for
 * the socket nothing more is produced, but input is still read (c->duplex):
 * a request, a reset or a window that arrives during a download is taken at
 * once, so the next buffer holds what the client wants now. A peer that
 * stops reading costs the buffer and what nghttp2 queues for it: its
 * answers to PING and SETTINGS end at max_outbound_ack and max_settings,
 * responses at the stream limit, and the send timeout runs regardless of
 * input. Each event here ends with the pump (h2_pump), then settle (the
 * close, the deadline, reading on); the pump calls back into this file only
 * to fill the empty buffer (h2_produce).
 *
 * Limits (each set, even where nghttp2's default agrees): the SETTINGS pith
 * sends, here (MAX_CONCURRENT_STREAMS from --h2-max-streams,
 * HEADER_TABLE_SIZE 4096, MAX_HEADER_LIST_SIZE 16 KiB, ENABLE_PUSH 0,
 * NO_RFC7540_PRIORITIES 1); nghttp2's options (stream reset rate,
 * CONTINUATIONs, SETTINGS entries, outbound ACKs) and what nghttp2 1.52
 * does not count (glitches, resets against completions, a HEADERS frame
 * with a stream id below one already seen, which nghttp2 ignores silently:
 * nghttp2#1300), in h2_worker.c. Deadlines: with no open
 * stream and nothing to send the keep-alive timeout, with streams waiting
 * for the client the header timeout, with bytes waiting for the socket the
 * send timeout (rearmed on progress): a zero window or a closed TCP window
 * ends there. The first two count from the client's last progress (a
 * request, its DATA, a body its window let move), never from pith's own
 * sends: its answers to PINGs or SETTINGS keep nothing open.
 */
#include "http2/h2_conn.h"

#include "base/clients.h"
#include "base/stats.h"
#include "base/worker.h"
#include "core/bytes.h"
#include "event/conn.h"
#include "event/loop.h"
#include "event/transport.h"
#include "http2/h2_internal.h"
#include "sys/sys.h"
#include "tls/tls.h"

#include <errno.h>

/* RFC 9113 §3.4: the client's first bytes. */
static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
#define PREFACE_LEN (sizeof preface - 1)

/* nghttp2's own default for SETTINGS_MAX_CONCURRENT_STREAMS (no limit). */
#define STREAMS_UNLIMITED 0xffffffffu

static struct h2_conn *conn_record(struct worker *w, const struct conn *c)
{
    return &w->h2->conns[c - w->conns];
}

static void unstash(struct worker *w, struct h2_conn *hc);

/* The pump's one hook (h2_internal.h): the buffer went whole; fill it. */
void h2_produce(struct worker *w, struct h2_conn *hc)
{
    h2_stream_resume(hc);
    if (hc->failed)
        return;
    conn_take_slot(w, hc->c);
    unstash(w, hc); /* streams that waited for a slot, if one came back */
    if (nghttp2_session_send(hc->session) != 0)
        hc->failed = true;
}

static void arm(struct worker *w, struct conn *c, unsigned seconds)
{
    conn_arm(w, c, seconds);
}

/* The connection ends. After pith's GOAWAY the client may still be
 * sending: lingering (conn.c) keeps a close with unread input from
 * turning into a reset that destroys the GOAWAY before it is read. */
static void end(struct worker *w, struct h2_conn *hc, enum close_reason why)
{
    if (hc->goaway && !hc->failed)
        conn_linger(w, hc->c, why);
    else
        conn_close(w, hc->c, why);
}

void h2_progress(struct h2_conn *hc)
{
    hc->wait_ms = hc->w->now_ms;
}

/* The deadline while nothing waits for the socket: the keep-alive timeout
 * with no open stream, the header timeout with streams waiting for the
 * client, counted from when that wait began (progress(), or the change
 * between the two). pith's own sends meanwhile (the answer to a PING, a
 * SETTINGS ACK, HEADERS, a GOAWAY) pass through WRITE and back without
 * restarting it: else a client that PINGs each second would keep a
 * half-open stream or an idle connection forever. */
static void arm_wait(struct worker *w, struct h2_conn *hc)
{
    enum h2_timer_mode mode = hc->nstreams ? H2_TIMER_WAIT : H2_TIMER_IDLE;
    if (mode != hc->wait_mode) {
        hc->wait_mode = mode;
        hc->wait_ms = w->now_ms;
    }
    unsigned s = mode == H2_TIMER_WAIT ? w->set->timeout_header : w->set->timeout_keepalive;
    int64_t at = hc->wait_ms + (int64_t)s * 1000;
    if (hc->timer_mode != mode || hc->wait_deadline != at) {
        hc->timer_mode = mode;
        hc->wait_deadline = at;
        timer_arm(&w->wheel, &hc->c->timer, at); /* passed already: fires at once */
    }
}

/* After each event: close when nghttp2 is done (GOAWAY exchanged, no
 * stream left) or a callback failed, else set the deadline for what the
 * connection waits for, give an idle connection's slot back and read on. */
static void settle(struct worker *w, struct h2_conn *hc)
{
    struct conn *c = hc->c;
    if (c->state == CONN_CLOSING)
        return;
    bool pending = hc->sending || hc->out_sent < hc->out_len;
    bool done = !nghttp2_session_want_read(hc->session) && !nghttp2_session_want_write(hc->session);
    if (!pending && hc->peer_ended && !hc->failed && !hc->resume_on_write &&
        !nghttp2_session_want_write(hc->session)) {
        conn_close(w, c, CLOSE_PEER); /* all that could still be sent went */
        return;
    }
    if (!pending && (hc->failed || done)) {
        end(w, hc, hc->failed ? CLOSE_ERROR : w->draining ? CLOSE_SHUTDOWN : CLOSE_DONE);
        return;
    }
    if (pending) {
        if (hc->timer_mode != H2_TIMER_WRITE) {
            hc->timer_mode = H2_TIMER_WRITE;
            arm(w, c, w->set->timeout_send);
        }
        return; /* the loop watches both directions until the send is done */
    }
    arm_wait(w, hc);
    if (hc->resume_on_write) {
        w->loop->want_write(w, c); /* a deferred body source goes on first */
        return;
    }
    if (hc->stash_len)
        return; /* input waits for a stream slot: read nothing more (unstash) */
    if (c->slot && hc->out_len == 0) {
        conn_release_slot(w, c); /* idle: hold no buffer */
    }
    if (!hc->peer_ended)
        c->tp->want_read(w, c);
}

/* How much of the input p[0..n) nghttp2 may have now: all of it, unless a
 * HEADERS frame opening a new stream begins there and the connection can
 * have no stream slot for it (h2_slot_ready: its reserve is in use and the
 * shared slots are held, or its client's half of them). Then it stops
 * before that frame header's last byte, and the rest waits (stash) until
 * one of the connection's own streams gives a slot back: the stream is
 * never refused because other connections hold the slots. A slot is taken
 * here for each new stream let through (h2_stream_begin uses it). force:
 * one such stream goes through without a slot (and is refused), because
 * the connection's own streams all wait for the client's window and would
 * never give theirs back. The frames are walked by their 9-byte headers
 * only, after the 24-byte preface. */
static size_t admit(struct worker *w, struct h2_conn *hc, const char *p, size_t n, bool force)
{
    size_t i = 0;
    while (i < n) {
        if (hc->walk_left) {
            size_t k = n - i < hc->walk_left ? n - i : hc->walk_left;
            i += k;
            hc->walk_left -= (uint32_t)k;
            continue;
        }
        size_t k = H2_FRAME_HDLEN - hc->walk_hd_len;
        if (n - i < k) {
            mem_copy(hc->walk_hd + hc->walk_hd_len, p + i, n - i);
            hc->walk_hd_len += (uint8_t)(n - i);
            return n;
        }
        mem_copy(hc->walk_hd + hc->walk_hd_len, p + i, k);
        const uint8_t *hd = hc->walk_hd;
        uint32_t len = (uint32_t)hd[0] << 16 | (uint32_t)hd[1] << 8 | hd[2];
        int32_t id = (int32_t)(((uint32_t)hd[5] << 24 | (uint32_t)hd[6] << 16 |
                                (uint32_t)hd[7] << 8 | hd[8]) &
                               0x7fffffffu);
        if (hd[3] == NGHTTP2_HEADERS && (id & 1) && id > hc->walk_max_id) {
            if (h2_slot_ready(w, hc))
                h2_slot_take(w, hc);
            else if (force)
                force = false;
            else {
                hc->walk_hd_len += (uint8_t)(k - 1); /* waits, before the header's last byte */
                return i + k - 1;
            }
            hc->walk_max_id = id;
        }
        hc->walk_hd_len = 0;
        hc->walk_left = len;
        i += k;
    }
    return n;
}

/* Hands bytes to nghttp2, which keeps what it needs of them (HPACK state,
 * a partial frame's header): nothing of them stays here. */
static void feed_now(struct worker *w, struct h2_conn *hc, const char *p, size_t n)
{
    if (n == 0 || hc->failed || hc->recv_dead)
        return;
    ssize_t r = nghttp2_session_mem_recv(hc->session, (const uint8_t *)p, n);
    h2_slots_untake(w, hc); /* taken by admit() for streams nghttp2 did not open */
    if (r >= 0)
        return;
    /* nghttp2 stopped reading: a flood it caught (CONTINUATIONs past
     * max_continuations, ACKs past max_outbound_ack) or a bad preface
     * end the session without a word, so the GOAWAY is pith's; a failed
     * callback or no memory just ends the connection. */
    hc->recv_dead = true;
    if (r == NGHTTP2_ERR_NOMEM || r == NGHTTP2_ERR_CALLBACK_FAILURE)
        hc->failed = true;
    else
        h2_goaway(w, hc,
                  r == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS || r == NGHTTP2_ERR_FLOODED
                      ? NGHTTP2_ENHANCE_YOUR_CALM
                      : NGHTTP2_PROTOCOL_ERROR);
}

/* Received bytes go to nghttp2 as far as admit() lets them; the rest waits
 * in the connection's slot (its input region, which HTTP/2 uses for
 * nothing else) and nothing more is read until it has gone (unstash). */
static void feed(struct worker *w, struct h2_conn *hc, const char *p, size_t n)
{
    if (n == 0 || hc->failed || hc->recv_dead)
        return;
    size_t m = admit(w, hc, p, n, false);
    feed_now(w, hc, p, m);
    if (m == n || hc->failed || hc->recv_dead)
        return;
    conn_take_slot(w, hc->c);
    mem_move(hc->c->slot, p + m, n - m); /* p may be the slot itself (h2_conn_start) */
    hc->stash_off = 0;
    hc->stash_len = (uint32_t)(n - m);
}

/* The input that waited for a stream slot goes on, as far as the slots
 * allow now; when the connection's own streams all wait for the client's
 * window, the stream that waits is let through and refused. */
static void unstash(struct worker *w, struct h2_conn *hc)
{
    while (hc->stash_len && !hc->failed && !hc->recv_dead) {
        const char *p = hc->c->slot + hc->stash_off;
        size_t m = admit(w, hc, p, hc->stash_len, false);
        if (m == 0 && h2_slots_stuck(hc))
            m = admit(w, hc, p, hc->stash_len, true);
        if (m == 0)
            return;
        hc->stash_off += (uint32_t)m;
        hc->stash_len -= (uint32_t)m;
        feed_now(w, hc, p, m);
    }
    hc->stash_off = hc->stash_len = 0;
}

/* ---- the connection -------------------------------------------------------------------- */

enum h2_entry h2_entry_check(struct worker *w, struct conn *c, const char *in, size_t n)
{
    if (!w->h2)
        return H2_ENTRY_NO;
    if (c->tp != &transport_plain)
        return tls_conn_alpn_h2(w, c) ? H2_ENTRY_YES : H2_ENTRY_NO;
    size_t k = n < PREFACE_LEN ? n : PREFACE_LEN;
    if (!mem_eq(in, preface, k))
        return H2_ENTRY_NO;
    return n < PREFACE_LEN ? H2_ENTRY_MORE : H2_ENTRY_YES;
}

static const struct conn_proto h2_proto;

/* The key of c's client (its address, IPv6 by /64: clients.h's rule) in
 * the worker's shared-slot counts; 0 for a peer without an address. */
static uint64_t client_key(struct worker *w, struct conn *c)
{
    struct net_addr a;
    if (c->peer.ss_family == AF_UNSPEC)
        sys_peer_addr(c->fd, &c->peer); /* io_uring's accept reports none */
    if (!client_addr_from(&c->peer, &a))
        return 0;
    bool v6 = false;
    for (int i = 0; i < 8; i++)
        v6 = v6 || a.b[i];
    if (v6)
        mem_zero(a.b + 8, 8);
    uint64_t k = siphash64(&w->h2->client_k, a.b, sizeof a.b);
    return k ? k : 1;
}

void h2_conn_start(struct worker *w, struct conn *c)
{
    struct h2_conn *hc = conn_record(w, c);
    c->proto = &h2_proto; /* from now on every event of c is HTTP/2's */
    *hc = (struct h2_conn){
        .w = w,
        .c = c,
        .glitch_tokens = (int64_t)H2_GLITCH_BURST * 1000,
        .glitch_ms = w->now_ms,
        .reset_budget = H2_RESET_BUDGET,
        .conn_grant = NGHTTP2_INITIAL_CONNECTION_WINDOW_SIZE, /* RFC 9113 §6.9.2 */
        .walk_left = PREFACE_LEN,                             /* admit() walks frames after it */
        .client_key = client_key(w, c),
    };
    c->h2 = hc;
    c->state = CONN_READ;
    c->duplex = true;
    stats_add(&w->stats->h2_conns, 1);
    /* Fails on a Unix socket (no TCP): nothing to bound there. */
    (void)sys_set_notsent_lowat(c->fd, H2_NOTSENT_LOWAT);
    h2_mem_init(w, hc);
    if (nghttp2_session_server_new3(&hc->session, w->h2->callbacks, hc, w->h2->option, &hc->mem) !=
        0) {
        hc->session = NULL;
        conn_close(w, c, CLOSE_ERROR);
        return;
    }
    /* SETTINGS_MAX_CONCURRENT_STREAMS: nghttp2 makes a HEADERS frame past
     * the limit a connection error once the client acknowledged it, where
     * RFC 9113 §5.1.2 asks for a stream error, and no callback or option
     * of 1.52 comes before that decision (on_begin_frame cannot skip a
     * frame). So nghttp2 is told "unlimited" (its default, which also
     * keeps no closed streams with RFC 7540 priorities off), the frame on
     * the wire says --h2-max-streams (tell_max_streams), and
     * on_begin_headers refuses a stream past it with REFUSED_STREAM while
     * nghttp2 still decodes its field block (HPACK stays in step, §4.3). */
    const nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, STREAMS_UNLIMITED},
        {NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, H2_HEADER_TABLE_SIZE},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, H2_HEADER_LIST_MAX},
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1},
    };
    if (nghttp2_submit_settings(hc->session, NGHTTP2_FLAG_NONE, iv, ARRAY_LEN(iv)) != 0)
        hc->failed = true;
    feed(w, hc, c->slot, c->in_len); /* the preface, and what came with it */
    c->in_len = 0;
    h2_pump(w, hc);
    settle(w, hc);
}

static char *h2_conn_input_room(struct worker *w, struct conn *c, size_t *room)
{
    if (c->state == CONN_CLOSING || c->h2->peer_ended || c->h2->stash_len) {
        *room = 0;
        return NULL;
    }
    /* Room while the output waits too (c->duplex): what the client says
     * meanwhile (a request, a reset, a window) decides what goes next. */
    *room = H2_RX_SIZE;
    return w->h2->rx; /* fed to nghttp2 at once (input_done): shared by the worker */
}

static void h2_conn_input_done(struct worker *w, struct conn *c, ssize_t n)
{
    struct h2_conn *hc = c->h2;
    if (c->state == CONN_CLOSING)
        return;
    if (n > 0) {
        feed(w, hc, w->h2->rx, (size_t)n);
        h2_pump(w, hc);
    } else if (n == 0) {
        /* The client's FIN (or close_notify): it sends nothing more but
         * may still read, so what is owed for the requests it completed
         * goes out first (settle closes after), as HTTP/1's answers owed
         * after a FIN do. Streams that wait for the client never end. */
        hc->peer_ended = true;
        c->duplex = false;
    } else if (n != -EAGAIN && n != -EINTR) {
        conn_close(w, c, n == -EOVERFLOW ? CLOSE_OVERFLOW : CLOSE_ERROR);
        return;
    }
    settle(w, hc);
}

static void h2_conn_sent(struct worker *w, struct conn *c, ssize_t n)
{
    struct h2_conn *hc = c->h2;
    if (c->state == CONN_CLOSING)
        return;
    if (h2_sent(w, hc, n)) /* false: the bytes wait for room, or c closed */
        settle(w, hc);
}

static void h2_conn_writable(struct worker *w, struct conn *c)
{
    struct h2_conn *hc = c->h2;
    if (c->state == CONN_CLOSING)
        return;
    hc->resume_on_write = false;
    h2_writable(w, hc);
    settle(w, hc);
}

static void h2_conn_on_timeout(struct worker *w, struct conn *c)
{
    struct h2_conn *hc = c->h2;
    if (c->state == CONN_CLOSING)
        return;
    enum close_reason why = w->draining ? CLOSE_SHUTDOWN : CLOSE_TIMEOUT;
    if (hc->timer_mode == H2_TIMER_WRITE) {
        conn_close(w, c, why); /* the peer does not read: nothing more to say */
        return;
    }
    /* Idle, or a client that left its streams unfinished: say so. */
    h2_goaway(w, hc, NGHTTP2_NO_ERROR);
    h2_pump(w, hc);
    if (c->state == CONN_CLOSING)
        return;
    if (hc->sending || hc->out_sent < hc->out_len) {
        /* The GOAWAY waits for the socket (an io_uring send in flight):
         * settle() ends the connection once it went, the send timeout if
         * it never does. */
        hc->timer_mode = H2_TIMER_WRITE;
        arm(w, c, w->set->timeout_send);
        return;
    }
    end(w, hc, why);
}

static void h2_conn_drain(struct worker *w, struct conn *c)
{
    struct h2_conn *hc = c->h2;
    if (c->state == CONN_CLOSING || hc->goaway)
        return;
    /* RFC 9113 §6.8: the streams up to the last one processed are finished;
     * nghttp2 refuses later ones, and want_read/want_write end with the
     * last stream. */
    hc->goaway = true;
    nghttp2_submit_goaway(hc->session, NGHTTP2_FLAG_NONE,
                          nghttp2_session_get_last_proc_stream_id(hc->session), NGHTTP2_NO_ERROR,
                          NULL, 0);
    h2_pump(w, hc);
    settle(w, hc);
}

static void h2_conn_free(struct worker *w, struct conn *c)
{
    struct h2_conn *hc = c->h2;
    if (hc->session) {
        h2_stream_free_all(w, hc);
        nghttp2_session_del(hc->session);
        hc->session = NULL;
    }
    c->h2 = NULL;
}

/* Nothing is logged at the close: each stream's line is written when it
 * goes (h2_conn_free, h2_stream.c), as every HTTP/2 answer is its own. */
static void h2_conn_closing(struct worker *w, struct conn *c)
{
    (void)w, (void)c;
}

/* A cut HTTP/2 answer is told by its missing END_STREAM, whatever the
 * transport says at the close. */
static bool h2_conn_owes(const struct conn *c)
{
    (void)c;
    return false;
}

static const struct conn_proto h2_proto = {
    .name = "HTTP/2",
    .start = h2_conn_start,
    .input_room = h2_conn_input_room,
    .input_done = h2_conn_input_done,
    .sent = h2_conn_sent,
    .writable = h2_conn_writable,
    .timeout = h2_conn_on_timeout,
    .drain = h2_conn_drain,
    .owes = h2_conn_owes,
    .closing = h2_conn_closing,
    .release = h2_conn_free,
};

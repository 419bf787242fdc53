/* SPDX-License-Identifier: MIT */
/*
 * h2_worker.c - what every HTTP/2 session of a worker shares: the tables
 * reserved at the worker's start (connection records, stream slots, the
 * client counts), the callbacks and options nghttp2 is given for each
 * session, and what those callbacks do with frames: the checks nghttp2
 * 1.52 leaves to its user (a stream id that goes back, a PRIORITY frame
 * on stream 0, a SETTINGS frame whose windows do not fit), the counts
 * (resets, GOAWAYs) and the limits (glitches, resets against completions,
 * each set here even where nghttp2's default agrees). h2_conn.c owns the
 * session itself: its input, deadlines and life.
 */
#include "http2/h2_conn.h"

#include "base/stats.h"
#include "base/worker.h"
#include "core/bytes.h"
#include "http2/h2_internal.h"
#include "sys/sys.h"

#include <errno.h>

/* nghttp2 1.52's own limits, set explicitly (docs/DESIGN.md §1, "HTTP/2"):
 * Rapid Reset (CVE-2023-44487): a burst of 1000 resets, then 33 a second,
 * beyond which nghttp2 sends GOAWAY; CONTINUATION flood (CVE-2024-28182):
 * at most 8 CONTINUATION frames after a HEADERS; SETTINGS (CVE-2019-9515):
 * 32 entries a frame; PING and SETTINGS ACKs waiting to be sent
 * (CVE-2019-9512): 1000, then the session ends with ERR_FLOODED. */
#define RESET_BURST       1000
#define RESET_RATE        33
#define MAX_CONTINUATIONS 8
#define MAX_SETTINGS      32
#define MAX_OUTBOUND_ACK  1000

/* ---- limits ---------------------------------------------------------------------------- */

/* Ends the session with GOAWAY(code) (once; after a drain's GOAWAY too). */
void h2_goaway(struct worker *w, struct h2_conn *hc, uint32_t code)
{
    (void)w;
    if (hc->terminated)
        return;
    hc->goaway = hc->terminated = true;
    nghttp2_session_terminate_session(hc->session, code);
}

bool h2_glitch(struct worker *w, struct h2_conn *hc)
{
    int64_t elapsed = w->now_ms - hc->glitch_ms;
    hc->glitch_ms = w->now_ms;
    hc->glitch_tokens += elapsed * H2_GLITCH_RATE; /* thousandths: RATE a second */
    if (hc->glitch_tokens > (int64_t)H2_GLITCH_BURST * 1000)
        hc->glitch_tokens = (int64_t)H2_GLITCH_BURST * 1000;
    hc->glitch_tokens -= 1000;
    stats_add(&w->stats->h2_glitches, 1);
    if (hc->glitch_tokens >= 0)
        return true;
    h2_goaway(w, hc, NGHTTP2_ENHANCE_YOUR_CALM);
    return false;
}

bool h2_reset_spent(struct worker *w, struct h2_conn *hc)
{
    if (--hc->reset_budget > 0)
        return true;
    h2_goaway(w, hc, NGHTTP2_ENHANCE_YOUR_CALM);
    return false;
}

/* ---- nghttp2's callbacks --------------------------------------------------------------- */

/* Frame types nghttp2 1.52 knows and serves (RFC 9113 §6, ALTSVC, ORIGIN,
 * PRIORITY_UPDATE): any other is ignored by it and counted here. */
static bool known_type(uint8_t type)
{
    return type <= NGHTTP2_CONTINUATION || type == NGHTTP2_ALTSVC || type == NGHTTP2_ORIGIN ||
           type == NGHTTP2_PRIORITY_UPDATE;
}

static int on_begin_frame(nghttp2_session *s, const nghttp2_frame_hd *hd, void *ud)
{
    struct h2_conn *hc = ud;
    if (hd->type == NGHTTP2_HEADERS && (hd->stream_id & 1)) {
        if (hd->stream_id > hc->max_stream_id) {
            hc->max_stream_id = hd->stream_id;
        } else if (!nghttp2_session_find_stream(s, hd->stream_id)) {
            /* A new stream's id must grow (RFC 9113 §5.1.1): a lower one
             * names a closed stream, a connection error. */
            h2_goaway(hc->w, hc, NGHTTP2_PROTOCOL_ERROR);
        }
    }
    if (hd->type == NGHTTP2_PRIORITY && hd->stream_id == 0)
        h2_goaway(hc->w, hc, NGHTTP2_PROTOCOL_ERROR); /* RFC 9113 §6.3; nghttp2 skips the frame */
    else if (hd->type == NGHTTP2_PRIORITY || !known_type(hd->type))
        h2_glitch(hc->w, hc); /* no work for anyone: RFC 7540 priorities are off */
    else if (hd->type == NGHTTP2_SETTINGS && !(hd->flags & NGHTTP2_FLAG_ACK) && hd->length)
        h2_stream_windows_before(hc); /* for on_frame_recv: RFC 9113 §6.9.2 */
    return 0;
}

/* Frames of unknown types: nghttp2 hands them over only when registered
 * (h2_worker_init), so that on_begin_frame counts them; they are dropped. */
static int unpack_extension(nghttp2_session *s, void **payload, const nghttp2_frame_hd *hd,
                            void *ud)
{
    (void)s, (void)payload, (void)hd, (void)ud;
    return NGHTTP2_ERR_CANCEL;
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    struct h2_conn *hc = ud;
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    if (hc->open++ >= hc->w->set->h2_max_streams) {
        /* Past the advertised limit: a stream error (RFC 9113 §5.1.2);
         * nghttp2 decodes the block on, without a stream to give it to. */
        nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, f->hd.stream_id, NGHTTP2_REFUSED_STREAM);
        h2_glitch(hc->w, hc);
    } else if (!hc->goaway) {
        h2_stream_begin(hc->w, hc, f->hd.stream_id);
    }
    return 0;
}

static bool sets_initial_window(const nghttp2_settings *f)
{
    for (size_t i = 0; i < f->niv; i++)
        if (f->iv[i].settings_id == NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE)
            return true;
    return false;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    struct h2_conn *hc = ud;
    switch (f->hd.type) {
    case NGHTTP2_HEADERS:
        h2_progress(hc); /* a request, or a request's trailers */
        if (f->headers.cat == NGHTTP2_HCAT_REQUEST)
            h2_stream_request(hc->w, hc, f->hd.stream_id);
        break;
    case NGHTTP2_DATA:
        /* An empty DATA frame that ends nothing (CVE-2019-9518). */
        if (f->hd.length == 0 && !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
            h2_glitch(hc->w, hc);
        else
            h2_progress(hc);
        break;
    case NGHTTP2_RST_STREAM: stats_add(&hc->w->stats->h2_resets_recv, 1); break;
    case NGHTTP2_WINDOW_UPDATE:
        h2_stream_window(hc, f->hd.stream_id, (uint32_t)f->window_update.window_size_increment);
        break;
    case NGHTTP2_SETTINGS:
        if (f->hd.flags & NGHTTP2_FLAG_ACK || !sets_initial_window(&f->settings))
            break;
        if (!h2_stream_windows_fit(hc, &f->settings)) {
            /* RFC 9113 §6.9.2: a connection error; nghttp2 only resets
             * the streams whose window it could not change. */
            h2_goaway(hc->w, hc, NGHTTP2_FLOW_CONTROL_ERROR);
            break;
        }
        h2_stream_window(hc, -1,
                         nghttp2_session_get_remote_settings(
                             s, NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE)); /* every stream's */
        break;
    default: break;
    }
    return 0;
}

/* A frame nghttp2 refused (a malformed request, a bad window update...):
 * it answers it itself; pith counts it. */
static int on_invalid_frame(nghttp2_session *s, const nghttp2_frame *f, int err, void *ud)
{
    (void)s, (void)f, (void)err;
    h2_glitch(((struct h2_conn *)ud)->w, ud);
    return 0;
}

static unsigned goaway_reason(uint32_t code)
{
    switch (code) {
    case NGHTTP2_NO_ERROR: return STATS_H2_GOAWAY_NO_ERROR;
    case NGHTTP2_PROTOCOL_ERROR: return STATS_H2_GOAWAY_PROTOCOL_ERROR;
    case NGHTTP2_ENHANCE_YOUR_CALM: return STATS_H2_GOAWAY_ENHANCE_YOUR_CALM;
    default: return STATS_H2_GOAWAY_OTHER;
    }
}

static int on_frame_send(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    (void)s;
    struct h2_conn *hc = ud;
    if (f->hd.type == NGHTTP2_DATA && f->hd.length > 0)
        h2_progress(hc); /* the client's window let a body move */
    else if (f->hd.type == NGHTTP2_RST_STREAM)
        stats_add(&hc->w->stats->h2_resets_sent, 1); /* MadeYouReset: on_close counts it */
    else if (f->hd.type == NGHTTP2_GOAWAY)
        stats_add(&hc->w->stats->h2_goaways[goaway_reason(f->goaway.error_code)], 1);
    return 0;
}

/* ---- the worker ------------------------------------------------------------------------ */

static uint32_t stream_reserve(const struct settings *set)
{
    return set->h2_max_streams < H2_STREAM_RESERVE ? set->h2_max_streams : H2_STREAM_RESERVE;
}

/* Every connection's reserve, and min(max_conns x (streams - reserve),
 * max(H2_STREAM_SHARED_MIN, H2_STREAM_SLOTS_MAX - the reserves)) shared:
 * h2_internal.h says why. */
static uint32_t stream_slots(const struct settings *set)
{
    uint64_t reserve = (uint64_t)set->max_conns * stream_reserve(set);
    uint64_t rest = (uint64_t)set->max_conns * (set->h2_max_streams - stream_reserve(set));
    uint64_t shared = reserve + H2_STREAM_SHARED_MIN < H2_STREAM_SLOTS_MAX
                          ? H2_STREAM_SLOTS_MAX - reserve
                          : H2_STREAM_SHARED_MIN;
    return (uint32_t)(reserve + (rest < shared ? rest : shared));
}

/* The client table's entries: a power of two, at least twice the
 * connections (each has one client). */
static uint32_t client_entries(const struct settings *set)
{
    uint32_t n = 16;
    while (n < 2 * (uint64_t)set->max_conns)
        n *= 2;
    return n;
}

size_t h2_worker_reservation(const struct settings *set)
{
    if (!set->http2)
        return 0;
    return (size_t)stream_slots(set) * POOL_SLOT_SIZE +
           (size_t)set->max_conns * (sizeof(struct h2_conn) + H2_FRAMEBUF_REGION) + H2_RX_SIZE +
           (size_t)client_entries(set) * sizeof(struct h2_client);
}

int h2_worker_init(struct worker *w)
{
    w->h2 = NULL;
    if (!w->set->http2)
        return 0;
    struct h2_worker *hw = sys_map(sizeof *hw);
    if (!hw)
        return -ENOMEM;
    hw->conns = sys_map((size_t)w->nconns * sizeof *hw->conns);
    hw->rx = sys_map(H2_RX_SIZE);
    hw->framebufs = sys_map((size_t)w->nconns * H2_FRAMEBUF_REGION);
    uint32_t slots = stream_slots(w->set), entries = client_entries(w->set);
    hw->clients = sys_map((size_t)entries * sizeof *hw->clients);
    if (!hw->conns || !hw->rx || !hw->framebufs || !hw->clients ||
        pool_init(&hw->streams, slots) < 0 || sys_random(&hw->client_k, sizeof hw->client_k) < 0 ||
        nghttp2_session_callbacks_new(&hw->callbacks) != 0 || nghttp2_option_new(&hw->option) != 0)
        return -ENOMEM;
    hw->reserve = stream_reserve(w->set);
    hw->reserved = w->nconns * hw->reserve;
    PITH_ASSERT(hw->reserved <= slots);
    hw->client_cap = (slots - hw->reserved) / 2 ? (slots - hw->reserved) / 2 : 1;
    hw->client_mask = entries - 1;
    nghttp2_session_callbacks *cb = hw->callbacks;
    nghttp2_session_callbacks_set_send_callback(cb, h2_send_cb);
    nghttp2_session_callbacks_set_on_begin_frame_callback(cb, on_begin_frame);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cb, on_invalid_frame);
    nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
    nghttp2_session_callbacks_set_unpack_extension_callback(cb, unpack_extension);
    h2_stream_callbacks(cb);
    nghttp2_option *o = hw->option;
    for (unsigned t = 0; t < 256; t++)
        if (!known_type((uint8_t)t))
            nghttp2_option_set_user_recv_extension_type(o, (uint8_t)t);
    nghttp2_option_set_stream_reset_rate_limit(o, RESET_BURST, RESET_RATE);
    nghttp2_option_set_max_continuations(o, MAX_CONTINUATIONS);
    nghttp2_option_set_max_settings(o, MAX_SETTINGS);
    nghttp2_option_set_max_outbound_ack(o, MAX_OUTBOUND_ACK);
    nghttp2_option_set_max_deflate_dynamic_table_size(o, H2_HEADER_TABLE_SIZE);
    w->h2 = hw;
    return 0;
}

void h2_worker_exit(struct worker *w)
{
    if (!w->h2)
        return;
    nghttp2_session_callbacks_del(w->h2->callbacks);
    nghttp2_option_del(w->h2->option);
}

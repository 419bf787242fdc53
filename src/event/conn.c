/* SPDX-License-Identifier: MIT */
/*
 * conn.c - see conn.h. The life every connection has whatever its protocol:
 * it is accepted (its client counted, its protocol started), it may close
 * lingering (our side shut, the client's last bytes discarded so our final
 * answer is not lost to a reset, RFC 9112 §9.6), it closes (counted for a
 * reason) and is freed once the backend lets go of its memory. Between,
 * every event goes to the protocol through its table (struct conn_proto);
 * only a lingering connection's events are this file's own.
 */
#include "event/conn.h"

#include "base/stats.h"
#include "base/worker.h"
#include "event/client.h"
#include "event/loop.h"
#include "event/transport.h"
#include "sys/sys.h"

#include <errno.h>

/* How long a closing connection may keep sending us bytes that we discard:
 * enough for the client to read our last response before our close could
 * turn into a reset that destroys it (RFC 9112 §9.6). */
#define LINGER_MS 2000

void conn_arm(struct worker *w, struct conn *c, unsigned seconds)
{
    timer_arm(&w->wheel, &c->timer, w->now_ms + (int64_t)seconds * 1000);
}

void conn_take_slot(struct worker *w, struct conn *c)
{
    if (!c->slot) {
        c->slot = pool_get(&w->pool);
        PITH_ASSERT(c->slot != NULL); /* the pool has a slot per connection */
        c->in_len = 0;
    }
}

void conn_release_slot(struct worker *w, struct conn *c)
{
    if (c->slot) {
        pool_put(&w->pool, c->slot);
        c->slot = NULL;
        c->x = NULL; /* it lived in the slot */
    }
}

/* ---- opening and closing -------------------------------------------------------------- */

void conn_accepted(struct worker *w, struct conn *c, const struct conn_proto *proto)
{
    c->state = CONN_READ;
    c->slot = NULL;
    c->in_len = 0;
    c->x = NULL;
    c->h2 = NULL;
    c->proxy_pending = w->set->proxy_protocol;
    c->proxy_missing = false;
    c->client_counted = c->client_limited = false;
    if (!c->proxy_pending)
        client_count(w, c); /* --max-conns-per-client */
    c->duplex = false;
    c->linger_why = CLOSE_DONE;
    timer_init(&c->timer);
    /* A new connection must deliver its first request within the header
     * timeout, counted from the accept. */
    c->head_started_ms = w->now_ms;
    c->proto = proto;
    proto->start(w, c);
}

void conn_close(struct worker *w, struct conn *c, enum close_reason why)
{
    if (c->state == CONN_CLOSING || c->state == CONN_FREE)
        return;
    /* A lingering close counts for what started it. */
    enum close_reason counted = c->state == CONN_LINGER ? c->linger_why : why;
    w->closes[counted]++;
    stats_add(&w->stats->closes[counted], 1);
    c->proto->closing(w, c);
    timer_cancel(&w->wheel, &c->timer);
    if (c->tp->ending && c->state != CONN_LINGER)
        c->tp->ending(w, c);
    c->state = CONN_CLOSING;
    /* What the protocol holds and the slot stay until the backend lets go
     * of them: an io_uring send in flight still reads them (conn_free). */
    w->loop->close(w, c);
    w->events->closed(w, c);
}

void conn_free(struct worker *w, struct conn *c)
{
    client_uncount(w, c);
    if (c->proto)
        c->proto->release(w, c);
    conn_release_slot(w, c);
    c->fd = -1;
    c->state = CONN_FREE;
}

void conn_linger(struct worker *w, struct conn *c, enum close_reason why)
{
    conn_release_slot(w, c);
    if (c->tp->ending)
        c->tp->ending(w, c);
    sys_shutdown_write(c->fd);
    c->state = CONN_LINGER;
    c->duplex = false; /* nothing more is sent */
    c->linger_why = why;
    timer_arm(&w->wheel, &c->timer, w->now_ms + LINGER_MS);
    c->tp->want_read(w, c);
}

void conn_on_timeout(struct worker *w, struct conn *c)
{
    if (c->tp->timeout && c->tp->timeout(w, c))
        return; /* a stream that was never set up: nothing to answer */
    if (c->state == CONN_LINGER)
        conn_close(w, c, c->linger_why);
    else
        c->proto->timeout(w, c);
}

void conn_drain(struct worker *w, struct conn *c)
{
    if (c->state != CONN_LINGER)
        c->proto->drain(w, c);
}

/* ---- the stream's bytes ---------------------------------------------------------------- */

char *conn_input_room(struct worker *w, struct conn *c, size_t *room)
{
    if (c->state == CONN_LINGER) {
        *room = 0; /* the loop drops what still comes */
        return NULL;
    }
    return c->proto->input_room(w, c, room);
}

void conn_input_done(struct worker *w, struct conn *c, ssize_t n)
{
    if (c->state != CONN_LINGER) {
        c->proto->input_done(w, c, n);
        return;
    }
    /* Whatever the client still sends after our last response is dropped
     * (by the backend); its end (or an error) ends the connection. */
    if (n > 0 || n == -EAGAIN || n == -EINTR)
        c->tp->want_read(w, c);
    else
        conn_close(w, c, c->linger_why);
}

void conn_sent(struct worker *w, struct conn *c, ssize_t n)
{
    if (c->state != CONN_LINGER)
        c->proto->sent(w, c, n);
}

void conn_writable(struct worker *w, struct conn *c)
{
    if (c->state != CONN_LINGER)
        c->proto->writable(w, c);
}

/* SPDX-License-Identifier: MIT */
/*
 * file.c - the response for a regular file: preconditions (RFC 9110 §13.2.2)
 * then Range (§14.2) then 200, 206 (one range or multipart/byteranges), 304,
 * 412 or 416. The file is described by a cache entry (filecache.h): its
 * constant head fields are queued as they are, and its bytes come from the
 * entry's memory (one gathered send) or its descriptor (sendfile). A cache
 * hit for a whole small file costs one sendmsg: no open, stat, read, close.
 */
#include "core/bytes.h"
#include "core/cond.h"
#include "core/multipart.h"
#include "core/range.h"
#include "core/respond.h"
#include "server/server.h"
#include "sys/sys.h"

/* The head's last line(s), constant strings so they can be queued as is. */
static struct span head_tail(struct worker *w, const struct conn *c)
{
    if (!c->keep_alive || w->draining)
        return SPAN_LIT("Connection: close\r\n\r\n");
    if (c->log_minor == 0)
        return SPAN_LIT("Connection: keep-alive\r\n\r\n");
    return SPAN_LIT("\r\n");
}

/* Queues out[0..b->len) then the tail; the head ends there. */
static void queue_head(struct worker *w, struct conn *c, struct buf *b)
{
    PITH_ASSERT(!b->full);
    struct span tail = head_tail(w, c);
    conn_push_out(c, b->len);
    conn_push(c, tail.p, tail.n);
    c->head_left = (uint32_t)(b->len + tail.n);
}

static void put_validators(struct buf *b, const struct fc_entry *e, const char *cache_control)
{
    if (e->has_lm)
        respond_field(b, "Last-Modified", span_make(e->lm_text, DATE_IMF_LEN));
    respond_field(b, "ETag", span_make(e->etag, e->etag_len));
    respond_field_cstr(b, "Cache-Control",
                       e->immutable ? "max-age=31536000, immutable" : cache_control);
}

/* The bytes [first, last] of the file: a piece of the entry's memory, or a
 * sendfile segment of fd. */
static void queue_bytes(struct conn *c, const struct fc_entry *e, int fd, uint64_t first,
                        uint64_t last)
{
    if (e->body) {
        conn_push(c, e->body + first, last - first + 1);
        return;
    }
    c->body = BODY_FILE;
    c->body_fd = fd;
    c->body_off = first;
    c->body_end = last + 1;
}

/* 200: the head from the entry as is, between Date/Server and the tail. */
static void full_response(struct worker *w, struct conn *c, const struct fc_entry *e, int fd)
{
    struct buf b = handler_head_begin(w, c, 200);
    if (c->entry) {
        /* The entry outlives the response (it holds a reference). */
        struct span tail = head_tail(w, c);
        conn_push_out(c, b.len);
        conn_push(c, e->head, e->head_len);
        conn_push(c, tail.p, tail.n);
        c->head_left = (uint32_t)(b.len + e->head_len + tail.n);
    } else {
        buf_put(&b, e->head, e->head_len); /* a scratch description: copy */
        queue_head(w, c, &b);
    }
    if (!c->head_only && e->st.size > 0)
        queue_bytes(c, e, fd, 0, e->st.size - 1);
}

static void not_modified(struct worker *w, struct conn *c, const struct fc_entry *e)
{
    struct buf b = handler_head_begin(w, c, 304);
    put_validators(&b, e, w->srv->cache_control);
    queue_head(w, c, &b);
}

static void single_range(struct worker *w, struct conn *c, const struct fc_entry *e, int fd,
                         const struct range *r)
{
    struct buf b = handler_head_begin(w, c, 206);
    respond_field(&b, "Content-Type", e->type);
    respond_field_u64(&b, "Content-Length", r->last - r->first + 1);
    buf_put_cstr(&b, "Content-Range: bytes ");
    buf_put_u64(&b, r->first);
    buf_put_char(&b, '-');
    buf_put_u64(&b, r->last);
    buf_put_char(&b, '/');
    buf_put_u64(&b, e->st.size);
    buf_put_cstr(&b, "\r\n");
    put_validators(&b, e, w->srv->cache_control);
    respond_field_cstr(&b, "Accept-Ranges", "bytes");
    queue_head(w, c, &b);
    queue_bytes(c, e, fd, r->first, r->last);
}

/* ---- multipart/byteranges ----------------------------------------------------------- */

/* A fresh boundary for each response: random bits from the worker's start
 * mixed with a counter (splitmix64), so no file can predict or contain it. */
static void new_boundary(struct worker *w, char *out)
{
    static const char hex[] = "0123456789abcdef";
    uint64_t x = w->boundary_seed[0] + 0x9e3779b97f4a7c15u * ++w->boundary_seed[1];
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    x ^= x >> 31;
    for (int i = 0; i < MULTIPART_BOUNDARY_LEN; i++) {
        uint64_t src = i < 16 ? x : w->boundary_seed[0] >> 4;
        out[i] = hex[(src >> (4 * (i % 16))) & 15];
    }
}

/* The parts' state lives in the slot's dir region (unused for files): the
 * ranges, then the boundary. */
static struct range *part_ranges(const struct conn *c)
{
    return (struct range *)(void *)conn_dir(c);
}

static struct multipart part_frame(const struct conn *c)
{
    const char *boundary = conn_dir(c) + RANGE_MAX * sizeof(struct range);
    return (struct multipart){span_make(boundary, MULTIPART_BOUNDARY_LEN), c->part_type,
                              c->part_size};
}

void handler_multipart_next(struct worker *w, struct conn *c)
{
    (void)w;
    struct buf b = buf_make(conn_out(c) + c->out_used, POOL_OUT_SIZE - c->out_used);
    const struct range *r = &part_ranges(c)[c->part];
    struct multipart mp = part_frame(c);
    if (c->part < c->nparts) {
        multipart_part_head(&b, &mp, r, c->part == 0);
        PITH_ASSERT(!b.full);
        conn_push_out(c, b.len);
        c->part++;
        c->body_off = c->body_end = 0;
        if (c->entry && c->entry->body) {
            conn_push(c, c->entry->body + r->first, r->last - r->first + 1);
        } else {
            c->body_off = r->first;
            c->body_end = r->last + 1;
        }
        return;
    }
    multipart_end(&b, &mp);
    PITH_ASSERT(!b.full);
    conn_push_out(c, b.len);
    c->body = BODY_NONE; /* the descriptor is released with the response */
}

static void multi_range(struct worker *w, struct conn *c, const struct fc_entry *e, int fd,
                        const struct range *r, unsigned n)
{
    struct range *saved = part_ranges(c);
    for (unsigned i = 0; i < n; i++)
        saved[i] = r[i];
    c->part_type = e->type;
    c->part_size = e->st.size;
    new_boundary(w, conn_dir(c) + RANGE_MAX * sizeof(struct range));
    struct multipart mp = part_frame(c);
    struct buf b = handler_head_begin(w, c, 206);
    buf_put_cstr(&b, "Content-Type: multipart/byteranges; boundary=");
    buf_put_span(&b, mp.boundary);
    buf_put_cstr(&b, "\r\n");
    respond_field_u64(&b, "Content-Length", multipart_length(&mp, saved, n));
    put_validators(&b, e, w->srv->cache_control);
    respond_field_cstr(&b, "Accept-Ranges", "bytes");
    respond_end_head(&b);
    /* The tail goes in the out region too, so the first part head can
     * follow it there. */
    struct span tail = head_tail(w, c);
    b.len -= 2;
    buf_put_span(&b, tail);
    PITH_ASSERT(!b.full);
    conn_push_out(c, b.len);
    c->head_left = (uint32_t)b.len;
    c->body = BODY_MULTIPART;
    c->body_fd = fd;
    c->part = 0;
    c->nparts = (uint8_t)n;
    handler_multipart_next(w, c);
}

/* 416 (RFC 9110 §15.5.17): the error page plus "Content-Range: bytes * /len". */
static void range_not_satisfiable(struct worker *w, struct conn *c, const struct fc_entry *e)
{
    char cr[32];
    struct buf v = buf_make(cr, sizeof cr);
    buf_put_cstr(&v, "bytes */");
    buf_put_u64(&v, e->st.size);
    handler_small(w, c, 416, "Content-Range", span_make(cr, v.len), false);
}

/* GET with a Range, after the preconditions passed (RFC 9110 §14.2). */
static void ranged_response(struct worker *w, struct conn *c, const struct fc_entry *e, int fd)
{
    const struct http_info *f = &w->info;
    if (f->if_range.p &&
        !cond_if_range(f->if_range, span_make(e->etag, e->etag_len), e->lm, e->has_lm)) {
        full_response(w, c, e, fd); /* the client's copy is stale: all of it */
        return;
    }
    struct range r[RANGE_MAX];
    int n = range_parse(f->range, e->st.size, r, RANGE_MAX);
    if (n == RANGE_UNSATISFIABLE)
        range_not_satisfiable(w, c, e);
    else if (n == 1)
        single_range(w, c, e, fd, &r[0]);
    else if (n > 1)
        multi_range(w, c, e, fd, r, (unsigned)n);
    else
        full_response(w, c, e, fd); /* ignored, or too many: the whole file */
}

void file_respond(struct worker *w, struct conn *c, struct fc_result *res, struct span name)
{
    struct fc_entry *e = res->entry;
    int fd;
    if (e) {
        c->entry = e; /* released when the response ends */
        fd = e->fd;
    } else {
        /* Not cached (no room): describe it in the worker's scratch entry,
         * whose fields are copied into the out region, never referenced. */
        e = &w->scratch_entry;
        filecache_describe(&w->cache.cfg, e, &res->st, name, w->now_sec);
        e->body = NULL;
        fd = res->fd;
        c->body_fd = fd;
        c->body_fd_owned = true; /* closed with the response */
    }
    struct cond_input in = {
        .info = &w->info,
        .get_or_head = true,
        .etag = span_make(e->etag, e->etag_len),
        .last_modified = e->lm,
        .has_last_modified = e->has_lm,
        .now = w->now_sec,
    };
    switch (cond_evaluate(&in)) {
    case COND_FAILED: handler_error(w, c, 412); return;
    case COND_NOT_MODIFIED: not_modified(w, c, e); return;
    case COND_PROCEED: break;
    }
    /* Range is for GET only: HEAD answers like a full GET (§14.2). */
    if (w->info.range.p && !c->head_only)
        ranged_response(w, c, e, fd);
    else
        full_response(w, c, e, fd);
}

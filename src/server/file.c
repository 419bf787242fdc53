/* SPDX-License-Identifier: MIT */
/*
 * file.c - the response for a regular file: preconditions (RFC 9110 §13.2.2)
 * then Range (§14.2) then 200, 206 (one range or multipart/byteranges), 304,
 * 412 or 416. The file is described by a cache entry (filecache.h) whose
 * fields go into the head as a block (kept in HTTP/1 form for a cached
 * file), and its bytes come from the entry's memory (one gathered send) or
 * its descriptor (sendfile). A cache hit for a whole small file costs one
 * sendmsg: no open, stat, read, close.
 */
#include "server/file.h"

#include "core/bytes.h"
#include "core/cond.h"
#include "core/multipart.h"
#include "core/range.h"
#include "core/respond.h"
#include "core/response.h"
#include "server/exchange.h"
#include "server/filecache.h"
#include "server/reply.h"
#include "server/worker.h"
#include "sys/sys.h"

/* Where the file's bytes are: the entry's memory or a descriptor. */
struct file_bytes {
    const char *mem; /* or NULL */
    int fd;
};

static void body_range(struct exchange *x, struct file_bytes fb, uint64_t first, uint64_t last)
{
    if (fb.mem)
        exchange_body_mem(x, fb.mem + first, last - first + 1);
    else
        exchange_body_file(x, fb.fd, first, last - first + 1);
}

static void add_validators(struct response *r, const struct fc_entry *e)
{
    if (e->has_lm)
        response_add(r, "Last-Modified", span_make(e->lm_text, DATE_IMF_LEN));
    response_add(r, "ETag", span_make(e->etag, e->etag_len));
    response_add(r, "Cache-Control", e->cache_control);
}

/* 200: the entry's field block as it is. */
static void full_response(struct worker *w, struct exchange *x, const struct fc_entry *e,
                          struct file_bytes fb)
{
    struct response r;
    response_init(&r, 200);
    r.block = &e->fields;
    response_set_length(&r, e->st.size);
    exchange_reply(w, x, &r);
    if (e->st.size > 0)
        body_range(x, fb, 0, e->st.size - 1);
}

static void not_modified(struct worker *w, struct exchange *x, const struct fc_entry *e)
{
    struct response r;
    response_init(&r, 304);
    add_validators(&r, e);
    exchange_reply(w, x, &r);
}

static void single_range(struct worker *w, struct exchange *x, const struct fc_entry *e,
                         struct file_bytes fb, const struct range *rg)
{
    char cr[80];
    struct buf v = buf_make(cr, sizeof cr);
    buf_put_cstr(&v, "bytes ");
    buf_put_u64(&v, rg->first);
    buf_put_char(&v, '-');
    buf_put_u64(&v, rg->last);
    buf_put_char(&v, '/');
    buf_put_u64(&v, e->st.size);
    PITH_ASSERT(!v.full);
    struct response r;
    response_init(&r, 206);
    response_add(&r, "Content-Type", e->type);
    response_add(&r, "Content-Range", span_make(cr, v.len));
    add_validators(&r, e);
    response_add(&r, "Accept-Ranges", SPAN_LIT("bytes"));
    response_set_length(&r, rg->last - rg->first + 1);
    exchange_reply(w, x, &r);
    body_range(x, fb, rg->first, rg->last);
}

/* ---- multipart/byteranges ----------------------------------------------------------- */

/* A multipart body's state, in the exchange's scratch memory. */
struct parts {
    struct range r[RANGE_MAX];
    unsigned n, next;
    char boundary[MULTIPART_BOUNDARY_LEN];
    struct span type; /* the representation's Content-Type (a constant) */
    uint64_t size;    /* the representation's length */
    struct file_bytes bytes;
};

static struct parts *parts_of(struct exchange *x)
{
    PITH_ASSERT(sizeof(struct parts) <= x->scratch_cap);
    return (struct parts *)(void *)x->scratch;
}

static struct multipart frame_of(const struct parts *p)
{
    return (struct multipart){span_make(p->boundary, MULTIPART_BOUNDARY_LEN), p->type, p->size};
}

/* One part per call: its head (in the out region), then its bytes; after
 * the last, the closing delimiter. */
static int parts_fill(struct worker *w, struct exchange *x)
{
    (void)w;
    struct parts *p = parts_of(x);
    struct multipart mp = frame_of(p);
    struct buf b = exchange_out_room(x);
    PITH_ASSERT(outq_room(&x->q) >= 2);
    if (p->next < p->n) {
        const struct range *r = &p->r[p->next];
        multipart_part_head(&b, &mp, r, p->next == 0);
        PITH_ASSERT(!b.full);
        exchange_out_commit(x, b.len);
        exchange_body_mem(x, b.p, b.len);
        body_range(x, p->bytes, r->first, r->last);
        p->next++;
        return BODY_MORE;
    }
    multipart_end(&b, &mp);
    PITH_ASSERT(!b.full);
    exchange_out_commit(x, b.len);
    exchange_body_mem(x, b.p, b.len);
    return BODY_DONE;
}

static const struct body_source parts_source = {.fill = parts_fill, .done = NULL};

/* A fresh boundary for each response, from the kernel's CSPRNG: no file
 * can predict it, so none can contain it (a counter mixed with a seed can
 * be inverted from one response and the next boundary written into a
 * file). Multipart responses are rare enough for one getrandom each. */
static void new_boundary(struct worker *w, char *out)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char r[MULTIPART_BOUNDARY_LEN / 2];
    if (sys_random(r, sizeof r) < 0) {
        /* Never on Linux 3.17+ with a seeded pool; keep the old mix. */
        uint64_t x = w->boundary_seed[0] + 0x9e3779b97f4a7c15u * ++w->boundary_seed[1];
        for (size_t i = 0; i < sizeof r; i++)
            r[i] = (unsigned char)(x >> (8 * (i % 8)));
    }
    for (size_t i = 0; i < sizeof r; i++) {
        out[2 * i] = hex[r[i] >> 4];
        out[2 * i + 1] = hex[r[i] & 15];
    }
}

static void multi_range(struct worker *w, struct exchange *x, const struct fc_entry *e,
                        struct file_bytes fb, const struct range *rg, unsigned n)
{
    struct parts *p = parts_of(x);
    for (unsigned i = 0; i < n; i++)
        p->r[i] = rg[i];
    p->n = n;
    p->next = 0;
    p->type = e->type;
    p->size = e->st.size;
    p->bytes = fb;
    new_boundary(w, p->boundary);
    struct multipart mp = frame_of(p);
    char ct[64 + MULTIPART_BOUNDARY_LEN];
    struct buf v = buf_make(ct, sizeof ct);
    buf_put_cstr(&v, "multipart/byteranges; boundary=");
    buf_put_span(&v, mp.boundary);
    PITH_ASSERT(!v.full);
    struct response r;
    response_init(&r, 206);
    response_add(&r, "Content-Type", span_make(ct, v.len));
    add_validators(&r, e);
    response_add(&r, "Accept-Ranges", SPAN_LIT("bytes"));
    response_set_length(&r, multipart_length(&mp, p->r, n));
    exchange_reply(w, x, &r);
    exchange_body_source(x, &parts_source);
}

/* 416 (RFC 9110 §15.5.17): the error page plus "Content-Range: bytes * /len". */
static void range_not_satisfiable(struct worker *w, struct exchange *x, const struct fc_entry *e)
{
    char cr[32];
    struct buf v = buf_make(cr, sizeof cr);
    buf_put_cstr(&v, "bytes */");
    buf_put_u64(&v, e->st.size);
    reply_small(w, x, 416, "Content-Range", span_make(cr, v.len), false);
}

/* GET with a Range, after the preconditions passed (RFC 9110 §14.2). */
static void ranged_response(struct worker *w, struct exchange *x, const struct fc_entry *e,
                            struct file_bytes fb)
{
    const struct http_info *f = &w->info;
    /* A Last-Modified clamped to the Date (a file dated in the future) is
     * not the file's time and validates nothing. */
    bool lm_real = e->has_lm && e->lm == e->st.mtime_sec;
    if (f->if_range.p &&
        !cond_if_range(f->if_range, span_make(e->etag, e->etag_len), e->lm, lm_real, w->now_sec)) {
        full_response(w, x, e, fb); /* the client's copy is stale: all of it */
        return;
    }
    struct range r[RANGE_MAX];
    int n = range_parse(f->range, e->st.size, r, RANGE_MAX);
    if (n == RANGE_UNSATISFIABLE)
        range_not_satisfiable(w, x, e);
    else if (n == 1)
        single_range(w, x, e, fb, &r[0]);
    else if (n > 1)
        multi_range(w, x, e, fb, r, (unsigned)n);
    else
        full_response(w, x, e, fb); /* ignored, or too many: the whole file */
}

static void respond(struct worker *w, struct exchange *x, struct fc_result *res, struct span name,
                    bool no_cache)
{
    struct fc_entry *e = res->entry;
    struct file_bytes fb;
    size_t base = name.n;
    while (base > 0 && name.p[base - 1] != '/')
        base--;
    x->site_name = span_make(name.p + base, name.n - base);
    if (e) {
        x->entry = e; /* released when the exchange ends */
        fb = (struct file_bytes){e->body, e->fd};
    } else {
        /* Not cached (no room): described in the worker's scratch entry,
         * whose fields are copied into the head, never referenced (it
         * keeps no HTTP/1 form). */
        e = &w->scratch_entry;
        filecache_describe(&w->cache.cfg, e, &res->st, name, w->now_sec);
        x->fd = res->fd; /* closed when the exchange ends */
        fb = (struct file_bytes){NULL, res->fd};
    }
    if (no_cache) {
        /* The same file and validators, with "no-cache" for Cache-Control:
         * described again in the scratch entry (its fields are copied). */
        struct fc_settings s = w->cache.cfg;
        s.cache_control = "no-cache";
        s.nimmutable = 0;
        struct sys_stat st = e->st;
        e = &w->scratch_entry;
        filecache_describe(&s, e, &st, name, w->now_sec);
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
    case COND_FAILED: reply_error(w, x, 412); return;
    case COND_NOT_MODIFIED: not_modified(w, x, e); return;
    case COND_PROCEED: break;
    }
    /* Range is for GET only: HEAD answers like a full GET (§14.2). */
    if (w->info.range.p && !x->head_only)
        ranged_response(w, x, e, fb);
    else
        full_response(w, x, e, fb);
}

void file_respond(struct worker *w, struct exchange *x, struct fc_result *res, struct span name)
{
    respond(w, x, res, name, false);
}

void file_respond_no_cache(struct worker *w, struct exchange *x, struct fc_result *res,
                           struct span name)
{
    respond(w, x, res, name, true);
}

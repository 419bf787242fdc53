/* SPDX-License-Identifier: MIT */
/*
 * file.c - the response for a regular file: preconditions (RFC 9110 §13.2.2)
 * then Range (§14.2) then 200, 206 (one range or multipart/byteranges), 304,
 * 412 or 416. The file is described by a cache entry (filecache.h) whose
 * fields go into the head as a block (kept in HTTP/1 form for a cached
 * file), and its bytes come from the entry's memory (one gathered send) or
 * its descriptor (sendfile). A cache hit for a whole small file costs one
 * sendmsg: no open, stat, read, close.
 *
 * A file with precompressed variants (filecache.h) is negotiated first
 * (Accept-Encoding, RFC 9110 §12.5.3): the chosen representation, F or
 * one variant, supplies the ETag the preconditions compare, the bytes Range
 * selects from, and the 200's field block; Content-Type and Last-Modified
 * stay F's, and every response about such a file says Vary.
 */
#include "http/file.h"

#include "base/worker.h"
#include "core/accept_encoding.h"
#include "core/bytes.h"
#include "core/cond.h"
#include "core/multipart.h"
#include "core/range.h"
#include "core/respond.h"
#include "core/response.h"
#include "http/exchange.h"
#include "http/filecache.h"
#include "http/reply.h"
#include "sys/sys.h"

/* Where the file's bytes are: the entry's memory or a descriptor. */
struct file_bytes {
    const char *mem; /* or NULL */
    int fd;
};

/* The representation being answered with: the file itself or a variant. */
struct rep {
    const struct fc_entry *e;         /* F: type, Last-Modified, Cache-Control */
    const struct field_block *fields; /* a 200's */
    struct span etag;
    uint64_t size;
    struct file_bytes bytes;
    struct span encoding; /* Content-Encoding, or empty for identity */
    bool vary;            /* F has variants: say Vary: Accept-Encoding */
};

static void body_range(struct exchange *x, struct file_bytes fb, uint64_t first, uint64_t last)
{
    if (fb.mem)
        exchange_body_mem(x, fb.mem + first, last - first + 1);
    else
        exchange_body_file(x, fb.fd, first, last - first + 1);
}

static void add_validators(struct response *r, const struct rep *p)
{
    const struct fc_entry *e = p->e;
    if (e->has_lm)
        response_add(r, FIELD(LAST_MODIFIED), span_make(e->lm_text, DATE_IMF_LEN));
    response_add(r, FIELD(ETAG), p->etag);
    response_add(r, FIELD(CACHE_CONTROL), e->cache_control);
    if (p->vary)
        response_add(r, FIELD(VARY), SPAN_LIT("Accept-Encoding"));
}

/* 200: the representation's field block as it is. */
static void full_response(struct worker *w, struct exchange *x, const struct rep *p)
{
    struct response r;
    response_init(&r, 200);
    r.block = p->fields;
    response_set_length(&r, p->size);
    exchange_reply(w, x, &r);
    x->encoding = p->encoding;
    if (p->size > 0)
        body_range(x, p->bytes, 0, p->size - 1);
}

/* 304 (RFC 9110 §15.4.5): the validators, Cache-Control and Vary a 200
 * would carry. */
static void not_modified(struct worker *w, struct exchange *x, const struct rep *p)
{
    struct response r;
    response_init(&r, 304);
    add_validators(&r, p);
    exchange_reply(w, x, &r);
}

static void single_range(struct worker *w, struct exchange *x, const struct rep *p,
                         const struct range *rg)
{
    const struct fc_entry *e = p->e;
    char cr[RANGE_CONTENT_RANGE_MAX];
    struct buf v = buf_make(cr, sizeof cr);
    range_content_range(&v, rg, p->size);
    PITH_ASSERT(!v.full);
    struct response r;
    response_init(&r, 206);
    response_add(&r, FIELD(CONTENT_TYPE), e->type);
    if (p->encoding.n)
        response_add(&r, FIELD(CONTENT_ENCODING), p->encoding);
    response_add(&r, FIELD(CONTENT_RANGE), span_make(cr, v.len));
    add_validators(&r, p);
    response_add(&r, FIELD(ACCEPT_RANGES), SPAN_LIT("bytes"));
    response_set_length(&r, rg->last - rg->first + 1);
    exchange_reply(w, x, &r);
    x->encoding = p->encoding;
    body_range(x, p->bytes, rg->first, rg->last);
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

static void multi_range(struct worker *w, struct exchange *x, const struct rep *rep,
                        const struct range *rg, unsigned n)
{
    const struct fc_entry *e = rep->e;
    struct parts *p = parts_of(x);
    for (unsigned i = 0; i < n; i++)
        p->r[i] = rg[i];
    p->n = n;
    p->next = 0;
    p->type = e->type;
    p->size = rep->size;
    p->bytes = rep->bytes;
    new_boundary(w, p->boundary);
    struct multipart mp = frame_of(p);
    char ct[64 + MULTIPART_BOUNDARY_LEN];
    struct buf v = buf_make(ct, sizeof ct);
    buf_put_cstr(&v, "multipart/byteranges; boundary=");
    buf_put_span(&v, mp.boundary);
    PITH_ASSERT(!v.full);
    struct response r;
    response_init(&r, 206);
    response_add(&r, FIELD(CONTENT_TYPE), span_make(ct, v.len));
    add_validators(&r, rep);
    response_add(&r, FIELD(ACCEPT_RANGES), SPAN_LIT("bytes"));
    response_set_length(&r, multipart_length(&mp, p->r, n));
    exchange_reply(w, x, &r);
    exchange_body_source(x, &parts_source);
}

/* 416 (RFC 9110 §15.5.17): the error page plus "Content-Range: bytes * /len". */
static void range_not_satisfiable(struct worker *w, struct exchange *x, const struct rep *p)
{
    char cr[RANGE_CONTENT_RANGE_MAX];
    struct buf v = buf_make(cr, sizeof cr);
    range_content_range(&v, NULL, p->size);
    if (p->vary)
        reply_small_vary(w, x, 416, FIELD(CONTENT_RANGE), span_make(cr, v.len));
    else
        reply_small(w, x, 416, FIELD(CONTENT_RANGE), span_make(cr, v.len), false);
}

/* GET with a Range, after the preconditions passed (RFC 9110 §14.2). */
static void ranged_response(struct worker *w, struct exchange *x, const struct rep *p)
{
    const struct http_info *f = x->info;
    const struct fc_entry *e = p->e;
    /* A Last-Modified clamped to the Date (a file dated in the future) is
     * not the file's time and validates nothing. */
    bool lm_real = e->has_lm && e->lm == e->st.mtime_sec;
    if (f->if_range.p && !cond_if_range(f->if_range, p->etag, e->lm, lm_real, w->now_sec)) {
        full_response(w, x, p); /* the client's copy is stale: all of it */
        return;
    }
    struct range r[RANGE_MAX];
    int n = range_parse(f->range, p->size, r, RANGE_MAX);
    if (n == RANGE_UNSATISFIABLE)
        range_not_satisfiable(w, x, p);
    else if (n == 1)
        single_range(w, x, p, &r[0]);
    else if (n > 1 && !p->encoding.n)
        multi_range(w, x, p, r, (unsigned)n);
    else
        /* Ignored, too many, or several of an encoded variant: a
         * multipart body's Content-Encoding would read as the coding of
         * the multipart itself, so the whole variant is sent (§14.2: a
         * server may ignore Range). */
        full_response(w, x, p);
}

/* The representation Accept-Encoding selects for entry e (whose bytes are
 * fb): F itself, or one of its variants; false for none (406). */
static bool select_rep(const struct exchange *x, const struct fc_entry *e, struct file_bytes fb,
                       struct rep *p)
{
    *p = (struct rep){e, &e->fields, span_make(e->etag, e->etag_len), e->st.size, fb, {0}, false};
    if (!FILECACHE_VARIANTS || !e->has_variants)
        return true; /* nothing to negotiate: no Vary, no 406 */
    p->vary = true;
    struct ae_offer o = {.identity_size = e->st.size};
    for (int c = 0; c < AE_CODINGS; c++) {
        o.have[c] = e->var[c].used;
        o.size[c] = e->var[c].st.size;
    }
    int c = accept_encoding_choose(&x->info->accept_encoding, &o);
    if (c == AE_NOT_ACCEPTABLE)
        return false;
    if (c == AE_IDENTITY)
        return true;
    const struct fc_variant *v = &e->var[c];
    p->fields = &v->fields;
    p->etag = span_make(v->etag, v->etag_len);
    p->size = v->st.size;
    p->bytes = (struct file_bytes){v->body, v->fd};
    p->encoding = ae_coding_name(c);
    return true;
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
        e = w->scratch_entry;
        filecache_describe(&exchange_site(w, x)->fc, e, &res->st, name, w->now_sec);
        x->fd = res->fd; /* closed when the exchange ends */
        fb = (struct file_bytes){NULL, res->fd};
    }
    if (no_cache) {
        /* The same file and validators, with "no-cache" for Cache-Control:
         * described again in the scratch entry (its fields are copied). */
        struct fc_root s = exchange_site(w, x)->fc;
        s.cache_control = "no-cache";
        s.nimmutable = 0;
        struct sys_stat st = e->st;
        e = w->scratch_entry;
        filecache_describe(&s, e, &st, name, w->now_sec);
    }
    struct rep p;
    if (!select_rep(x, e, fb, &p)) {
        /* 406 (§15.5.7): identity refused and no variant acceptable. */
        reply_small_vary(w, x, 406, NULL, (struct span){0});
        return;
    }
    struct cond_input in = {
        .info = x->info,
        .get_or_head = true,
        .etag = p.etag,
        .last_modified = e->lm,
        .has_last_modified = e->has_lm,
        .now = w->now_sec,
    };
    switch (cond_evaluate(&in)) {
    case COND_FAILED:
        if (p.vary)
            reply_small_vary(w, x, 412, NULL, (struct span){0});
        else
            reply_error(w, x, 412);
        return;
    case COND_NOT_MODIFIED: not_modified(w, x, &p); return;
    case COND_PROCEED: break;
    }
    /* Range is for GET only: HEAD answers like a full GET (§14.2). */
    if (x->info->range.p && !x->head_only)
        ranged_response(w, x, &p);
    else
        full_response(w, x, &p);
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

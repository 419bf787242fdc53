/* SPDX-License-Identifier: MIT */
/*
 * outq.c - see outq.h. A fixed array of segments, reset when it runs dry:
 * a response queues a handful of pieces at a time, so no ring is needed.
 */
#include "server/outq.h"

#include "core/core.h"

void outq_reset(struct outq *q)
{
    q->at = q->n = 0;
    q->chunked = false;
}

static struct seg *push(struct outq *q)
{
    PITH_ASSERT(q->n < OUTQ_SEGS);
    struct seg *s = &q->seg[q->n++];
    *s = (struct seg){.kind = SEG_MEM, .fd = -1};
    return s;
}

static void push_mem(struct outq *q, const char *p, size_t n, bool head)
{
    struct seg *s = push(q);
    s->p = p;
    s->len = n;
    s->head = head;
}

void outq_push_head(struct outq *q, const char *p, size_t n)
{
    if (n)
        push_mem(q, p, n, true);
}

/* The size line of a chunk of n bytes, stored under the segment's index. */
static void chunk_open(struct outq *q, uint64_t n)
{
    PITH_ASSERT(q->n + 3 <= OUTQ_SEGS);
    char *line = q->chunk_head[q->n];
    push_mem(q, line, h1_chunk_head(n, line), false);
}

static void chunk_close(struct outq *q)
{
    push_mem(q, H1_CHUNK_TAIL, sizeof H1_CHUNK_TAIL - 1, false);
}

void outq_push_mem(struct outq *q, const char *p, size_t n)
{
    if (!n)
        return; /* an empty chunk would end the body */
    if (q->chunked)
        chunk_open(q, n);
    push_mem(q, p, n, false);
    if (q->chunked)
        chunk_close(q);
}

void outq_push_file(struct outq *q, int fd, uint64_t off, uint64_t len)
{
    if (!len)
        return;
    if (q->chunked)
        chunk_open(q, len);
    struct seg *s = push(q);
    s->kind = SEG_FILE;
    s->fd = fd;
    s->off = off;
    s->len = len;
    if (q->chunked)
        chunk_close(q);
}

void outq_end_body(struct outq *q)
{
    if (q->chunked)
        push_mem(q, H1_LAST_CHUNK, sizeof H1_LAST_CHUNK - 1, false);
}

unsigned outq_gather(const struct outq *q, struct iovec *iov, unsigned max, bool *file_next)
{
    unsigned k = 0, i = q->at;
    for (; i < q->n && k < max && q->seg[i].kind == SEG_MEM; i++)
        iov[k++] = (struct iovec){(void *)q->seg[i].p, (size_t)q->seg[i].len};
    *file_next = i < q->n && q->seg[i].kind == SEG_FILE;
    return k;
}

void outq_consume(struct outq *q, uint64_t n, uint64_t *head, uint64_t *body)
{
    while (n && q->at < q->n) {
        struct seg *s = &q->seg[q->at];
        uint64_t k = n < s->len ? n : s->len;
        if (s->kind == SEG_MEM)
            s->p += k;
        else
            s->off += k;
        s->len -= k;
        *(s->head ? head : body) += k;
        n -= k;
        if (s->len == 0)
            q->at++;
    }
    PITH_ASSERT(n == 0);
    if (q->at == q->n)
        q->at = q->n = 0;
}

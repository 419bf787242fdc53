/* SPDX-License-Identifier: MIT */
/*
 * outq.c - see outq.h. A fixed array of segments, reset when it runs dry:
 * a response queues a handful of pieces at a time, so no ring is needed.
 */
#include "http/outq.h"

#include "core/core.h"

void outq_reset(struct outq *q)
{
    q->at = q->n = 0;
    q->chunked = false;
    q->left = q->head_left = 0;
}

static struct seg *push(struct outq *q, enum seg_kind kind, uint64_t len, bool head)
{
    PITH_ASSERT(q->n < OUTQ_SEGS);
    struct seg *s = &q->seg[q->n++];
    s->kind = kind;
    s->head = head;
    s->len = len;
    q->left += len;
    if (head)
        q->head_left += len;
    return s;
}

static void push_mem(struct outq *q, const char *p, size_t n, bool head)
{
    push(q, SEG_MEM, n, head)->p = p;
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
    struct seg *s = push(q, SEG_FILE, len, false);
    s->fd = fd;
    s->off = off;
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
    PITH_ASSERT(n <= q->left);
    if (n == q->left) {
        /* All of it went (the usual case): no walk over the segments. */
        *head += q->head_left;
        *body += n - q->head_left;
        q->at = q->n = 0;
        q->left = q->head_left = 0;
        return;
    }
    q->left -= n;
    while (n && q->at < q->n) {
        struct seg *s = &q->seg[q->at];
        uint64_t k = n < s->len ? n : s->len;
        if (s->kind == SEG_MEM)
            s->p += k;
        else
            s->off += k;
        s->len -= k;
        if (s->head) {
            *head += k;
            q->head_left -= k;
        } else {
            *body += k;
        }
        n -= k;
        if (s->len == 0)
            q->at++;
    }
    PITH_ASSERT(n == 0 && q->at < q->n);
}

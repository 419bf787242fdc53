/* SPDX-License-Identifier: MIT */
/*
 * h2_none.h - h2_conn.h for pith-tiny, which has no nghttp2: config.c
 * refuses --http2 and --h2-max-streams there, HTTP/1 never hands a
 * connection over (H2_BUILT is false, so c->h2_possible stays false) and
 * the calls below are never reached.
 */
#ifndef PITH_H2_NONE_H
#define PITH_H2_NONE_H

#define H2_BUILT false

static inline size_t h2_worker_reservation(const struct settings *set)
{
    (void)set;
    return 0;
}
static inline int h2_worker_init(struct worker *w)
{
    (void)w;
    return 0;
}
static inline void h2_worker_exit(struct worker *w)
{
    (void)w;
}
static inline enum h2_entry h2_entry_check(struct worker *w, struct conn *c, const char *in,
                                           size_t n)
{
    (void)w, (void)c, (void)in, (void)n;
    return H2_ENTRY_NO;
}
static inline void h2_conn_start(struct worker *w, struct conn *c)
{
    (void)w, (void)c;
}
#endif

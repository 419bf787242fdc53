/* SPDX-License-Identifier: MIT */
/*
 * h3_none.h - h3.h for builds without HTTP/3: pith-tiny and the router
 * profile (no libraries at all), and the full build where pkg-config did not
 * find ngtcp2 >= 1.11, its GnuTLS helper and nghttp3 >= 1.8. config.c
 * refuses --http3 on (exit 2, naming the packages), so HTTP/3 is never on
 * and none of these is reached with work to do.
 */
#ifndef PITH_H3_NONE_H
#define PITH_H3_NONE_H
#define H3_BUILT false

static inline int h3_prepare(struct server *srv)
{
    (void)srv;
    return 0;
}
static inline const char *h3_describe(const struct server *srv)
{
    (void)srv;
    return "; no HTTP/3: built without ngtcp2 and nghttp3";
}
static inline const char *h3_versions(void)
{
    return "";
}
static inline bool h3_udp_port_free(const struct sockaddr_storage *addr, socklen_t len)
{
    (void)addr;
    (void)len;
    return true;
}
static inline size_t h3_worker_reservation(const struct settings *set)
{
    (void)set;
    return 0;
}
static inline int h3_worker_init(struct worker *w)
{
    (void)w;
    return 0;
}
static inline void h3_worker_exit(struct worker *w)
{
    (void)w;
}
static inline void h3_readable(struct worker *w)
{
    (void)w;
}
static inline void h3_datagram(struct worker *w, const struct msghdr *m, uint8_t *p, size_t n)
{
    (void)w, (void)m, (void)p, (void)n;
}
static inline int h3_timeout(const struct worker *w, int t)
{
    (void)w;
    return t;
}
static inline void h3_expire(struct worker *w)
{
    (void)w;
}
static inline void h3_drain(struct worker *w)
{
    (void)w;
}
static inline unsigned h3_active(const struct worker *w)
{
    (void)w;
    return 0;
}
static inline void h3_worker_reload(struct worker *w)
{
    (void)w;
}
static inline void h3_worker_report(const struct worker *w)
{
    (void)w;
}
#endif

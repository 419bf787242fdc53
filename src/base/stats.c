/* SPDX-License-Identifier: MIT */
/*
 * stats.c - see stats.h. The per-request update is a handful of relaxed
 * stores into the worker's own cache lines; nothing here locks, allocates
 * or makes a system call after stats_create().
 */
#include "base/stats.h"

#include "core/bytes.h"
#include "sys/sys.h"

#define STATS_NAME(name, text) text,
static const char *const client_names[] = {STATS_CLIENT_LIST(STATS_NAME)};
static const char *const auth_names[] = {STATS_AUTH_LIST(STATS_NAME)};
static const char *const h2_goaway_names[] = {STATS_H2_GOAWAY_LIST(STATS_NAME)};
#undef STATS_NAME

const char *stats_h2_goaway_name(enum stats_h2_goaway e)
{
    return (unsigned)e < STATS_H2_GOAWAY_REASONS ? h2_goaway_names[e] : "?";
}

const char *stats_auth_name(enum stats_auth e)
{
    return (unsigned)e < STATS_AUTH_RESULTS ? auth_names[e] : "?";
}

const char *stats_client_name(enum stats_client e)
{
    return (unsigned)e < STATS_CLIENT_EVENTS ? client_names[e] : "?";
}

struct stats_shared *stats_create(int64_t now_sec)
{
    struct stats_shared *s = sys_map_shared(sizeof *s);
    if (s)
        s->start_time = now_sec;
    return s;
}

static unsigned method_index(struct span m)
{
    if (m.n == 3 && mem_eq(m.p, "GET", 3))
        return 0;
    if (m.n == 4 && mem_eq(m.p, "HEAD", 4))
        return 1;
    if (m.n == 7 && mem_eq(m.p, "OPTIONS", 7))
        return 2;
    return 3; /* anything else, and no request line at all */
}

void stats_request(struct stats_worker *s, int status, struct span method, uint64_t bytes)
{
    unsigned cls = (unsigned)status / 100u - 1u;
    if (cls >= STATS_CLASSES)
        cls = STATS_CLASSES - 1;
    stats_add(&s->requests[cls][method_index(method)], 1);
    stats_add(&s->sent_bytes, bytes);
}

#define CLOSE_NAME(name, text) text,
static const char *const close_names[] = {CLOSE_REASON_LIST(CLOSE_NAME)};
static const char *const h3_close_names[] = {H3_CLOSE_LIST(CLOSE_NAME)};
#undef CLOSE_NAME

const char *close_reason_name(enum close_reason r)
{
    return (unsigned)r < CLOSE_REASONS ? close_names[r] : "?";
}

const char *h3_close_name(enum h3_close r)
{
    return (unsigned)r < H3_CLOSE_REASONS ? h3_close_names[r] : "?";
}

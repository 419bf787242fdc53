/* SPDX-License-Identifier: MIT */
/*
 * stats_cost.c - what the --status counters cost a request: the real
 * stats_request() (src/base/stats.c, linked from the full build's
 * objects) called in a loop on a worker whose block lies in the real
 * MAP_SHARED region, with the status class and method varying as in
 * traffic, against the same loop without the call. Prints nanoseconds per
 * request. Usage: stats_cost [ITERATIONS]
 */
#include "base/stats.h"
#include "base/worker.h"
#include "http/filecache.h"
#include "sys/sys.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Keeps the compiler from dropping the baseline loop. */
static volatile uint64_t sink;

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 50000000;
    static struct server srv;
    static struct worker w;
    static struct filecache cache;
    w.cache = &cache;
    srv.stats = stats_create(0);
    w.srv = &srv;
    w.stats = &srv.stats->w[0];
    static const int statuses[4] = {200, 304, 404, 206};
    static const struct span methods[4] = {SPAN_LIT("GET"), SPAN_LIT("HEAD"), SPAN_LIT("GET"),
                                           SPAN_LIT("OPTIONS")};
    double best_with = 1e30, best_without = 1e30;
    for (int round = 0; round < 5; round++) {
        double t0 = now_ns();
        for (long i = 0; i < n; i++) {
            w.cache->hits += 1; /* as a cache hit would */
            stats_request(w.stats, statuses[i & 3], methods[(i >> 2) & 3], 512 + (uint64_t)(i & 7));
            stats_cache(w.stats, w.stats_base_hits, w.cache->hits, w.stats_base_misses,
                        w.cache->misses);
        }
        double t1 = now_ns();
        for (long i = 0; i < n; i++) {
            w.cache->hits += 1;
            sink += (uint64_t)statuses[i & 3] + methods[(i >> 2) & 3].n;
        }
        double t2 = now_ns();
        best_with = (t1 - t0) / n < best_with ? (t1 - t0) / n : best_with;
        best_without = (t2 - t1) / n < best_without ? (t2 - t1) / n : best_without;
    }
    printf("stats_request: %.2f ns per request (loop alone %.2f ns; best of 5 x %ld)\n",
           best_with - best_without, best_without, n);
    return srv.stats->w[0].requests[1][0] > 0 ? 0 : 1;
}

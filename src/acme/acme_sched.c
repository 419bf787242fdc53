/* SPDX-License-Identifier: MIT */
/*
 * acme_sched.c - when the ACME process acts on a name. Renewal: where the
 * CA offers ARI (RFC 9773) a random moment in the window it suggests,
 * else two thirds into the certificate's lifetime (Let's Encrypt's and
 * certbot's default: 30 days before the end of 90). Failures: exponential
 * backoff from a minute, doubling to a day, with jitter (a fleet of pith
 * instances that failed together must not retry together), never before
 * the CA's Retry-After; a rate limit (429, urn:...:rateLimited) waits an
 * hour at least when the CA names no time. PITH_ACME_BACKOFF_S shortens the
 * first step for tests.
 */
#include "acme/acme_internal.h"

#include <stdlib.h>
#include <sys/random.h>

#define BACKOFF_FIRST_S 60
#define BACKOFF_MAX_S   86400
#define RATE_LIMIT_S    3600

int64_t acme_renew_at(int64_t nb, int64_t na)
{
    return nb + (na - nb) * 2 / 3;
}

int64_t acme_pick(int64_t start, int64_t end)
{
    uint64_t r = 0;
    if (end <= start || getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
        return start;
    return start + (int64_t)(r % (uint64_t)(end - start + 1));
}

int64_t acme_backoff(struct acme_when *w, int64_t now, long retry_after, bool rate_limited)
{
    const char *env = getenv("PITH_ACME_BACKOFF_S");
    int64_t first = env ? atoi(env) : BACKOFF_FIRST_S;
    if (first < 1)
        first = 1;
    int64_t d = first;
    for (unsigned i = 0; i < w->failures && d < BACKOFF_MAX_S; i++)
        d *= 2;
    if (d > BACKOFF_MAX_S)
        d = BACKOFF_MAX_S;
    w->failures++;
    /* Jitter: somewhere in [d, 1.5 d), so instances spread out. */
    d = acme_pick(d, d + d / 2);
    if (rate_limited && retry_after < 0 && d < RATE_LIMIT_S && !env)
        d = RATE_LIMIT_S;
    if (retry_after > d)
        d = retry_after;
    w->next = now + d;
    return w->next;
}

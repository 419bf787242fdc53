/* SPDX-License-Identifier: MIT */
/*
 * acme_none.h - acme.h for pith-tiny and the router profile, which leave
 * ACME out (config.c refuses --acme): srv->acme is always NULL, so these
 * are never reached, and the compiler drops them.
 */
#ifndef PITH_ACME_NONE_H
#define PITH_ACME_NONE_H

#define ACME_BUILT false

static inline int acme_prepare(struct server *srv)
{
    (void)srv;
    return 0;
}

static inline void acme_start_lines(const struct server *srv)
{
    (void)srv;
}

static inline int acme_check(const struct settings *set, char *plan, size_t cap)
{
    (void)set, (void)plan, (void)cap;
    return 0;
}

static inline int acme_run(struct server *srv)
{
    (void)srv;
    return 1;
}

static inline int acme_shared_readonly(struct acme_shared *sh)
{
    (void)sh;
    return 0;
}

#define ACME_KEYAUTH_CAP 1
static inline int acme_http01(const struct acme_shared *sh, struct span path, char *keyauth,
                              size_t cap)
{
    (void)sh, (void)path, (void)keyauth, (void)cap;
    return -1;
}

#endif

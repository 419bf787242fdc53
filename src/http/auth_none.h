/* SPDX-License-Identifier: MIT */
/*
 * auth_none.h - auth.h for pith-tiny, which has no libxcrypt: config.c
 * refuses `auth`, so no site has a rule and these are never more than
 * no-ops the compiler drops.
 */
#ifndef PITH_AUTH_NONE_H
#define PITH_AUTH_NONE_H

#define AUTH_BUILT false

static inline int auth_load(struct server *srv)
{
    (void)srv;
    return 0;
}

static inline bool auth_allow(struct worker *w, struct exchange *x, const struct http_request *req,
                              const char *path)
{
    (void)w, (void)x, (void)req, (void)path;
    return true;
}

#endif

/* SPDX-License-Identifier: MIT */
/*
 * sites.c - see sites.h. The lookup is core's (vhost.h): a binary search in
 * the sorted name table, on a key the size of a host name.
 */
#include "http/sites.h"

#include "core/vhost.h"
#include "tls/tls.h"

const struct vsite *sites_pick(const struct server *srv, struct span authority, bool *named)
{
    char key[VHOST_NAME_MAX + 2];
    *named = false;
    if (srv->set.hosts.n == 0 || authority.n == 0)
        return &srv->sites[0];
    long n = vhost_host_key(authority, key, sizeof key);
    int site = n > 0 ? vhost_lookup(&srv->set.hosts, span_make(key, (size_t)n)) : -1;
    if (site < 0 || (unsigned)site >= srv->set.nsites)
        return &srv->sites[0];
    *named = true;
    return &srv->sites[site];
}

size_t sites_host_text(struct span authority, char *out, size_t cap)
{
    long n = authority.n ? vhost_host_key(authority, out, cap) : -1;
    return n > 0 ? (size_t)n : 0;
}

enum sites_verdict sites_route(const struct server *srv, int tls_ctx, struct span authority,
                               const struct vsite **site)
{
    bool named;
    *site = sites_pick(srv, authority, &named);
    if (!named || tls_ctx < 0 || !srv->tls)
        return SITES_SERVE;
    const struct site_conf *sc = (*site)->conf;
    int choice = (int)sc->tls_first;
    if (sc->ntls > 1) { /* several certificates: the one SNI gives this name */
        char key[VHOST_NAME_MAX + 3];
        long n = vhost_host_key(authority, key, sizeof key - 1);
        key[n > 0 ? n : 0] = '\0';
        choice = tls_choose_ctx(srv->tls, (*site)->index, key);
    }
    return choice == tls_ctx ? SITES_SERVE : SITES_MISDIRECTED;
}

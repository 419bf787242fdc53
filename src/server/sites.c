/* SPDX-License-Identifier: MIT */
/*
 * sites.c - see sites.h. The lookup is core's (vhost.h): a binary search in
 * the sorted name table, on a key the size of a host name.
 */
#include "server/sites.h"

#include "core/vhost.h"

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

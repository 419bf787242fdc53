/* SPDX-License-Identifier: MIT */
/*
 * sockets.c - inherited and Unix listeners (see sockets.h).
 *
 * Inherited sockets (sd_listen_fds(3)) are told apart by their names
 * (LISTEN_FDNAMES, FileDescriptorName= in a socket unit): "https" is the
 * TLS listener, any other name (or none: systemd then passes the unit's
 * name) is plain HTTP. They take precedence over --addr and --port. The
 * workers share them: with k HTTP sockets, worker i accepts on socket
 * i % k. Only when there is one SO_REUSEPORT TCP socket per worker (what
 * an upgrade of a plain `pith --port` passes on) does each worker keep a
 * socket of its own, which the master may then close and reopen as for
 * sockets it bound itself.
 */
#include "cli/sockets.h"

#include "sys/sd.h"
#include "sys/sys.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

const char *sockets_unix_path(const char *addr)
{
    return addr && strncmp(addr, "unix:", 5) == 0 ? addr + 5 : NULL;
}

/* "http://unix:/run/pith.sock:/" is nginx's proxy_pass spelling for a Unix
 * socket, so the start line shows what to paste into the proxy. */
static void url_of_scheme(int fd, const char *scheme, char *out, size_t cap)
{
    struct sockaddr_storage a;
    socklen_t len;
    char host[64];
    if (sys_local_addr(fd, &a, &len) < 0) {
        snprintf(out, cap, "http://(unknown)/");
    } else if (a.ss_family == AF_UNIX) {
        const struct sockaddr_un *un = (const struct sockaddr_un *)&a;
        if (len > sizeof(sa_family_t) && un->sun_path[0])
            snprintf(out, cap, "%s://unix:%.*s:/", scheme, (int)(len - sizeof(sa_family_t)),
                     un->sun_path);
        else
            snprintf(out, cap, "%s://unix:@(abstract):/", scheme);
    } else {
        sys_addr_text(&a, host, sizeof host);
        snprintf(out, cap, "%s://%s:%d/", scheme, host, sys_local_port(fd));
    }
}

static void url_of(int fd, char *out, size_t cap)
{
    url_of_scheme(fd, "http", out, cap);
}

/* Per worker or shared (see the file comment), into fds[] for every
 * worker; the address into *addr for the master's fresh listeners. Shared
 * sockets of either kind make all of them shared (never closed or reopened
 * per worker). */
static void assign(struct server *s, const int *got, unsigned k, int *fds,
                   struct sockaddr_storage *addr, socklen_t *len)
{
    bool own = k == s->set.workers && k > 1;
    for (unsigned i = 0; i < k && own; i++)
        own = sys_is_reuseport(got[i]) == 1;
    s->listen_shared = s->listen_shared || !own;
    sys_local_addr(got[0], addr, len);
    for (unsigned i = 0; i < s->set.workers; i++)
        fds[i] = got[i % k];
}

/* An inherited Unix socket at the very path --addr names is the one an
 * older master of this configuration bound (an upgrade): it is ours to
 * remove at a stop, as if we had bound it. One systemd made is not. */
static void claim_unix_path(const struct config *cfg, struct server *s, int fd)
{
    const char *path = sockets_unix_path(cfg->addr);
    struct sockaddr_storage a;
    socklen_t len;
    if (!path || strlen(path) >= sizeof s->unix_path || sys_local_addr(fd, &a, &len) < 0 ||
        a.ss_family != AF_UNIX)
        return;
    if (strcmp(((const struct sockaddr_un *)&a)->sun_path, path) == 0 && s->upgrade_from)
        strcpy(s->unix_path, path);
}

static int take_inherited(const struct config *cfg, struct server *s, const struct sd_listener *got,
                          unsigned n)
{
    int http[SD_LISTEN_MAX], https[SD_LISTEN_MAX];
    unsigned k = 0, kt = 0;
    for (unsigned i = 0; i < n; i++) {
        if (strcmp(got[i].name, "status") == 0)
            s->status_fd = got[i].fd; /* prepare_status() takes it */
        else if (strcmp(got[i].name, "https") == 0)
            https[kt++] = got[i].fd;
        else
            http[k++] = got[i].fd;
    }
    /* Never plain HTTP on a socket meant for HTTPS. */
    if (kt && !s->set.ntls) {
        fprintf(stderr, "pith: an inherited socket is named \"https\" (LISTEN_FDNAMES), but no "
                        "--tls-cert is given; name it \"http\" to serve plain HTTP on it\n");
        return 1;
    }
    if (k == 0 && kt == 0) {
        fprintf(stderr, "pith: no inherited socket is for HTTP\n");
        return 1;
    }
    if (k > s->set.workers || kt > s->set.workers) {
        unsigned most = k > kt ? k : kt;
        fprintf(stderr,
                "pith: %u inherited %s sockets need at least as many workers "
                "(--workers %u)\n",
                most, k > kt ? "HTTP" : "HTTPS", most);
        return 2;
    }
    s->listen_inherited = true;
    s->nlisten = s->set.workers;
    if (k) {
        assign(s, http, k, s->listen_fds, &s->listen_addr, &s->listen_len);
        url_of(http[0], s->url, sizeof s->url);
        claim_unix_path(cfg, s, http[0]);
    }
    if (kt) {
        assign(s, https, kt, s->tls_listen_fds, &s->tls_listen_addr, &s->tls_listen_len);
        url_of_scheme(https[0], "https", s->tls_url, sizeof s->tls_url);
        int port = sys_local_port(https[0]);
        s->tls_port = port > 0 ? (unsigned)port : 0;
    }
    return 0;
}

static int open_unix(const struct config *cfg, struct server *s, const char *path)
{
    unsigned uid = 0, gid = 0;
    int r;
    if (cfg->unix_owner && (r = sys_owner_ids(cfg->unix_owner, &uid, &gid)) < 0) {
        fprintf(stderr, "pith: --unix-owner: no such user or group: '%s'\n", cfg->unix_owner);
        return 1;
    }
    if (strlen(path) >= sizeof s->unix_path) {
        fprintf(stderr, "pith: --addr: the socket path is longer than %zu bytes\n",
                sizeof s->unix_path - 1);
        return 2;
    }
    int fd = sys_listen_unix(path, 4096, cfg->unix_mode, cfg->unix_owner ? (int)uid : -1,
                             cfg->unix_owner ? (int)gid : -1);
    if (fd == -EADDRINUSE) {
        fprintf(stderr, "pith: unix:%s is in use: a server answers on it\n", path);
        return 1;
    }
    if (fd == -EEXIST) {
        fprintf(stderr, "pith: unix:%s exists and is not a socket; not replaced\n", path);
        return 1;
    }
    if (fd < 0) {
        fprintf(stderr, "pith: cannot listen on unix:%s: %s\n", path, strerrordesc_np(-fd));
        return 1;
    }
    strcpy(s->unix_path, path);
    s->listen_shared = true;
    for (unsigned i = 0; i < s->set.workers; i++)
        s->listen_fds[i] = fd;
    s->nlisten = s->set.workers;
    snprintf(s->url, sizeof s->url, "http://unix:%s:/", path);
    return 0;
}

int sockets_open(const struct config *cfg, struct server *s)
{
    struct sd_listener got[SD_LISTEN_MAX];
    int n = sd_listen_fds_take(got, SD_LISTEN_MAX);
    if (n < 0) {
        fprintf(stderr, "pith: socket activation (LISTEN_FDS): %s\n",
                n == -E2BIG      ? "more than 16 sockets"
                : n == -EINVAL   ? "LISTEN_PID or LISTEN_FDS is not a number"
                : n == -ENOTSOCK ? "a passed descriptor is not a listening stream socket"
                                 : strerrordesc_np(-n));
        return 1;
    }
    if (n > 0)
        return take_inherited(cfg, s, got, (unsigned)n);
    const char *path = sockets_unix_path(cfg->addr);
    if (path)
        return open_unix(cfg, s, path);
    return SOCKETS_NOT_MINE;
}

int sockets_check(const struct config *cfg, char *what, size_t cap)
{
    const char *fds = sys_getenv("LISTEN_FDS"), *pid = sys_getenv("LISTEN_PID");
    const char *path = sockets_unix_path(cfg->addr);
    what[0] = '\0';
    if (fds && pid && atoi(pid) == sys_getpid()) {
        snprintf(what, cap, "%s socket(s) inherited from systemd (LISTEN_FDS)", fds);
        return 0;
    }
    if (!path)
        return 0;
    unsigned uid, gid;
    if (cfg->unix_owner && sys_owner_ids(cfg->unix_owner, &uid, &gid) < 0) {
        fprintf(stderr, "pith: --unix-owner: no such user or group: '%s'\n", cfg->unix_owner);
        return 2;
    }
    int r = sys_unix_path_free(path);
    if (r < 0) {
        fprintf(stderr, "pith: cannot listen on unix:%s: %s\n", path,
                r == -EADDRINUSE ? "a server answers on it"
                : r == -EEXIST   ? "it exists and is not a socket"
                                 : strerrordesc_np(-r));
        return 2;
    }
    snprintf(what, cap, "http://unix:%s:/ (mode %04o%s%s)", path, cfg->unix_mode,
             cfg->unix_owner ? ", owner " : "", cfg->unix_owner ? cfg->unix_owner : "");
    return 0;
}

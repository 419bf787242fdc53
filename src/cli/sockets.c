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
#include <netinet/in.h>
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

/* ---- a reload (SIGHUP with --config, issue 22) --------------------------------
 * The new master of a reload gets the old one's listeners. Where pith bound
 * them itself (not systemd), the file decides: a socket stays only where
 * the new configuration still listens, the others are closed here (their
 * port closes once the old workers have drained), and start.c binds what
 * the file names anew; per-worker sockets are made as many as --workers
 * (more join the port's SO_REUSEPORT group; fewer close, and connections
 * queued on those when their old worker drains are reset, unless the
 * kernel migrates them, net.ipv4.tcp_migrate_req). */

static bool same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return false;
    if (a->ss_family == AF_INET)
        return memcmp(&((const struct sockaddr_in *)a)->sin_addr,
                      &((const struct sockaddr_in *)b)->sin_addr, 4) == 0;
    return a->ss_family == AF_INET6 &&
           memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                  &((const struct sockaddr_in6 *)b)->sin6_addr, 16) == 0;
}

/* Is fd the TCP listener --addr (NULL: any) and port (0: any) ask for? */
static bool tcp_matches(int fd, const char *addr, unsigned port)
{
    struct sockaddr_storage have, want;
    socklen_t hl, wl;
    if (sys_local_addr(fd, &have, &hl) < 0 || have.ss_family == AF_UNIX)
        return false;
    if (port != 0 && sys_local_port(fd) != (int)port)
        return false;
    if (sys_parse_addr(addr ? addr : "::", 0, &want, &wl) < 0)
        return false;
    if (!addr && have.ss_family == AF_INET) /* the IPv4-only host's "any" */
        sys_parse_addr("0.0.0.0", 0, &want, &wl);
    return same_address(&have, &want);
}

static bool unix_matches(int fd, const char *path)
{
    struct sockaddr_storage a;
    socklen_t len;
    return path && sys_local_addr(fd, &a, &len) == 0 && a.ss_family == AF_UNIX &&
           strcmp(((const struct sockaddr_un *)&a)->sun_path, path) == 0;
}

/* The sockets of fds[0..k) the new configuration still wants; the others
 * are closed. Returns how many stay. */
static unsigned keep_wanted(const struct config *cfg, int *fds, unsigned k, bool tls)
{
    const char *path = sockets_unix_path(cfg->addr);
    bool wanted = tls ? config_tls_pairs(cfg) > 0 : !cfg->tls_only;
    unsigned kept = 0;
    for (unsigned i = 0; i < k; i++) {
        bool ok = false;
        if (wanted && tls)
            ok = !path && tcp_matches(fds[i], cfg->addr, cfg->tls_port);
        else if (wanted)
            ok = path ? unix_matches(fds[i], path) : tcp_matches(fds[i], cfg->addr, cfg->port);
        if (ok)
            fds[kept++] = fds[i];
        else
            sys_close(fds[i]);
    }
    return kept;
}

/* Per-worker TCP sockets, as many as workers: extra ones closed, missing
 * ones opened in the same SO_REUSEPORT group. Returns the count, or -1. */
static int fit_workers(int *fds, unsigned k, unsigned workers)
{
    struct sockaddr_storage a;
    socklen_t len;
    if (k == 0 || sys_local_addr(fds[0], &a, &len) < 0 || a.ss_family == AF_UNIX)
        return (int)k;
    while (k > workers)
        sys_close(fds[--k]);
    while (k < workers) {
        int fd = sys_listen_tcp(&a, len, 4096, true);
        if (fd < 0) {
            fprintf(stderr, "pith: cannot listen again for a new worker: %s\n",
                    strerrordesc_np(-fd));
            return -1;
        }
        fds[k++] = fd;
    }
    return (int)k;
}

static int reload_listeners(const struct config *cfg, unsigned *k, int *http, unsigned *kt,
                            int *https)
{
    *k = keep_wanted(cfg, http, *k, false);
    *kt = keep_wanted(cfg, https, *kt, true);
    int a = fit_workers(http, *k, cfg->workers), b = fit_workers(https, *kt, cfg->workers);
    if (a < 0 || b < 0)
        return 1;
    *k = (unsigned)a;
    *kt = (unsigned)b;
    return 0;
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
    if (!s->upgrade_from)
        s->listeners_own = false; /* systemd's: the socket units decide */
    if (s->reloading && s->listeners_own) {
        if (reload_listeners(cfg, &k, http, &kt, https))
            return 1;
        if (k == 0 && kt == 0)
            return SOCKETS_NOT_MINE; /* bound afresh, as the file says */
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
    s->listeners_own = true;
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

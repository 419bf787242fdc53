/* SPDX-License-Identifier: MIT */
/*
 * start.c - the start-up both builds share (see start.h): parse the command
 * line, open the root, probe the kernel, bind the listeners, print the start
 * line, then hand over to the master. Everything that can fail at start
 * fails here, before any worker exists, with a one-line message and the
 * documented exit code: 0 success, 1 runtime failure (missing root, busy
 * port), 2 bad usage. It uses only what pith-tiny's runtime provides in
 * place of libc (src/sys/fmt_raw.c's printf family, rt_raw.c's string
 * functions), so one copy serves both builds. HTTPS goes through tls.h,
 * which pith-tiny's tls_none.h turns into constants and no-ops: there
 * TLS_BUILT is false and the compiler drops every TLS step.
 */
#include "cli/start.h"

#include "acme/acme.h"
#include "base/clients.h"
#include "base/log.h"
#include "base/pool.h"
#include "base/server.h"
#include "base/stats.h"
#include "cli/check.h"
#include "cli/config.h"
#include "cli/sockets.h"
#include "core/bytes.h"
#include "event/loop.h"
#include "http/auth.h"
#include "http/filecache.h"
#include "http2/h2_conn.h"
#include "http3/h3.h"
#include "process/lockdown.h"
#include "process/master.h"
#include "sys/resolve.h"
#include "sys/sys.h"
#include "tls/tls.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    char msg[512];
    snprintf(msg, sizeof msg, "assertion failed at %s:%d: %s", file, line, expr);
    log_error(msg);
    abort();
}

/* HTTPS asked for (--tls-cert), and loaded. Never in pith-tiny, where
 * config.c refuses the TLS flags: TLS_BUILT is a constant false there. */
static bool https_wanted(const struct config *cfg)
{
    return TLS_BUILT && (config_tls_pairs(cfg) || cfg->acme_email);
}

static bool https_loaded(const struct server *s)
{
    return TLS_BUILT && s->tls;
}

static int fail(const char *what, const char *detail, int err)
{
    if (err)
        fprintf(stderr, "pith: %s%s: %s\n", what, detail, strerrordesc_np(-err));
    else
        fprintf(stderr, "pith: %s%s\n", what, detail);
    return 1;
}

/* "pith: " and, for a site other than the command line's ROOT, where it was
 * given ("--site 'a.test=/srv/a': ", "pith.conf:12: site a.test: "). */
static void site_prefix(const struct site_conf *site)
{
    fprintf(stderr, "pith: ");
    if (site->origin)
        fprintf(stderr, "%s: ", site->origin);
}

/* Each site's root, opened once: every file is opened beneath it. The
 * resolution method is probed on the first (the kernel decides it, not the
 * directory). */
static int open_roots(struct server *s)
{
    int bad = 0; /* every site's problem is reported, for --check */
    for (unsigned i = 0; i < s->set.nsites; i++) {
        const struct site_conf *site = &s->set.sites[i];
        struct vsite *vs = &s->sites[i];
        vs->conf = site;
        vs->index = i;
        vs->precomp_fd = -1;
        vs->root_fd = -1;
        int fd = sys_open_dir(site->root);
        if (fd < 0) {
            site_prefix(site);
            fprintf(stderr, "cannot serve '%s': %s\n", site->root, strerrordesc_np(-fd));
            bad = 1;
            continue;
        }
        vs->root_fd = fd;
        int r = sys_realpath(site->root, vs->root_path, sizeof vs->root_path);
        if (r < 0)
            return fail("cannot resolve the root path ", site->root, r);
        vs->fc = (struct fc_root){
            .root_fd = fd,
            .variant_dir_fd = fd,
            .follow_symlinks = site->follow_symlinks,
            .precompressed = site->precompressed,
            .cache_control = site->cache_control,
            .immutable = site->immutable,
            .nimmutable = site->nimmutable,
        };
    }
    if (bad)
        return bad;
    const char *force = sys_getenv("PITH_RESOLVE");
    s->resolve = resolve_probe(s->sites[0].root_fd);
    if (force && strcmp(force, "walk") == 0)
        s->resolve = RESOLVE_WALK; /* tests exercise the fallback this way */
    return 0;
}

/* Checks the port is free with a socket that does not share it: an
 * SO_REUSEPORT bind would otherwise silently join another server's port.
 * Returns the port (the kernel's pick for port 0) or a negative errno. */
static int probe_port(struct sockaddr_storage *addr, socklen_t len, int *keep)
{
    int fd = sys_listen_tcp(addr, len, 1, false);
    if (fd < 0)
        return fd;
    int port = sys_local_port(fd);
    if (keep)
        *keep = fd;
    else
        sys_close(fd);
    return port;
}

/* --addr (default: every address, IPv4 alone where the host has no IPv6)
 * and port into *addr and *len, its text into host[64], probed: returns the
 * port (the kernel's pick for port 0) or a negative errno, or ADDR_NOT_NUMERIC
 * after saying so. Binding and --check share it. With keep, the probe's
 * socket stays open in *keep (else -1), so the next pick is another port. */
#define ADDR_NOT_NUMERIC (-100000) /* below every -errno */
static int probe_addr(const struct config *cfg, unsigned cfg_port, struct sockaddr_storage *addr,
                      socklen_t *len, char *host, int *keep)
{
    const char *text = cfg->addr ? cfg->addr : "::";
    if (sys_parse_addr(text, cfg_port, addr, len) < 0) {
        fprintf(stderr, "pith: --addr: '%s' is not a numeric IPv4 or IPv6 address\n", text);
        return ADDR_NOT_NUMERIC;
    }
    int port = probe_port(addr, *len, keep);
    if (port == -EAFNOSUPPORT && !cfg->addr) {
        /* No IPv6 on this host: serve IPv4 only (SWS#134). */
        sys_parse_addr("0.0.0.0", cfg_port, addr, len);
        port = probe_port(addr, *len, keep);
    }
    sys_addr_text(addr, host, 64);
    return port;
}

/* The port to bind: cfg_port, or the kernel's pick for 0. With udp_too
 * (HTTP/3 binds UDP on the TLS port's number) a pick whose UDP side
 * another socket holds (a client's, a resolver's) is passed over: the
 * picks stay held while we look, so each is a new port. */
#define PICKS_MAX 16
static int pick_port(const struct config *cfg, unsigned cfg_port, bool udp_too,
                     struct sockaddr_storage *addr, socklen_t *len, char *host)
{
    int held[PICKS_MAX], port;
    unsigned n = 0;
    for (;;) {
        int fd = -1;
        port = probe_addr(cfg, cfg_port, addr, len, host, udp_too && !cfg_port ? &fd : NULL);
        if (fd < 0)
            break;
        held[n++] = fd;
        struct sockaddr_storage at;
        socklen_t at_len;
        sys_parse_addr(host, (unsigned)port, &at, &at_len);
        if (n == PICKS_MAX || h3_udp_port_free(&at, at_len))
            break;
    }
    while (n)
        sys_close(held[--n]);
    return port;
}

/* One listener per worker on port (the plain or the TLS one), into fds[];
 * the address into *out and *out_len (for the master's fresh listeners) and
 * "scheme://host:port/" into url. Returns the port, or after saying why
 * -1 (a runtime failure) or -2 (bad usage). */
static int bind_group(const struct config *cfg, unsigned cfg_port, bool udp_too, int *fds,
                      struct sockaddr_storage *out, socklen_t *out_len, const char *scheme,
                      char *url, size_t url_cap)
{
    struct sockaddr_storage addr;
    socklen_t len;
    char host[64];
    int port = pick_port(cfg, cfg_port, udp_too, &addr, &len, host);
    if (port == ADDR_NOT_NUMERIC)
        return -2;
    if (port < 0) {
        if (port == -EADDRINUSE)
            fprintf(stderr, "pith: port %u is already in use on %s\n", cfg_port, host);
        else
            fprintf(stderr, "pith: cannot listen on %s port %u: %s\n", host, cfg_port,
                    strerrordesc_np(-port));
        return -1;
    }
    sys_parse_addr(host, (unsigned)port, &addr, &len);
    *out = addr; /* the master opens a fresh listener for a new worker */
    *out_len = len;
    for (unsigned i = 0; i < cfg->workers; i++) {
        int fd = sys_listen_tcp(&addr, len, 4096, true);
        if (fd < 0) {
            fprintf(stderr, "pith: cannot listen on %s port %d: %s\n", host, port,
                    strerrordesc_np(-fd));
            return -1;
        }
        fds[i] = fd;
    }
    snprintf(url, url_cap, "%s://%s:%d/", scheme, host, port);
    return port;
}

/* The plain listeners (unless --tls-only) and, with HTTPS, the TLS ones. */
static int bind_listeners(const struct config *cfg, struct server *s)
{
    s->listeners_own = true; /* a reload may replace them (issue 22) */
    for (unsigned i = 0; i < SETTINGS_WORKERS_MAX; i++)
        s->listen_fds[i] = s->tls_listen_fds[i] = -1;
    s->nlisten = cfg->workers;
    int r = 0;
    if (!cfg->tls_only)
        r = bind_group(cfg, cfg->port, false, s->listen_fds, &s->listen_addr, &s->listen_len,
                       "http", s->url, sizeof s->url);
    if (r >= 0 && https_wanted(cfg)) {
        r = bind_group(cfg, cfg->tls_port, H3_BUILT && s->set.http3, s->tls_listen_fds,
                       &s->tls_listen_addr, &s->tls_listen_len, "https", s->tls_url,
                       sizeof s->tls_url);
        s->tls_port = r >= 0 ? (unsigned)r : 0; /* --redirect-http's Location */
    }
    return r < 0 ? -r : 0;
}

/* Inherited or Unix listeners without one named "https": with HTTPS, its
 * listeners are bound on --addr and --tls-port as without them. A reload
 * (issue 22) whose file moved the plain port gets that one bound too. */
static int bind_beside(const struct config *cfg, struct server *s)
{
    if (s->reloading && s->listeners_own && !cfg->tls_only && s->listen_fds[0] < 0) {
        int r = bind_group(cfg, cfg->port, false, s->listen_fds, &s->listen_addr, &s->listen_len,
                           "http", s->url, sizeof s->url);
        if (r < 0)
            return -r;
        s->listen_shared = false;
    }
    if (!https_wanted(cfg) || s->tls_listen_fds[0] >= 0)
        return 0;
    if (sockets_unix_path(cfg->addr)) {
        fprintf(stderr, "pith: --tls-cert: HTTPS needs a TCP listener, and --addr is a Unix "
                        "socket (pass one named \"https\" by socket activation instead)\n");
        return 2;
    }
    int r =
        bind_group(cfg, cfg->tls_port, H3_BUILT && s->set.http3, s->tls_listen_fds,
                   &s->tls_listen_addr, &s->tls_listen_len, "https", s->tls_url, sizeof s->tls_url);
    s->tls_port = r >= 0 ? (unsigned)r : 0;
    return r < 0 ? -r : 0;
}

/* Descriptors one worker needs: a socket per connection, the cache's open
 * files, and a margin for the listener, logs, signalfd, event loop, root
 * and standard streams. A response from an uncached file or a listing
 * takes one more while it lasts: room for that is asked for too where the
 * hard limit allows, and without it such a response gets a 503 (counted,
 * never a crash). */
#define NOFILE_MARGIN 64

static uint64_t nofile_need(const struct settings *set)
{
    return (uint64_t)set->max_conns + set->cache_entries + NOFILE_MARGIN;
}

/* Raises RLIMIT_NOFILE towards what a worker may use, and says which flags
 * to lower (exit 2) when even what it needs does not fit: a shortfall found
 * now is a clear message; found later, it would be 503s and accept pauses. */
static int check_nofile(const struct settings *set)
{
    uint64_t need = nofile_need(set), cur = 0, max = 0;
    int r = sys_nofile_limit(need + set->max_conns, &cur, &max);
    if (r < 0)
        return fail("cannot read or raise RLIMIT_NOFILE", "", r);
    if (cur >= need)
        return 0;
    fprintf(stderr,
            "pith: --max-conns %u and --cache-entries %u need %llu file descriptors per worker, "
            "but RLIMIT_NOFILE allows %llu (hard limit %llu); lower --max-conns or "
            "--cache-entries, or raise the limit\n",
            set->max_conns, set->cache_entries, (unsigned long long)need, (unsigned long long)cur,
            (unsigned long long)max);
    return 2;
}

/* Each worker reserves its connection slots and its small-file cache up
 * front (address space; pages become resident when used). Reserving the
 * same here, once, turns an address-space limit (ulimit -v) that would make
 * every worker fail at start into one clear line now. */
static int check_reservations(const struct settings *set)
{
    size_t bytes = (size_t)set->max_conns * POOL_SLOT_SIZE + ((size_t)set->cache_size_mib << 20);
    if (set->ntls)
        bytes += tls_worker_reservation(set->max_conns); /* HTTPS: the TLS buffers */
    bytes += h2_worker_reservation(set);                 /* HTTP/2: the stream slots */
    bytes += h3_worker_reservation(set);                 /* HTTP/3: connections, streams */
    void *p = sys_map(bytes);
    if (p) {
        sys_unmap(p, bytes);
        return 0;
    }
    fprintf(stderr,
            "pith: --max-conns %u and --cache-size %u need %zu MiB of address space per worker, "
            "which this process may not reserve (ulimit -v, or a small machine?); lower "
            "--max-conns or --cache-size%s\n",
            set->max_conns, set->cache_size_mib, bytes >> 20,
            set->http3 ? " (HTTP/3's streams take their share: --http3 off gives it back)" : "");
    return 2;
}

/* --precompressed DIR: each site's mirror tree is opened once, like its
 * root, and every variant is resolved beneath it by the same rules. */
static int open_precompressed(struct server *s)
{
    int bad = 0;
    for (unsigned i = 0; i < s->set.nsites && FILECACHE_VARIANTS; i++) {
        const struct site_conf *site = &s->set.sites[i];
        if (!site->precompressed || !site->precompressed_dir)
            continue;
        int fd = sys_open_dir(site->precompressed_dir);
        if (fd < 0) {
            site_prefix(site);
            fprintf(stderr, "cannot open --precompressed %s: %s\n", site->precompressed_dir,
                    strerrordesc_np(-fd));
            bad = 1;
            continue;
        }
        s->sites[i].precomp_fd = fd;
        s->sites[i].fc.variant_dir_fd = fd;
    }
    return bad;
}

/* "http://ADDR:PORT/" of the --status listener, from the socket itself
 * (bound here or inherited). Returns 0. */
static int status_url(struct server *s)
{
    struct sockaddr_storage a;
    socklen_t alen;
    char text[80];
    sys_local_addr(s->status_fd, &a, &alen);
    sys_addr_text(&a, text, sizeof text);
    snprintf(s->status_url, sizeof s->status_url, "http://%s:%d/", text,
             sys_local_port(s->status_fd));
    return 0;
}

/* --status ADDR:PORT: its own listener (never SO_REUSEPORT, never the
 * public port), and the shared counters every worker adds to, which exist
 * with or without it (so the hot path has no branch). */
static int prepare_status(const struct config *cfg, struct server *s)
{
    s->stats = stats_create(sys_now_real());
    if (!s->stats)
        return fail("cannot map the shared counters", "", -ENOMEM);
    /* --max-conns-per-client and basic auth's failures (issue 22): the
     * counts every worker shares. A worker holds max_conns TCP connections
     * and, with HTTP/3, as many QUIC ones (h3_worker.c), all counted. */
    unsigned conns = s->set.max_conns * (H3_BUILT && s->set.http3 ? 2 : 1);
    if ((s->set.clients_counted || s->set.nauth) &&
        !(s->clients = clients_create(s->set.workers, conns, s->set.nauth ? AUTH_TRACKED : 0)))
        return fail("cannot map the per-client counts", "", -ENOMEM);
    if (!cfg->status) {
        if (s->status_fd >= 0) /* inherited, but no longer asked for */
            sys_close(s->status_fd);
        s->status_fd = -1;
        return 0;
    }
    char host[128];
    const char *colon = strrchr(cfg->status, ':');
    size_t n = (size_t)(colon - cfg->status);
    snprintf(host, sizeof host, "%.*s", (int)n, cfg->status);
    unsigned port = (unsigned)atoi(colon + 1);
    struct sockaddr_storage addr;
    socklen_t len;
    if (sys_parse_addr(host, port, &addr, &len) < 0) {
        fprintf(stderr, "pith: --status: '%s' is not a numeric IPv4 or IPv6 address\n", host);
        return 2;
    }
    /* Inherited (named "status"): an upgrade, or a reload whose file still
     * names that port (else it closes and the new one is bound). */
    if (s->status_fd >= 0 && s->reloading && s->listeners_own && port != 0 &&
        sys_local_port(s->status_fd) != (int)port) {
        sys_close(s->status_fd);
        s->status_fd = -1;
    }
    if (s->status_fd >= 0)
        return status_url(s);
    int public_port = sys_local_port(s->listen_fds[0]);
    if (port != 0 && (int)port == public_port) {
        fprintf(stderr, "pith: --status: port %u is the public port; give it a port of its own\n",
                port);
        return 2;
    }
    int fd = sys_listen_tcp(&addr, len, 64, false);
    if (fd < 0) {
        if (fd == -EADDRINUSE)
            fprintf(stderr, "pith: --status: port %u is already in use on %s\n", port, host);
        else
            fprintf(stderr, "pith: --status: cannot listen on %s port %u: %s\n", host, port,
                    strerrordesc_np(-fd));
        return 1;
    }
    s->status_fd = fd;
    return status_url(s);
}

static int prepare(const struct config *cfg, struct server *s)
{
    int r = open_roots(s);
    if (!r)
        r = open_precompressed(s);
    if (!r)
        r = check_nofile(&s->set);
    if (!r)
        r = check_reservations(&s->set);
    if (!r && (r = sockets_open(cfg, s)) == SOCKETS_NOT_MINE)
        r = bind_listeners(cfg, s);
    else if (!r)
        r = bind_beside(cfg, s);
    if (!r)
        r = prepare_status(cfg, s);
    return r;
}

/* "pith V serving ROOT on http://H:P/ (1 worker, epoll, openat2)"; with
 * HTTPS the TLS URL follows the plain one ("... and https://H:P/", or alone
 * with --tls-only) and the data path ends the parentheses. */
static void print_start_line(const struct config *cfg, const struct server *s)
{
    if (cfg->quiet)
        return;
    char sandbox[96];
    lockdown_describe(s, sandbox, sizeof sandbox);
    char both[300], tls[200] = "";
    const char *urls = s->url;
    if (https_loaded(s)) {
        snprintf(both, sizeof both, "%s and %s", s->url, s->tls_url);
        urls = cfg->tls_only ? s->tls_url : both;
        snprintf(tls, sizeof tls, "; %s%s", tls_server_path(s->tls), h3_describe(s));
    }
    char more[48] = "";
    if (s->set.nsites > 1)
        snprintf(more, sizeof more, " and %u more site%s", s->set.nsites - 1,
                 s->set.nsites == 2 ? "" : "s");
    fprintf(stderr, "pith %s serving %s%s on %s (%u worker%s, %s, %s, %s%s%s)\n", PITH_VERSION,
            s->sites[0].root_path, more, urls, s->nlisten, s->nlisten == 1 ? "" : "s",
            s->loop->name, resolve_method_name(s->resolve), sandbox,
            !s->listen_inherited ? ""
            : s->upgrade_from    ? ", listeners inherited from the old master"
                                 : ", socket activation",
            tls);
    if (s->status_fd >= 0)
        fprintf(stderr, "pith: status on %smetrics and %shealthz\n", s->status_url, s->status_url);
    fflush(stderr);
}

/* Basic auth over plain HTTP (issue 22): the password travels in clear,
 * base64 being no encryption. Said at start, for each site, whatever -q. */
static void warn_plain_auth(const struct server *s)
{
    if (!AUTH_BUILT || s->listen_fds[0] < 0 || s->set.redirect_http || s->unix_path[0])
        return;
    for (unsigned i = 0; i < s->set.nsites; i++) {
        const struct site_conf *site = &s->set.sites[i];
        if (site->nauth)
            fprintf(stderr,
                    "pith: warning: site %s asks for passwords (%s) over plain HTTP on %s: they "
                    "travel in clear; serve it over HTTPS (--tls-only, or --redirect-http)\n",
                    site->label, s->set.auth[site->auth_first].prefix, s->url);
    }
}

/* HTTPS: the certificates and keys are read here, by the master, before
 * any worker exists (and before --user drops privileges in the workers). */
static int prepare_tls(struct server *s)
{
    if (!TLS_BUILT || s->set.ntls == 0)
        return 0;
    char err[512];
    s->tls = tls_server_new(&s->set, err, sizeof err);
    if (!s->tls) {
        fprintf(stderr, "pith: %s\n", err);
        return 1;
    }
    return 0;
}

/* Each site's --fallback must exist beneath its root: checked now (exit
 * 1), not found missing by every worker. It is resolved by the request
 * path's rules (no link unless --follow-symlinks, nothing outside the root)
 * and must be a regular file. Sites whose root did not open are skipped
 * (their problem was said). */
static int check_fallbacks(const struct settings *set, const struct server *s)
{
    int bad = 0;
    for (unsigned i = 0; i < set->nsites; i++) {
        const struct site_conf *site = &set->sites[i];
        if (!site->site.has_fallback || s->sites[i].root_fd < 0)
            continue;
        int r;
        struct sys_stat st;
        r = resolve_stat(s->sites[i].root_fd, site->site.fallback, site->follow_symlinks,
                         s->resolve, &st);
        if (r == 0 && sys_file_type(&st) != SYS_FILE_REGULAR)
            r = -EISDIR;
        if (r < 0) {
            site_prefix(site);
            fprintf(stderr, "cannot serve the --fallback file beneath the root: %s: %s\n",
                    site->site.fallback, strerrordesc_np(-r));
            bad = 1;
        }
    }
    return bad;
}

/* --group, --chroot and --fallback name things that must exist: checked
 * now (exit 1), not found missing by every worker. The fallback is
 * resolved beneath the root by the request path's rules (no link unless
 * --follow-symlinks, nothing outside the root) and must be a regular file;
 * an --error-page may be missing (the built-in page answers), so it is
 * not checked. */
static int check_lockdown_files(const struct settings *set, struct server *s)
{
    unsigned gid;
    int r;
    if (set->group && (r = sys_group_id(set->group, &gid)) < 0)
        return fail("no such group: ", set->group, 0);
    if (set->group)
        s->log_gid = gid;
    if (set->chroot_dir) {
        int fd = sys_open_dir(set->chroot_dir);
        if (fd < 0)
            return fail("cannot use --chroot ", set->chroot_dir, fd);
        sys_close(fd);
    }
    return check_fallbacks(set, s);
}

/* Everything that can fail is checked before the start line, and before
 * --daemon sends stderr to /dev/null, so no failure is ever silent. */
static int check_files(const struct settings *set, struct server *s)
{
    int r;
    if (set->log && strcmp(set->log, "-") != 0) {
        int fd = sys_open_log(set->log);
        if (fd < 0)
            return fail("cannot open the access log ", set->log, fd);
        sys_close(fd);
    }
    /* The pidfile is written once the final pid is known (after --daemon);
     * here we only make sure it can be. */
    if (set->pidfile && (r = sys_write_pidfile(set->pidfile, -1)) < 0)
        return fail("cannot write the pidfile ", set->pidfile, r);
    if (set->user && (r = sys_check_user(set->user)) < 0) {
        if (r == -EPERM)
            return fail("--user needs pith to start as root", "", 0);
        return fail("no such user: ", set->user, 0);
    }
    /* A log file that logrotate replaces is handed to the workers' user
     * by the master before they reopen it. */
    if (set->user && set->log && strcmp(set->log, "-") != 0)
        s->log_chown = sys_user_ids(set->user, &s->log_uid, &s->log_gid) == 0;
    return check_lockdown_files(set, s);
}

/* --check's listener line: TCP is probed (bound and closed at once); a port
 * in use or reserved is a note, not an error, since the server the check
 * prepares a restart of may hold it. */
static int check_tcp(const struct config *cfg, char *what, size_t cap)
{
    struct sockaddr_storage addr;
    socklen_t len;
    char host[64];
    int port = probe_addr(cfg, cfg->port, &addr, &len, host, NULL);
    if (port == ADDR_NOT_NUMERIC)
        return 2;
    snprintf(what, cap, "http://%s:%u/ (%s)", host, cfg->port,
             port >= 0             ? "free now"
             : port == -EADDRINUSE ? "in use now: by the server this configuration replaces?"
             : port == -EACCES     ? "needs root or CAP_NET_BIND_SERVICE"
                                   : strerrordesc_np(-port));
    return 0;
}

/* pith --check: every start-up check except taking the port, then the
 * plan on stdout; 0 when valid, 2 (after the reason on stderr) when not. */
static int check_run(const struct config *cfg, struct server *s, start_loop_chooser choose_loop)
{
    char listen[PATH_MAX + 128];
    int r = choose_loop(cfg, s);
    /* Every site's root, mirror tree and fallback is looked at, so that one
     * check names each missing one. */
    if (!r) {
        r = open_roots(s);
        r |= open_precompressed(s);
        r |= check_fallbacks(&s->set, s);
    }
    if (!r)
        r = check_nofile(&s->set);
    if (!r)
        r = check_reservations(&s->set);
    if (!r)
        r = sockets_check(cfg, listen, sizeof listen);
    if (!r && !listen[0])
        r = check_tcp(cfg, listen, sizeof listen);
    if (!r)
        r = check_files(&s->set, s);
    if (!r)
        r = prepare_tls(s); /* the same loading as a start: each pair must work */
    if (!r)
        r = auth_load(s); /* every line of every password file */
    if (r) {
        fprintf(stderr, "pith: --check: the configuration is not valid\n");
        return 2;
    }
    if (https_loaded(s)) {
        size_t n = cfg->tls_only ? 0 : strlen(listen); /* --tls-only: no plain listener */
        snprintf(listen + n, sizeof listen - n, "%shttps on port %u (%u certificate%s, loaded)",
                 n ? "; " : "", cfg->tls_port, s->set.ntls, s->set.ntls == 1 ? "" : "s");
        tls_server_free(s->tls);
        s->tls = NULL;
    }
    /* --acme: its directory and CA root; the CA is not contacted. */
    if (ACME_BUILT && acme_check(&s->set, listen, sizeof listen)) {
        fprintf(stderr, "pith: --check: the configuration is not valid\n");
        return 2;
    }
    check_print(cfg, s, listen);
    return 0;
}

/* A decimal number at *p below limit, *p moved past it; -1 for none. */
static long decimal_below(const char **p, long limit)
{
    long v = 0;
    const char *q = *p;
    for (; *q >= '0' && *q <= '9' && v < limit; q++)
        v = v * 10 + (*q - '0');
    if (q == *p || v >= limit)
        return -1;
    *p = q;
    return v;
}

/* "FD:BASE": HTTP/3's steering map, inherited open, and the old master's
 * connection-ID base (a multiple of 64); ours is the next one, so four
 * generations can overlap. FD_CLOEXEC from now on, so only the next
 * upgrade passes it on; h3_bpf.c checks it is such a map before use. */
static void take_h3_map(struct server *s, const char *v)
{
    long fd = decimal_below(&v, 1 << 20);
    long base = *v == ':' ? (v++, decimal_below(&v, 256)) : -1;
    if (fd < 3 || base < 0 || base % 64 || (*v && *v != ','))
        return;
    if (sys_set_cloexec((int)fd) < 0)
        return;
    s->h3_map_fd = (int)fd;
    s->h3_cid_base = (uint8_t)((base + 64) & 0xff);
}

/* What an upgrade needs later (SIGUSR2): this binary's path and arguments,
 * and, in the new master, which old one it replaces. */
static void remember_origin(char **argv, struct server *s)
{
    s->argv = argv;
    if (sys_exe_path(s->exe_path, sizeof s->exe_path) < 0)
        s->exe_path[0] = '\0';
    /* "PID[,reload][,systemd][,h3map=FD:BASE]": the old master, whether
     * this is a SIGHUP reload, whether the listeners passed on came from
     * systemd (else pith bound them: a reload may replace them as the file
     * says), HTTP/3's steering map and the old master's connection-ID base
     * (ours is the other one: h3_bpf.c). */
    const char *from = sys_getenv("PITH_UPGRADE_FROM");
    s->upgrade_from = from ? atoi(from) : 0;
    s->listeners_own = from != NULL;
    s->h3_map_fd = -1;
    const char *p = from ? from + strcspn(from, ",") : NULL;
    while (p && *p == ',') {
        p++;
        size_t n = strcspn(p, ",");
        s->reloading = s->reloading || (n == 6 && strncmp(p, "reload", 6) == 0);
        if (n == 7 && strncmp(p, "systemd", 7) == 0)
            s->listeners_own = false;
        if (H3_BUILT && n > 6 && strncmp(p, "h3map=", 6) == 0)
            take_h3_map(s, p + 6);
        p += n;
    }
}

static int start(const struct config *cfg, struct server *s, start_loop_chooser choose_loop)
{
    static const int blocked[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGCHLD, SIGUSR2, SIGIO};
    settings_from_config(cfg, &s->set);
    lockdown_probe(s);
    for (unsigned i = 0; i < SETTINGS_WORKERS_MAX; i++)
        s->listen_fds[i] = s->tls_listen_fds[i] = s->udp_fds[i] = -1;
    s->status_fd = -1;
    s->ready_pipe[0] = s->ready_pipe[1] = -1;
    if (cfg->check)
        return check_run(cfg, s, choose_loop);
    int r = choose_loop(cfg, s);
    if (!r)
        r = prepare(cfg, s);
    if (!r)
        r = check_files(&s->set, s);
    if (!r)
        r = prepare_tls(s);
    if (!r)
        r = h3_prepare(s); /* HTTP/3: UDP on the TLS port, once its port is known */
    if (!r)
        r = auth_load(s); /* before forking: the workers may not read the files */
    if (!r && ACME_BUILT && s->set.acme_email && !(r = acme_prepare(s)))
        tls_server_acme(s->tls, s->acme); /* the challenges tls-alpn-01 answers */
    if (r)
        return r;
    warn_plain_auth(s);
    sys_signal_ignore(SIGPIPE); /* a vanished client is an EPIPE, not a death */
    sys_sigmask_block(blocked, ARRAY_LEN(blocked), NULL);
    print_start_line(cfg, s);
    if (ACME_BUILT && s->acme && !cfg->quiet)
        acme_start_lines(s);
    /* The new master of an upgrade is detached already, if the old was.
     * A daemon's pidfile is written by the parent it leaves, before that
     * returns: Type=forking reads it then. */
    const char *pidfile = s->set.pidfile;
    if (cfg->daemon && !s->upgrade_from)
        r = sys_daemonize(pidfile);
    else if (pidfile)
        r = sys_write_pidfile(pidfile, sys_getpid());
    if (r < 0 && pidfile)
        return fail("cannot write the pidfile ", pidfile, r);
    if (r < 0)
        return fail("cannot become a daemon", "", r);
    /* The master keeps its privileges (to restart workers, hand over the
     * log and remove the pidfile); each worker drops to --user after
     * opening its log. */
    return master_run(s);
}

/* Each line of a usage reason as "pith: LINE". */
static void print_reason(const char *reason)
{
    for (;;) {
        size_t n = strcspn(reason, "\n");
        fprintf(stderr, "pith: %.*s\n", (int)n, reason);
        if (!reason[n])
            return;
        reason += n + 1;
    }
}

int start_main(int argc, char **argv, start_loop_chooser choose_loop)
{
    static struct config cfg;
    static struct server srv; /* large (paths); lives for the whole run */
    static char reason[8192]; /* a configuration file's problems, one line each */
    switch (config_parse(argc, argv, (unsigned)sys_cpu_count(), &cfg, reason, sizeof reason)) {
    case CONFIG_HELP: fputs(config_usage(), stdout); return 0;
    case CONFIG_VERSION:
        printf("pith %s\n", PITH_VERSION);
        if (TLS_BUILT)
            printf(H3_BUILT ? "HTTP/3: %s\n" : "HTTP/3: not built (needs %s)\n",
                   H3_BUILT ? h3_versions() : H3_PACKAGES);
        return 0;
    case CONFIG_USAGE: print_reason(reason); return 2;
    case CONFIG_RUN: break;
    }
    remember_origin(argv, &srv);
    return start(&cfg, &srv, choose_loop);
}

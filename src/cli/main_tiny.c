/* SPDX-License-Identifier: MIT */
/*
 * main_tiny.c - pith-tiny's entry point: main.c's start-up without stdio
 * and without io_uring. The same checks in the same order, with the same
 * one-line messages and exit codes (0 success, 1 runtime failure, 2 usage),
 * so the shared test suite cannot tell the builds apart at start. Flags
 * that need a library are refused in config.c (PITH_TINY) with exit 2.
 * Keep it in step with main.c.
 */
#include "cli/config.h"
#include "core/bytes.h"
#include "server/log.h"
#include "server/master.h"
#include "server/pool.h"
#include "server/server.h"
#include "sys/resolve.h"
#include "sys/sys.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

/* One message line, built piece by piece (there is no printf). */
static char msg_line[1024];
static struct buf msg = {msg_line, 0, sizeof msg_line - 1, false};

static void put(const char *s)
{
    buf_put_cstr(&msg, s);
}

static void put_u(uint64_t v)
{
    buf_put_u64(&msg, v);
}

static void put_err(int err)
{
    const char *d = strerrordesc_np(-err);
    put(d ? d : "Unknown error");
}

/* Writes the line so far to fd and starts a new one. */
static void flush_to(int fd)
{
    sys_write(fd, msg_line, msg.len);
    msg.len = 0;
}

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    char text[512];
    struct buf b = buf_make(text, sizeof text - 1);
    buf_put_cstr(&b, "assertion failed at ");
    buf_put_cstr(&b, file);
    buf_put_char(&b, ':');
    buf_put_u64(&b, (uint64_t)line);
    buf_put_cstr(&b, ": ");
    buf_put_cstr(&b, expr);
    text[b.len] = '\0';
    log_error(text);
    sys_signal_default(SIGABRT);
    sys_kill(sys_getpid(), SIGABRT);
    sys_exit(134);
}

static int fail(const char *what, const char *detail, int err)
{
    put("pith: ");
    put(what);
    put(detail);
    if (err) {
        put(": ");
        put_err(err);
    }
    put("\n");
    flush_to(2);
    return 1;
}

static int open_root(const struct config *cfg, struct server *s)
{
    const char *root = cfg->root;
    int fd = sys_open_dir(root);
    if (fd < 0) {
        put("pith: cannot serve '");
        put(root);
        put("': ");
        put_err(fd);
        put("\n");
        flush_to(2);
        return 1;
    }
    s->root_fd = fd;
    int r = sys_realpath(root, s->root_path, sizeof s->root_path);
    if (r < 0)
        return fail("cannot resolve the root path ", root, r);
    const char *force = sys_getenv("PITH_RESOLVE");
    s->resolve = resolve_probe(fd);
    if (force && strcmp(force, "walk") == 0)
        s->resolve = RESOLVE_WALK; /* tests exercise the fallback this way */
    return 0;
}

/* As main.c: a probe socket that does not share the port. */
static int probe_port(struct sockaddr_storage *addr, socklen_t len)
{
    int fd = sys_listen_tcp(addr, len, 1, false);
    if (fd < 0)
        return fd;
    int port = sys_local_port(fd);
    sys_close(fd);
    return port;
}

static int cannot_listen(const char *host, unsigned port, int err)
{
    put("pith: cannot listen on ");
    put(host);
    put(" port ");
    put_u(port);
    put(": ");
    put_err(err);
    put("\n");
    flush_to(2);
    return 1;
}

static int bind_listeners(const struct config *cfg, struct server *s)
{
    struct sockaddr_storage addr;
    socklen_t len;
    const char *text = cfg->addr ? cfg->addr : "::";
    if (sys_parse_addr(text, cfg->port, &addr, &len) < 0) {
        put("pith: --addr: '");
        put(text);
        put("' is not a numeric IPv4 or IPv6 address\n");
        flush_to(2);
        return 2;
    }
    int port = probe_port(&addr, len);
    if (port == -EAFNOSUPPORT && !cfg->addr) {
        /* No IPv6 on this host: serve IPv4 only (SWS#134). */
        sys_parse_addr("0.0.0.0", cfg->port, &addr, &len);
        port = probe_port(&addr, len);
    }
    char host[64];
    sys_addr_text(&addr, host, sizeof host);
    if (port < 0) {
        if (port != -EADDRINUSE)
            return cannot_listen(host, cfg->port, port);
        put("pith: port ");
        put_u(cfg->port);
        put(" is already in use on ");
        put(host);
        put("\n");
        flush_to(2);
        return 1;
    }
    sys_parse_addr(host, (unsigned)port, &addr, &len);
    s->listen_addr = addr; /* the master opens a fresh listener for a new worker */
    s->listen_len = len;
    for (unsigned i = 0; i < cfg->workers; i++) {
        int fd = sys_listen_tcp(&addr, len, 4096, true);
        if (fd < 0)
            return cannot_listen(host, (unsigned)port, fd);
        s->listen_fds[i] = fd;
        s->nlisten = i + 1;
    }
    struct buf u = buf_make(s->url, sizeof s->url - 1);
    buf_put_cstr(&u, "http://");
    buf_put_cstr(&u, host);
    buf_put_char(&u, ':');
    buf_put_u64(&u, (uint64_t)port);
    buf_put_char(&u, '/');
    s->url[u.len] = '\0';
    return 0;
}

#define NOFILE_MARGIN 64 /* as main.c */

static int check_nofile(const struct settings *set)
{
    uint64_t need = (uint64_t)set->max_conns + set->cache_entries + NOFILE_MARGIN;
    uint64_t cur = 0, max = 0;
    int r = sys_nofile_limit(need + set->max_conns, &cur, &max);
    if (r < 0)
        return fail("cannot read or raise RLIMIT_NOFILE", "", r);
    if (cur >= need)
        return 0;
    put("pith: --max-conns ");
    put_u(set->max_conns);
    put(" and --cache-entries ");
    put_u(set->cache_entries);
    put(" need ");
    put_u(need);
    put(" file descriptors per worker, but RLIMIT_NOFILE allows ");
    put_u(cur);
    put(" (hard limit ");
    put_u(max);
    put("); lower --max-conns or --cache-entries, or raise the limit\n");
    flush_to(2);
    return 2;
}

static int check_reservations(const struct settings *set)
{
    size_t bytes = (size_t)set->max_conns * POOL_SLOT_SIZE + ((size_t)set->cache_size_mib << 20);
    void *p = sys_map(bytes);
    if (p) {
        sys_unmap(p, bytes);
        return 0;
    }
    put("pith: --max-conns ");
    put_u(set->max_conns);
    put(" and --cache-size ");
    put_u(set->cache_size_mib);
    put(" need ");
    put_u(bytes >> 20);
    put(" MiB of address space per worker, which this process may not reserve (ulimit -v?); "
        "lower --max-conns or --cache-size\n");
    flush_to(2);
    return 2;
}

static void print_start_line(const struct config *cfg, const struct server *s)
{
    if (cfg->quiet)
        return;
    put("pith " PITH_VERSION " serving ");
    put(s->root_path);
    put(" on ");
    put(s->url);
    put(" (");
    put_u(s->nlisten);
    put(s->nlisten == 1 ? " worker, " : " workers, ");
    put(s->loop->name);
    put(", ");
    put(resolve_method_name(s->resolve));
    put(")\n");
    flush_to(2);
}

static int check_files(const struct settings *set, struct server *s)
{
    int r;
    if (set->log && strcmp(set->log, "-") != 0) {
        int fd = sys_open_log(set->log);
        if (fd < 0)
            return fail("cannot open the access log ", set->log, fd);
        sys_close(fd);
    }
    if (set->pidfile && (r = sys_write_pidfile(set->pidfile, -1)) < 0)
        return fail("cannot write the pidfile ", set->pidfile, r);
    if (set->user && (r = sys_check_user(set->user)) < 0) {
        if (r == -EPERM)
            return fail("--user needs pith to start as root", "", 0);
        return fail("no such user: ", set->user, 0);
    }
    if (set->user && set->log && strcmp(set->log, "-") != 0)
        s->log_chown = sys_user_ids(set->user, &s->log_uid, &s->log_gid) == 0;
    return 0;
}

static int start(const struct config *cfg, struct server *s)
{
    static const int blocked[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGCHLD};
    settings_from_config(cfg, &s->set);
    s->loop = &loop_epoll; /* the only event loop of pith-tiny */
    int r = open_root(cfg, s);
    if (!r)
        r = check_nofile(&s->set);
    if (!r)
        r = check_reservations(&s->set);
    if (!r)
        r = bind_listeners(cfg, s);
    if (!r)
        r = check_files(&s->set, s);
    if (r)
        return r;
    sys_signal_ignore(SIGPIPE); /* a vanished client is an EPIPE, not a death */
    sys_sigmask_block(blocked, ARRAY_LEN(blocked), NULL);
    print_start_line(cfg, s);
    if (cfg->daemon && (r = sys_daemonize()) < 0)
        return fail("cannot become a daemon", "", r);
    if (s->set.pidfile && (r = sys_write_pidfile(s->set.pidfile, sys_getpid())) < 0)
        return fail("cannot write the pidfile ", s->set.pidfile, r);
    return master_run(s);
}

int main(int argc, char **argv)
{
    static struct config cfg;
    static struct server srv;
    char reason[256];
    if (argc > 1 && strcmp(argv[1], "compress") == 0) {
        put("pith: compress: not in pith-tiny (it needs zlib, brotli and zstd); "
            "use the full build\n");
        flush_to(2);
        return 2;
    }
    switch (config_parse(argc, argv, (unsigned)sys_cpu_count(), &cfg, reason, sizeof reason)) {
    case CONFIG_HELP: sys_write(1, config_usage(), strlen(config_usage())); return 0;
    case CONFIG_VERSION: sys_write(1, "pith " PITH_VERSION "\n", sizeof PITH_VERSION + 5); return 0;
    case CONFIG_USAGE:
        put("pith: ");
        put(reason);
        put("\n");
        flush_to(2);
        return 2;
    case CONFIG_RUN: break;
    }
    return start(&cfg, &srv);
}

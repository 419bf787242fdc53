/* SPDX-License-Identifier: MIT */
/*
 * main_router.c - pith-router's entry point (rt_raw.c's _start calls main):
 * the router profile's options (every other one exits 2, named), the
 * start-up (root, resolver probe, one listening socket shared by the
 * workers, the log, --daemon, --pidfile, the start line) and the master:
 * prefork workers, replaced when one dies, TERM/INT to drain and exit,
 * HUP/USR1 passed on to reopen the log. docs/DESIGN.md, "The router profile".
 */
#include "core/bytes.h"
#include "core/respawn.h"
#include "router/router.h"
#include "sys/sys.h"

#include <errno.h>
#include <limits.h>

/* The options, in the order of `names`; those before O_NO_LISTING take a
 * value. One string, not a table of pointers: fewer bytes. */
enum opt {
    O_PORT,
    O_ADDR,
    O_WORKERS,
    O_INDEX,
    O_MAX_AGE,
    O_LOG,
    O_LOG_MAX,
    O_PIDFILE,
    O_ROOT,
    O_T_HEADER,
    O_T_KEEPALIVE,
    O_T_SEND,
    O_NO_LISTING,
    O_DAEMON,
    O_QUIET,
    O_HELP,
    O_VERSION,
    O_COUNT
};
static const char names[] = "port\0addr\0workers\0index\0max-age\0log\0log-max\0pidfile\0root\0"
                            "timeout-header\0timeout-keepalive\0timeout-send\0no-listing\0"
                            "daemon\0quiet\0help\0version";
static const char briefs[O_COUNT] = "paw\0\0\0\0\0\0\0\0\0\0\0qhV";

static const char usage[] =
    "usage: pith-router [OPTIONS] [ROOT]   serve ROOT (default: .) over HTTP/1.1\n"
    "  -p, --port N  -a, --addr ADDR  -w, --workers N (1-16, default 4)\n"
    "  --index NAME  --no-listing  --max-age S  --timeout-header|-keepalive|-send S\n"
    "  --log FILE|-  --log-max KIB  --pidfile FILE  --daemon  -q  -h  -V\n"
    "examples:\n"
    "  pith-router -p 80 /www\n"
    "  pith-router --daemon --log /tmp/access.log --pidfile /run/pith.pid /www\n";

static const char version[] = "pith " PITH_VERSION " (router profile)\n";

static _Noreturn void fail(int code, const char *a, const char *b)
{
    router_say(a, b);
    sys_exit(code);
}

static uint64_t number(const char *flag, const char *v, uint64_t lo, uint64_t hi)
{
    uint64_t n;
    if (!u64_parse(span_make(v, cstr_len(v)), &n) || n < lo || n > hi)
        fail(2, flag, ": not a number in range");
    return n;
}

struct cmdline {
    const char *root, *addr, *pidfile;
    unsigned port, workers;
    bool daemon, quiet;
};

/* One option and its value; returns how many arguments it took. Messages
 * name the option by its long name ("-p x" is "--port"). */
static int option(struct cmdline *cl, const char *arg, const char *next)
{
    const char *v = NULL, *o = names;
    size_t n = 0;
    int k = -1;
    if (arg[1] == '-') {
        const char *name = arg + 2;
        n = mem_find(name, cstr_len(name), '=');
        for (int i = 0; i < O_COUNT; i++, o += cstr_len(o) + 1)
            if (n == cstr_len(o) && mem_eq(name, o, n))
                k = i;
        if (name[n])
            v = name + n + 1;
    } else {
        for (int i = 0; i < O_COUNT; i++)
            if (arg[1] == briefs[i])
                k = i;
        if (k >= 0 && arg[2]) /* "-p8080" */
            v = arg + 2;
    }
    if (k < 0)
        fail(2, arg, ": unknown option, or not in the router profile (the full build has it)");
    char flag[24] = "--";
    o = names;
    for (int i = 0; i < k; i++)
        o += cstr_len(o) + 1;
    mem_copy(flag + 2, o, cstr_len(o) + 1);
    arg = flag;
    int used = 1;
    bool takes = k < O_NO_LISTING;
    if (takes && !v) {
        if (!next)
            fail(2, arg, ": needs a value");
        v = next;
        used = 2;
    } else if (!takes && v) {
        fail(2, arg, ": takes no value");
    }
    switch (k) {
    case O_PORT: cl->port = (unsigned)number(arg, v, 0, 65535); break;
    case O_ADDR: cl->addr = v; break;
    case O_WORKERS: cl->workers = (unsigned)number(arg, v, 1, 16); break;
    case O_INDEX: /* as config.c: a plain file name */
        if (!v[0] || v[0] == '.' || mem_find(v, cstr_len(v), '/') < cstr_len(v))
            fail(2, arg, ": must be a plain file name");
        router.index = v;
        break;
    case O_NO_LISTING: router.listing = false; break;
    case O_MAX_AGE: {
        uint64_t s = number(arg, v, 0, 1000000000);
        struct buf b = buf_make(router.cache_control, sizeof router.cache_control - 1);
        buf_put_cstr(&b, s ? "max-age=" : "no-cache");
        if (s)
            buf_put_u64(&b, s);
        router.cache_control[b.len] = '\0';
        break;
    }
    case O_LOG: router.log_path = v; break;
    case O_LOG_MAX: router.log_max = number(arg, v, 1, 1u << 30) * 1024; break;
    case O_PIDFILE: cl->pidfile = v; break;
    case O_DAEMON: cl->daemon = true; break;
    case O_QUIET: cl->quiet = true; break;
    case O_HELP: sys_write(1, usage, sizeof usage - 1); sys_exit(0);
    case O_VERSION: sys_write(1, version, sizeof version - 1); sys_exit(0);
    case O_ROOT: cl->root = v; break;
    default: { /* the timeouts */
        int *t = k == O_T_HEADER      ? &router.t_header
                 : k == O_T_KEEPALIVE ? &router.t_keepalive
                                      : &router.t_send;
        *t = (int)number(arg, v, 1, 3600) * 1000;
    }
    }
    return used;
}

static void parse_args(struct cmdline *cl, int argc, char **argv)
{
    for (int i = 1; i < argc;) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1]) {
            i += option(cl, a, i + 1 < argc ? argv[i + 1] : NULL);
            continue;
        }
        if (cl->root)
            fail(2, a, ": one ROOT only");
        cl->root = a;
        i++;
    }
}

/* The listening socket; *host gets the address as the start line shows it. */
static int listen_on(const struct cmdline *cl, const char **host, const char **addr_out)
{
    struct sockaddr_storage ss;
    socklen_t len;
    const char *addr = cl->addr ? cl->addr : "::";
    if (sys_parse_addr(addr, cl->port, &ss, &len) < 0)
        fail(2, addr, ": --addr wants a numeric IPv4 or IPv6 address");
    int fd = sys_listen_tcp(&ss, len, 511, false);
    *host = ss.ss_family == AF_INET6 && addr[0] != '[' ? "[" : "";
    if (fd < 0 && !cl->addr) { /* no IPv6 here: IPv4 alone */
        *host = "";
        addr = "0.0.0.0";
        sys_parse_addr(addr, cl->port, &ss, &len);
        fd = sys_listen_tcp(&ss, len, 511, false);
    }
    *addr_out = addr;
    if (fd < 0)
        fail(1, addr, fd == -EADDRINUSE ? ": the port is in use" : ": cannot listen there");
    return fd;
}

/* ---- the master -------------------------------------------------------------------- */

/* The workers, and the backoff of those that die early (core/respawn.h,
 * the full build's rule). */
static int pids[16];
static int64_t started_ms[16], restart_ms[16]; /* restart_ms 0: none pending */
static int32_t backoff[16];
static unsigned nworkers;

static void spawn(unsigned i)
{
    restart_ms[i] = 0;
    started_ms[i] = sys_now_ms();
    int pid = sys_fork();
    if (pid == 0)
        router_worker();
    pids[i] = pid;
}

static void signal_workers(int sig)
{
    for (unsigned i = 0; i < nworkers; i++)
        if (pids[i] > 0)
            sys_kill(pids[i], sig);
}

/* "worker I (pid P) was killed by signal S; starting a new one in D s" */
static void report(unsigned i, int pid, int st, unsigned delay)
{
    char line[128];
    struct buf b = buf_make(line, sizeof line - 1);
    int code = sys_exit_status(st);
    buf_put_cstr(&b, "worker ");
    buf_put_u64(&b, i);
    buf_put_cstr(&b, " (pid ");
    buf_put_u64(&b, (uint64_t)pid);
    buf_put_cstr(&b, code < 0 ? ") was killed by signal " : ") exited with status ");
    buf_put_u64(&b, (uint64_t)(code < 0 ? -code : code));
    buf_put_cstr(&b, "; starting a new one in ");
    buf_put_u64(&b, delay);
    line[b.len] = '\0';
    router_say(line, " s");
}

/* Reaps what exited and schedules replacements. Returns how many workers
 * are left. */
static unsigned reap(bool stopping)
{
    int st, pid;
    int64_t now = sys_now_ms();
    while ((pid = sys_waitpid_any(&st)) > 0) {
        for (unsigned i = 0; i < nworkers; i++) {
            if (pids[i] != pid)
                continue;
            pids[i] = 0;
            if (stopping)
                break;
            int32_t delay = respawn_delay(&backoff[i], now - started_ms[i]);
            report(i, pid, st, (unsigned)delay / 1000);
            restart_ms[i] = now + delay + 1; /* + 1: never 0 */
        }
    }
    unsigned left = 0;
    for (unsigned i = 0; i < nworkers; i++)
        left += pids[i] > 0;
    return left;
}

/* Starts the replacements that are due; returns the ms until the next. */
static int restart_due(void)
{
    int64_t now = sys_now_ms(), next = 60000;
    for (unsigned i = 0; i < nworkers; i++) {
        if (!restart_ms[i])
            continue;
        if (restart_ms[i] <= now)
            spawn(i);
        else if (restart_ms[i] - now < next)
            next = restart_ms[i] - now;
    }
    return (int)next;
}

static _Noreturn void master(const char *pidfile)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGCHLD, SIGHUP, SIGUSR1};
    bool stopping = false;
    for (;;) {
        int sig = sys_sigwait(sigs, ARRAY_LEN(sigs), stopping ? 60000 : restart_due());
        unsigned left = reap(stopping);
        if (stopping && !left)
            break;
        if (sig == SIGHUP || sig == SIGUSR1)
            signal_workers(sig);
        if (sig == SIGTERM || sig == SIGINT) {
            signal_workers(stopping ? SIGKILL : SIGTERM); /* a second one: at once */
            stopping = true;
            if (!left) /* every slot waiting for its restart: nothing to drain */
                break;
        }
    }
    if (pidfile)
        sys_unlink(pidfile);
    sys_exit(0);
}

int main(int argc, char **argv)
{
    /* The root's path and the start line in memory of their own, given back
     * before the workers are forked: nothing of them in a worker's pages. */
    enum { LINE_CAP = PATH_MAX + 200 };
    char *root = sys_map(PATH_MAX + 1 + LINE_CAP), *line = root + PATH_MAX + 1;
    const char *bracket, *addr;
    struct cmdline cl = {.port = 8080, .workers = 4};
    router.index = "index.html";
    router.listing = true;
    router.t_header = 15000;
    router.t_keepalive = 5000;
    router.t_send = 30000;
    router.log_max = 256 * 1024;
    mem_copy(router.cache_control, "max-age=60", 11);
    /* Blocked from the start (a TERM before the workers exist still ends
     * the master with 0); workers wait with the mask from before. */
    static const int sigs[] = {SIGTERM, SIGINT, SIGCHLD, SIGHUP, SIGUSR1};
    sys_sigmask_block(sigs, ARRAY_LEN(sigs), &router_unblocked);
    parse_args(&cl, argc, argv);
    if (!root || sys_realpath(cl.root ? cl.root : ".", root, PATH_MAX + 1) < 0 ||
        (router.root_fd = sys_open_dir(root)) < 0)
        fail(1, cl.root ? cl.root : ".", ": cannot open the root directory");
    const char *force = sys_getenv("PITH_RESOLVE");
    router.resolve = force && force[0] == 'w' ? RESOLVE_WALK : resolve_probe(router.root_fd);
    router.listen_fd = listen_on(&cl, &bracket, &addr);
    /* The connection cap from the descriptor limit, raised towards what
     * ROUTER_CONNS need where the hard limit allows: a worker at its cap
     * never runs out of descriptors for its connections' files. */
    uint64_t nofile = 0, hard;
    sys_nofile_limit(ROUTER_FDS_KEPT + 2 * ROUTER_CONNS, &nofile, &hard);
    router.max_conns = nofile >= ROUTER_FDS_KEPT + 2 * ROUTER_CONNS ? ROUTER_CONNS
                       : nofile >= ROUTER_FDS_KEPT + 2 ? (int)(nofile - ROUTER_FDS_KEPT) / 2
                                                       : 1;
    if (router.log_path && !(router.log_path[0] == '-' && !router.log_path[1])) {
        int fd = sys_open_log(router.log_path);
        if (fd < 0)
            fail(1, router.log_path, ": cannot open the log");
        sys_close(fd);
    }
    if (cl.pidfile && sys_write_pidfile(cl.pidfile, -1) < 0)
        fail(1, cl.pidfile, ": cannot write the pidfile");
    if (!cl.quiet) {
        struct buf b = buf_make(line, LINE_CAP);
        buf_put_cstr(&b, "pith " PITH_VERSION " serving ");
        buf_put_cstr(&b, root);
        buf_put_cstr(&b, " on http://");
        buf_put_cstr(&b, bracket);
        buf_put_cstr(&b, addr);
        buf_put_cstr(&b, bracket[0] ? "]:" : ":");
        buf_put_u64(&b, (uint64_t)sys_local_port(router.listen_fd));
        buf_put_cstr(&b, "/ (");
        buf_put_u64(&b, cl.workers);
        buf_put_cstr(&b, cl.workers == 1 ? " worker, epoll, " : " workers, epoll, ");
        buf_put_cstr(&b, resolve_method_name(router.resolve));
        buf_put_cstr(&b, ", router)\n");
        sys_write(2, line, b.len);
    }
    sys_unmap(root, PATH_MAX + 1 + LINE_CAP);
    /* Unlike the full build's, the router's daemon writes its pidfile
     * itself, after its parent returned (a reader at that moment may find
     * none yet): the parent's writing it cost the mips worker a page over
     * its 64 KiB budget (docs/DESIGN.md, the router profile). */
    if (cl.daemon && sys_daemonize(NULL) < 0)
        fail(1, "--daemon", ": cannot detach");
    if (cl.pidfile)
        sys_write_pidfile(cl.pidfile, sys_getpid());
    sys_signal_ignore(SIGPIPE);
    nworkers = cl.workers;
    router_master_pid = sys_getpid();
    for (unsigned i = 0; i < nworkers; i++)
        spawn(i);
    master(cl.pidfile);
}

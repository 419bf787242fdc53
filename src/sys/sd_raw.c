/* SPDX-License-Identifier: MIT */
/*
 * sd_raw.c - sd.h over raw system calls for pith-tiny: socket activation,
 * readiness notification and the upgrade's exec, as sd.c does them over
 * glibc, with the same checks and results. The environment is the one
 * _start found (rt_raw.c); a variable is removed by closing up the array
 * in place, and the exec builds the new environment on the stack.
 */
#include "sys/sd.h"

#include "core/bytes.h"
#include "sys/arch/arch.h"
#include "sys/sys.h"

extern char **raw_envp; /* rt_raw.c */

#define SD_ENV_MAX 512 /* variables passed on by an upgrade's exec */

/* A whole decimal in [0, max], or -1. */
static long parse_decimal(const char *s, long max)
{
    long v = 0;
    if (!s || !*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > max / 10)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v <= max ? v : -1;
}

static bool is_var(const char *entry, const char *name)
{
    size_t n = strlen(name);
    return mem_eq(entry, name, n) && entry[n] == '=';
}

static void unset_env(const char *name)
{
    char **w = raw_envp;
    for (char **e = raw_envp; e && *e; e++)
        if (!is_var(*e, name))
            *w++ = *e;
    if (w)
        *w = 0;
}

static void unset_listen_env(void)
{
    unset_env("LISTEN_PID");
    unset_env("LISTEN_FDS");
    unset_env("LISTEN_FDNAMES");
}

static int sockopt_int(int fd, int name, int *v)
{
    socklen_t len = sizeof *v;
    return (int)SC5(getsockopt, fd, SOL_SOCKET, name, v, &len);
}

/* Checks fd is a listening stream socket and makes it CLOEXEC and
 * non-blocking (systemd passes blocking sockets; a worker must never
 * block in accept while another took the connection). */
static int adopt(int fd)
{
    int type = 0, listening = 0;
    int r = sockopt_int(fd, SO_TYPE, &type);
    if (r < 0)
        return r == -EBADF ? -EBADF : -ENOTSOCK;
    if (type != SOCK_STREAM || sockopt_int(fd, SO_ACCEPTCONN, &listening) < 0 || !listening)
        return -ENOTSOCK;
    long fl = SC2(fcntl, fd, F_GETFL);
    if (fl < 0 || (fl = SC3(fcntl, fd, F_SETFL, fl | O_NONBLOCK)) < 0 ||
        (fl = SC3(fcntl, fd, F_SETFD, FD_CLOEXEC)) < 0)
        return (int)fl;
    return 0;
}

/* The i-th ':'-separated name of names into out (cut to SD_NAME_MAX - 1). */
static void nth_name(const char *names, unsigned i, char *out)
{
    out[0] = '\0';
    for (; names && i; names++)
        if (*names == ':')
            i--;
        else if (!*names)
            return;
    if (!names)
        return;
    size_t n = strcspn(names, ":");
    if (n >= SD_NAME_MAX)
        n = SD_NAME_MAX - 1;
    memcpy(out, names, n);
    out[n] = '\0';
}

int sd_listen_fds_take(struct sd_listener *out, unsigned cap)
{
    const char *pid_text = sys_getenv("LISTEN_PID"), *n_text = sys_getenv("LISTEN_FDS");
    const char *names = sys_getenv("LISTEN_FDNAMES");
    long n = 0;
    int r = 0;
    if (n_text) {
        long pid = parse_decimal(pid_text, 0x7fffffff);
        n = parse_decimal(n_text, 1 << 20);
        if (pid < 0 || n < 0)
            r = -EINVAL;
        else if (pid != (long)sys_getpid()) /* meant for another process */
            n = 0;
        else if (n > (long)cap)
            r = -E2BIG;
    }
    for (long i = 0; r == 0 && i < n; i++) {
        out[i].fd = SD_LISTEN_FDS_START + (int)i;
        nth_name(names, (unsigned)i, out[i].name);
        r = adopt(out[i].fd);
    }
    /* The names point into the environment: read before it is closed up. */
    unset_listen_env();
    return r < 0 ? r : (int)n;
}

int sd_notify_send(const char *msg)
{
    const char *path = sys_getenv("NOTIFY_SOCKET");
    if (!path || !*path)
        return 0;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || n >= sizeof sa.sun_path)
        return -EINVAL;
    memcpy(sa.sun_path, path, n);
    if (path[0] == '@')
        sa.sun_path[0] = '\0'; /* an abstract name: no NUL terminator counts */
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '/'));
    int fd = (int)SC3(socket, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fd;
    long r = SC6(sendto, fd, msg, strlen(msg), MSG_NOSIGNAL, &sa, len);
    sys_close(fd);
    return r < 0 ? (int)r : 0;
}

/* The variables the new process gets from us: an older copy in our own
 * environment (this process came from an upgrade too) must not shadow them. */
static bool replaced_var(const char *s, const char *extra)
{
    size_t n = extra ? strcspn(extra, "=") + 1 : 0;
    return is_var(s, "LISTEN_PID") || is_var(s, "LISTEN_FDS") || is_var(s, "LISTEN_FDNAMES") ||
           (extra && mem_eq(s, extra, n));
}

int sd_exec_with_listeners(const char *path, char *const argv[], const int *fds,
                           const char *const *names, unsigned n, int keep, const char *extra)
{
    int high[SD_LISTEN_MAX];
    if (n > SD_LISTEN_MAX)
        return -E2BIG;
    /* Out of the way first, so moving one onto 3+i never overwrites
     * another that still waits to move. */
    for (unsigned i = 0; i < n; i++)
        if ((high[i] = (int)SC3(fcntl, fds[i], F_DUPFD_CLOEXEC, 64)) < 0)
            return high[i];
    int kept = keep < 0 ? -1 : (int)SC3(fcntl, keep, F_DUPFD_CLOEXEC, 64);
    if (keep >= 0 && kept < 0)
        return kept;
    for (unsigned i = 0; i < n; i++) {
        int r = sys_dup2(high[i], SD_LISTEN_FDS_START + (int)i); /* clears CLOEXEC */
        if (r < 0)
            return r;
    }
    if (kept >= 0) {
        int r = sys_dup2(kept, SD_LISTEN_FDS_START + (int)n);
        if (r < 0)
            return r;
    }
    static char fds_var[32], pid_var[32], names_var[16 + SD_LISTEN_MAX * SD_NAME_MAX];
    struct buf b = buf_make(fds_var, sizeof fds_var - 1);
    buf_put_cstr(&b, "LISTEN_FDS=");
    buf_put_u64(&b, n);
    fds_var[b.len] = '\0';
    b = buf_make(pid_var, sizeof pid_var - 1);
    buf_put_cstr(&b, "LISTEN_PID=");
    buf_put_u64(&b, (uint64_t)sys_getpid());
    pid_var[b.len] = '\0';
    b = buf_make(names_var, sizeof names_var - 1);
    buf_put_cstr(&b, "LISTEN_FDNAMES=");
    for (unsigned i = 0; i < n; i++) {
        if (i)
            buf_put_char(&b, ':');
        buf_put_cstr(&b, names[i]);
    }
    names_var[b.len] = '\0';
    char *env[SD_ENV_MAX + 5];
    size_t k = 0;
    for (char **e = raw_envp; e && *e; e++)
        if (!replaced_var(*e, extra)) {
            if (k == SD_ENV_MAX)
                return -E2BIG;
            env[k++] = *e;
        }
    env[k++] = fds_var;
    env[k++] = pid_var;
    env[k++] = names_var;
    if (extra)
        env[k++] = (char *)extra;
    env[k] = 0;
    sigset_t none = {{0}};
    sys_sigmask_set(&none);
    return (int)SC3(execve, path, argv, env);
}

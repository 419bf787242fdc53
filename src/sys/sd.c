/* SPDX-License-Identifier: MIT */
/*
 * sd.c - socket activation and readiness notification over glibc, as
 * systemd documents them (sd_listen_fds(3), sd_notify(3)); see sd.h. Only
 * start-up and state changes come here, never a request.
 */
#include "sys/sd.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

extern char **environ;

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

static void unset_listen_env(void)
{
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
}

/* Checks fd is a listening stream socket and makes it CLOEXEC and
 * non-blocking (systemd passes blocking sockets; a worker must never
 * block in accept while another took the connection). */
static int adopt(int fd)
{
    int type = 0, listening = 0;
    socklen_t len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0)
        return errno == EBADF ? -EBADF : -ENOTSOCK;
    len = sizeof listening;
    if (type != SOCK_STREAM || getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) < 0 ||
        !listening)
        return -ENOTSOCK;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
        return -errno;
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
    const char *pid_text = getenv("LISTEN_PID"), *n_text = getenv("LISTEN_FDS");
    const char *names = getenv("LISTEN_FDNAMES");
    if (!n_text) {
        unset_listen_env();
        return 0;
    }
    long pid = parse_decimal(pid_text, 0x7fffffff), n = parse_decimal(n_text, 1 << 20);
    if (pid < 0 || n < 0) {
        unset_listen_env();
        return -EINVAL;
    }
    /* The variables were meant for another process (an ancestor that
     * did not remove them): the descriptors are not ours to take. */
    if (pid != (long)getpid()) {
        unset_listen_env();
        return 0;
    }
    if (n > (long)cap) {
        unset_listen_env();
        return -E2BIG;
    }
    for (long i = 0; i < n; i++) {
        out[i].fd = SD_LISTEN_FDS_START + (int)i;
        nth_name(names, (unsigned)i, out[i].name);
        int r = adopt(out[i].fd);
        if (r < 0) {
            unset_listen_env();
            return r;
        }
    }
    unset_listen_env();
    return (int)n;
}

int sd_notify_send(const char *msg)
{
    const char *path = getenv("NOTIFY_SOCKET");
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
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    ssize_t r = sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
    int e = errno;
    close(fd);
    return r < 0 ? -e : 0;
}

/* The variables the new process gets from us: an older copy in our own
 * environment (this process came from an upgrade too) must not shadow them. */
static bool replaced_var(const char *s, const char *extra)
{
    size_t n = extra ? strcspn(extra, "=") + 1 : 0;
    return strncmp(s, "LISTEN_PID=", 11) == 0 || strncmp(s, "LISTEN_FDS=", 11) == 0 ||
           strncmp(s, "LISTEN_FDNAMES=", 15) == 0 || (extra && strncmp(s, extra, n) == 0);
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
        if ((high[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 64)) < 0)
            return -errno;
    int kept = keep < 0 ? -1 : fcntl(keep, F_DUPFD_CLOEXEC, 64);
    if (keep >= 0 && kept < 0)
        return -errno;
    for (unsigned i = 0; i < n; i++)
        if (dup2(high[i], SD_LISTEN_FDS_START + (int)i) < 0) /* dup2 clears CLOEXEC */
            return -errno;
    if (kept >= 0 && dup2(kept, SD_LISTEN_FDS_START + (int)n) < 0)
        return -errno;
    static char fds_var[32], pid_var[32], names_var[16 + SD_LISTEN_MAX * SD_NAME_MAX];
    snprintf(fds_var, sizeof fds_var, "LISTEN_FDS=%u", n);
    snprintf(pid_var, sizeof pid_var, "LISTEN_PID=%d", (int)getpid());
    size_t off = (size_t)snprintf(names_var, sizeof names_var, "LISTEN_FDNAMES=");
    for (unsigned i = 0; i < n; i++)
        off += (size_t)snprintf(names_var + off, sizeof names_var - off, "%s%s", i ? ":" : "",
                                names[i]);
    size_t count = 0;
    while (environ[count])
        count++;
    char **env = calloc(count + 5, sizeof *env);
    if (!env)
        return -ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < count; i++)
        if (!replaced_var(environ[i], extra))
            env[k++] = environ[i];
    env[k++] = fds_var;
    env[k++] = pid_var;
    env[k++] = names_var;
    if (extra)
        env[k++] = (char *)extra;
    env[k] = NULL;
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(path, argv, env);
    int e = errno;
    free(env);
    return -e;
}

/* SPDX-License-Identifier: MIT */
/*
 * sys.h - the only door to the kernel. Every function returns a value >= 0 on
 * success or -errno on failure and never leaves errno for a caller to read
 * (libuv's UV__ERR idiom). The full build implements it over glibc
 * (sys_libc_*.c); a freestanding build can implement the same names over raw
 * system calls. Server code includes this header, never a libc one for I/O.
 */
#ifndef PITH_SYS_H
#define PITH_SYS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

/* What pith needs of a file's metadata; filled from the kernel's stat. */
struct sys_stat {
    uint64_t dev;
    uint64_t ino;
    uint64_t size;
    uint32_t mode; /* S_IFMT bits and permissions */
    int64_t mtime_sec;
    uint32_t mtime_nsec;
};

enum sys_file_type {
    SYS_FILE_REGULAR,
    SYS_FILE_DIR,
    SYS_FILE_LINK,
    SYS_FILE_OTHER,   /* fifo, socket, device */
    SYS_FILE_UNKNOWN, /* getdents could not tell (some filesystems) */
};

enum sys_file_type sys_file_type(const struct sys_stat *st);

/* ---- files ---------------------------------------------------------------- */
int sys_open_dir(const char *path);                     /* O_DIRECTORY|O_CLOEXEC */
int sys_openat(int dirfd, const char *name, int flags); /* adds O_CLOEXEC */
int sys_openat2_beneath(int dirfd, const char *path, int flags, bool no_symlinks);
int sys_close(int fd);
int sys_fstat(int fd, struct sys_stat *st);
int sys_fstatat(int dirfd, const char *name, struct sys_stat *st, bool follow);
ssize_t sys_readlinkat(int dirfd, const char *name, char *out, size_t cap);
ssize_t sys_getdents(int fd, void *buf, size_t n);
int sys_rewind_dir(int fd);
ssize_t sys_read(int fd, void *p, size_t n);
ssize_t sys_pread(int fd, void *p, size_t n, uint64_t off);
ssize_t sys_write(int fd, const void *p, size_t n);
ssize_t sys_writev(int fd, const struct iovec *iov, int n);
int sys_open_log(const char *path); /* append, create 0644 */
/* The same for name beneath dirfd (a log's directory, kept open so that a
 * reopen works after a chroot and under Landlock). */
int sys_open_log_at(int dirfd, const char *name);
int sys_dup2(int from, int to);
/* Makes `to` refer to what `from` does, close-on-exec (dup3). */
int sys_dup_onto(int from, int to);
/* Sets fd's close-on-exec flag (one inherited across an exec). */
int sys_set_cloexec(int fd);
int sys_unlink(const char *path);

/* One directory entry from a getdents buffer: returns the next offset, or 0
 * at the end of the n valid bytes. */
size_t sys_dirent_next(const void *buf, size_t n, size_t off, const char **name,
                       enum sys_file_type *type);

/* ---- sockets -------------------------------------------------------------- */
ssize_t sys_send(int fd, const void *p, size_t n, bool more);
/* Gathers iov[0..n) into one send; `more` sets MSG_MORE. */
ssize_t sys_sendv(int fd, const struct iovec *iov, int n, bool more);
ssize_t sys_sendfile(int out_fd, int in_fd, uint64_t *off, size_t n);
ssize_t sys_recv(int fd, void *p, size_t n);
int sys_accept(int lfd, struct sockaddr_storage *peer); /* NONBLOCK|CLOEXEC */
/* A non-blocking listening socket; `share` sets SO_REUSEPORT (one per
 * worker), IPv6 sockets are dual-stack (IPV6_V6ONLY off). */
int sys_listen_tcp(const struct sockaddr_storage *addr, socklen_t len, int backlog, bool share);
int sys_local_port(int fd);
int sys_peer_addr(int fd, struct sockaddr_storage *peer);
int sys_set_nodelay(int fd);
/* TCP_CORK on or off: writes made while it is on leave in full segments,
 * and turning it off sends the rest at once (HTTPS batches its records).
 * Only the full build defines it: pith-tiny has no HTTPS. */
int sys_set_cork(int fd, bool on);
/* TCP_NOTSENT_LOWAT: the socket takes more bytes (and polls writable) only
 * while fewer than `bytes` of what it holds are unsent. Full build only. */
int sys_set_notsent_lowat(int fd, int bytes);
int sys_shutdown_write(int fd);
int sys_set_linger_reset(int fd);

/* ---- events --------------------------------------------------------------- */
int sys_epoll_create(void);
int sys_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);
int sys_epoll_wait(int epfd, struct epoll_event *ev, int n, int timeout_ms,
                   const sigset_t *unblocked);

/* ---- time ----------------------------------------------------------------- */
int64_t sys_now_ms(void);   /* monotonic milliseconds */
int64_t sys_now_real(void); /* seconds since the epoch */
int64_t sys_now_us(void);   /* monotonic microseconds (the JSON log's durations) */

/* ---- processes and signals ------------------------------------------------ */
typedef void (*sys_signal_handler)(int);
int sys_signal(int sig, sys_signal_handler fn); /* SA_RESTART off: we want EINTR */
int sys_signal_ignore(int sig);
int sys_signal_default(int sig);
int sys_sigmask_block(const int *sigs, size_t n, sigset_t *old);
int sys_sigmask_set(const sigset_t *set);
/* A signalfd for sigs (which the caller has blocked); read one with
 * sys_signalfd_read: the signal number, or -EAGAIN when none is pending. */
int sys_signalfd(const int *sigs, size_t n);
int sys_signalfd_read(int fd);
/* Waits up to timeout_ms for one of sigs (blocked); returns it, or -EAGAIN. */
int sys_sigwait(const int *sigs, size_t n, int timeout_ms);
int sys_fork(void);
int sys_waitpid_any(int *status); /* non-blocking; 0 when nothing exited */
int sys_kill(int pid, int sig);
int sys_getpid(void);
/* Asks the kernel to send sig to this process when its parent dies. */
int sys_die_with_parent(int sig);
int sys_getppid(void);
_Noreturn void sys_exit(int code);
/* Raises RLIMIT_NOFILE's soft limit to `need` where the hard limit allows;
 * *cur gets the soft limit now in force, *max the hard one. */
int sys_nofile_limit(uint64_t need, uint64_t *cur, uint64_t *max);
int sys_cpu_count(void);

/* Splits a waitpid status: returns the exit code, or -signal if killed. */
int sys_exit_status(int status);

/* ---- start-up helpers (not on any request path) ---------------------------- */
/* Canonical absolute path of `path` into out[cap]. */
int sys_realpath(const char *path, char *out, size_t cap);
/* A numeric IPv4/IPv6 address ("::1", "[::1]", "127.0.0.1") and a port into
 * *addr; returns 0 or -EINVAL. */
int sys_parse_addr(const char *text, unsigned port, struct sockaddr_storage *addr, socklen_t *len);
/* Writes "[addr]:port" or "addr:port" style text for URLs. */
int sys_addr_text(const struct sockaddr_storage *addr, char *out, size_t cap);
/* Drops to the user's uid, gid and supplementary groups (with group: that
 * group's gid, and it added to the user's supplementary groups, as nginx's
 * "user NAME GROUP"), after a chroot into chroot_dir when not NULL. 0,
 * -ENOENT (no such user or group), -EPERM (not root), or another -errno. */
int sys_drop_privileges(const char *user, const char *group, const char *chroot_dir);
/* The group's id: 0, -ENOENT (no such group), or -errno. */
int sys_group_id(const char *group, unsigned *gid);
/* The user's uid and primary gid: 0, -ENOENT (no such user), or -errno. */
int sys_user_ids(const char *user, unsigned *uid, unsigned *gid);
int sys_fchown(int fd, unsigned uid, unsigned gid);
/* 0 when user exists and we are root; -EPERM (not root), -ENOENT. */
int sys_check_user(const char *user);
/* Detaches: forks, starts a session, points stdio at /dev/null. The parent
 * writes the child's pid to pidfile (when not NULL) and only then exits 0,
 * so whoever waits for it (systemd's Type=forking, a script) finds the file
 * complete; the child waits for that. Returns 0 in the child, or -errno in
 * the parent (the child then exits 1). */
int sys_daemonize(const char *pidfile);
/* Writes "<pid>\n" to path (0644) through path.tmp and a rename, so that a
 * reader finds the whole line or no file. With pid < 0 it only checks that
 * path can be written, and leaves no new file behind. */
int sys_write_pidfile(const char *path, int pid);
bool sys_is_root(void);
/* n bytes from the kernel's CSPRNG (getrandom). */
int sys_random(void *p, size_t n);
const char *sys_getenv(const char *name);

/* Reserves n bytes of zeroed, private memory (not touched until used). */
void *sys_map(size_t n);
/* Reserves n bytes of zeroed memory shared with the children forked after
 * (MAP_SHARED | MAP_ANONYMOUS): the --status counters, the TLS ticket keys
 * and the reloaded certificates the master hands to its workers. */
void *sys_map_shared(size_t n);
/* Makes [p, p + n) of a mapping read-only (mprotect PROT_READ); 0 or
 * -errno. For good in a process whose seccomp filter then allows no
 * mprotect (a worker's, lockdown.c): the ACME challenge table (issue 35).
 * The full build only. */
int sys_map_readonly(void *p, size_t n);
/* Gives back a sys_map() region (NULL: nothing). */
void sys_unmap(void *p, size_t n);
/* Gives the pages wholly inside [p, p + n) of a sys_map() region back to the
 * kernel (MADV_DONTNEED): they count in no resident size until touched
 * again, and then read as zeros. */
void sys_release(void *p, size_t n);
/* Gives the free pages of malloc's heap back to the kernel (malloc_trim:
 * what the libraries held for a burst of connections now gone). Nothing in
 * pith-tiny, which has no heap. */
void sys_heap_trim(void);

/* ---- production: Unix sockets, upgrades (issue 13, systemd) ----------------- */
/* A non-blocking listening Unix socket at path, mode `mode`, owned by
 * uid:gid (-1: unchanged). A file already at path is replaced only when it
 * is a socket nobody listens on (a stale one): -EADDRINUSE when a server
 * answers there, -EEXIST when it is not a socket. */
int sys_listen_unix(const char *path, int backlog, unsigned mode, int uid, int gid);
/* What sys_listen_unix would find at path: 0 free (or stale), -EADDRINUSE,
 * -EEXIST (not a socket), or another -errno (e.g. the directory is missing). */
int sys_unix_path_free(const char *path);
/* The socket's own address (getsockname). */
int sys_local_addr(int fd, struct sockaddr_storage *addr, socklen_t *len);
/* 1 when SO_REUSEPORT is set on fd, 0 when not, or -errno. */
int sys_is_reuseport(int fd);
/* This program's path (/proc/self/exe) into out[cap]: an upgrade executes
 * whatever file is at this path then. */
int sys_exe_path(char *out, size_t cap);
int sys_rename(const char *from, const char *to);
/* An exclusive flock(2) on fd's file (waits for it), or its release. */
int sys_lock(int fd, bool on);
/* "USER" or "USER:GROUP" to ids. 0, -ENOENT (no such user or group). */
int sys_owner_ids(const char *spec, unsigned *uid, unsigned *gid);
/* A pipe (both ends CLOEXEC, the read end non-blocking) whose read end
 * raises SIGIO in this process when bytes arrive: workers report on it. */
int sys_pipe_notify(int fds[2]);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * resolve.c - open-beneath for both strategies described in resolve.h.
 *
 * The walk keeps a stack of directory fds from the root down to the current
 * directory, so ".." inside a followed link pops one level and can never go
 * above the root (the stack's bottom), whatever the link says. A link's
 * target is spliced in front of the components still to walk, as the kernel
 * does, with the kernel's limit of 40 links per lookup.
 */
#include "sys/resolve.h"

#include "core/bytes.h"
#include "sys/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>

#define OPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY)
#define MAX_LINKS  40  /* the kernel's MAXSYMLINKS */
#define MAX_DEPTH  256 /* directory levels below the root */

enum resolve_method resolve_probe(int root_fd)
{
    int fd = sys_openat2_beneath(root_fd, ".", OPEN_FLAGS | O_DIRECTORY, true);
    if (fd < 0)
        return RESOLVE_WALK;
    sys_close(fd);
    return RESOLVE_OPENAT2;
}

const char *resolve_method_name(enum resolve_method m)
{
    return m == RESOLVE_OPENAT2 ? "openat2" : "walk";
}

struct walk {
    int stack[MAX_DEPTH + 1]; /* stack[0] is the root, not owned */
    int depth;
    int links;
    char path[2 * PATH_MAX]; /* what is left to walk, NUL-terminated */
};

static void walk_release(struct walk *w)
{
    for (int i = w->depth; i > 0; i--)
        sys_close(w->stack[i]);
    w->depth = 0;
}

/* Replaces w->path with link target + "/" + rest. */
static int splice_link(struct walk *w, int dirfd, const char *name, const char *rest)
{
    char target[PATH_MAX];
    ssize_t n = sys_readlinkat(dirfd, name, target, sizeof target);
    if (n < 0)
        return (int)n;
    if ((size_t)n >= sizeof target)
        return -ENAMETOOLONG;
    if (n == 0 || target[0] == '/')
        return -EXDEV; /* absolute targets are outside by definition */
    size_t rest_len = strlen(rest);
    if ((size_t)n + 1 + rest_len + 1 > sizeof w->path)
        return -ENAMETOOLONG;
    memmove(w->path + n + 1, rest, rest_len + 1);
    memcpy(w->path, target, (size_t)n);
    w->path[n] = rest_len ? '/' : '\0';
    return 0;
}

/* Takes the next component off w->path into comp (NAME_MAX + 1 bytes).
 * Returns 1, 0 when the path is empty, or -ENAMETOOLONG for a component no
 * file can have, checked before a byte is copied. */
static int next_component(struct walk *w, char *comp, const char **rest)
{
    char *p = w->path;
    while (*p == '/')
        p++;
    if (!*p)
        return 0;
    size_t n = strcspn(p, "/");
    if (n > NAME_MAX)
        return -ENAMETOOLONG;
    memcpy(comp, p, n);
    comp[n] = '\0';
    *rest = p + n;
    while (**rest == '/')
        (*rest)++;
    return 1;
}

/* One component at the top of the stack. Returns 1 to go on, an fd >= 0
 * via *out for the final open, or -errno. */
static int walk_step(struct walk *w, const char *comp, const char *rest, bool follow,
                     int final_flags, int *out)
{
    int dirfd = w->stack[w->depth];
    bool last = *rest == '\0';
    if (strcmp(comp, ".") == 0)
        return 1;
    if (strcmp(comp, "..") == 0) {
        if (w->depth == 0)
            return -EXDEV;
        sys_close(w->stack[w->depth--]);
        return 1;
    }
    struct sys_stat st;
    int r = sys_fstatat(dirfd, comp, &st, false);
    if (r < 0)
        return r;
    if (sys_file_type(&st) == SYS_FILE_LINK) {
        if (!follow)
            return -ELOOP;
        if (++w->links > MAX_LINKS)
            return -ELOOP;
        r = splice_link(w, dirfd, comp, rest);
        return r < 0 ? r : 1;
    }
    /* O_NOFOLLOW: if comp became a link since fstatat, fail rather than
     * follow it (ELOOP), closing the check-then-open race. */
    int fd = sys_openat(dirfd, comp,
                        last ? final_flags | O_NOFOLLOW : O_PATH | O_DIRECTORY | O_NOFOLLOW);
    if (fd < 0)
        return fd;
    if (last) {
        *out = fd;
        return 0;
    }
    if (w->depth == MAX_DEPTH) {
        sys_close(fd);
        return -ENAMETOOLONG;
    }
    w->stack[++w->depth] = fd;
    return 1;
}

static int resolve_walk(int root_fd, const char *path, bool follow, int final_flags)
{
    struct walk w;
    w.stack[0] = root_fd;
    w.depth = 0;
    w.links = 0;
    size_t n = strlen(path);
    if (n >= sizeof w.path)
        return -ENAMETOOLONG;
    memcpy(w.path, path, n + 1);
    char comp[NAME_MAX + 1];
    const char *rest;
    int fd = -1, r = 1;
    while (r == 1) {
        int more = next_component(&w, comp, &rest);
        if (more < 0) {
            r = more;
            break;
        }
        if (!more) {
            /* Walked to a directory (the root, or after a link or ".."). */
            fd = sys_openat(w.stack[w.depth], ".", final_flags);
            r = fd < 0 ? fd : 0;
            break;
        }
        /* Shift what is left to the front: splice_link then has the whole
         * buffer to put a link's target before it. */
        memmove(w.path, rest, strlen(rest) + 1);
        r = walk_step(&w, comp, w.path, follow, final_flags, &fd);
    }
    walk_release(&w);
    return r < 0 ? r : fd;
}

static int open_beneath(int root_fd, const char *path, bool follow, enum resolve_method m,
                        int flags)
{
    if (m == RESOLVE_OPENAT2)
        return sys_openat2_beneath(root_fd, path[0] ? path : ".", flags, !follow);
    return resolve_walk(root_fd, path, follow, flags);
}

/* Opens for reading the regular file behind the O_PATH descriptor pathfd
 * (st is its stat): through /proc/self/fd, which reopens that very inode;
 * where /proc is missing (a chroot), by resolving the path again and
 * checking that the same inode was reached. */
static int reopen_file(int pathfd, const struct sys_stat *st, int root_fd, const char *path,
                       bool follow, enum resolve_method m)
{
    char proc[32];
    struct buf b = buf_make(proc, sizeof proc - 1);
    buf_put_cstr(&b, "/proc/self/fd/");
    buf_put_u64(&b, (uint64_t)pathfd);
    proc[b.len] = '\0';
    int fd = sys_openat(AT_FDCWD, proc, OPEN_FLAGS);
    if (fd != -ENOENT)
        return fd;
    fd = open_beneath(root_fd, path, follow, m, OPEN_FLAGS);
    struct sys_stat again;
    if (fd >= 0 && (sys_fstat(fd, &again) < 0 || again.ino != st->ino || again.dev != st->dev)) {
        sys_close(fd);
        return -ENOENT; /* replaced while we looked: as if gone this instant */
    }
    return fd;
}

int resolve_open(int root_fd, const char *path, bool follow_symlinks, enum resolve_method m)
{
    /* O_PATH first: opening a FIFO for reading would wait for (or be seen
     * by) its writer, and a device's open can have side effects. Only what
     * turns out to be a regular file or a directory is opened for real. */
    int pathfd = open_beneath(root_fd, path, follow_symlinks, m, O_PATH);
    if (pathfd < 0)
        return pathfd;
    struct sys_stat st;
    int fd = sys_fstat(pathfd, &st);
    if (fd < 0) {
        sys_close(pathfd);
        return fd;
    }
    switch (sys_file_type(&st)) {
    case SYS_FILE_DIR: fd = sys_openat(pathfd, ".", OPEN_FLAGS | O_DIRECTORY); break;
    case SYS_FILE_REGULAR: fd = reopen_file(pathfd, &st, root_fd, path, follow_symlinks, m); break;
    default: return pathfd; /* a special file: only its type will be looked at */
    }
    /* The opened file takes the O_PATH descriptor's number, so descriptors
     * stay the lowest free ones (no hole left below the limit). */
    if (fd >= 0 && sys_dup_onto(fd, pathfd) >= 0) {
        sys_close(fd);
        return pathfd;
    }
    sys_close(pathfd);
    return fd;
}

int resolve_stat(int root_fd, const char *path, bool follow_symlinks, enum resolve_method m,
                 struct sys_stat *st)
{
    /* O_PATH: no access to the content, so no side effect of opening. */
    int fd = open_beneath(root_fd, path, follow_symlinks, m, O_PATH);
    if (fd < 0)
        return fd;
    int r = sys_fstat(fd, st);
    sys_close(fd);
    return r;
}

bool resolve_same_file(const struct sys_stat *a, const struct sys_stat *b)
{
    return a->ino == b->ino && a->dev == b->dev && a->size == b->size &&
           a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

int resolve_recheck(int root_fd, const char *path, bool follow_symlinks, enum resolve_method m,
                    const struct sys_stat *st, int64_t checked_ms, int64_t now_ms)
{
    if (now_ms - checked_ms < 1000)
        return 0;
    struct sys_stat now;
    int r = resolve_stat(root_fd, path, follow_symlinks, m, &now);
    if (r == -EMFILE || r == -ENFILE)
        return 0;
    if (r < 0 || !resolve_same_file(&now, st) || sys_file_type(&now) != SYS_FILE_REGULAR)
        return -1;
    return 1;
}

int resolve_error_status(int err)
{
    switch (err) {
    case -ENOENT:
    case -ENOTDIR:
    case -ENAMETOOLONG: return 404;
    case -ELOOP: /* a symlink, not followed */
    case -EXDEV: /* a followed link that leaves the root */
    case -EACCES:
    case -EPERM:
    case -ENXIO: /* a socket file: open() refuses it */
    case -ENODEV: return 403;
    case -EMFILE:
    case -ENFILE:
    case -ENOMEM: return 503;
    default: return 500;
    }
}

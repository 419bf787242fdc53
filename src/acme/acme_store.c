/* SPDX-License-Identifier: MIT */
/*
 * acme_store.c - the state directory (--acme-dir): every file is written
 * atomically (a temporary file 0600 beside it, written whole and fsynced,
 * renamed over the name, then the directory fsynced), so a crash or a full
 * disk leaves the old file or the new one, never a part; files are read
 * back bounded. The lock between instances is an open file description
 * lock on locks/NAME: the kernel drops it when its holder dies (no stale
 * lock files), and NFS carries it to the other machines of a shared
 * directory. Paths are relative to the directory's descriptor.
 */
#include "acme/acme_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int acme_store_write(int dirfd, const char *rel, const char *p, size_t n)
{
    char tmp[600];
    unsigned char rnd[4];
    if (getentropy(rnd, sizeof rnd) < 0)
        memset(rnd, 0, sizeof rnd);
    int k =
        snprintf(tmp, sizeof tmp, "%s.tmp-%02x%02x%02x%02x", rel, rnd[0], rnd[1], rnd[2], rnd[3]);
    if (k < 0 || (size_t)k >= sizeof tmp)
        return -ENAMETOOLONG;
    int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    int err = 0;
    for (size_t done = 0; done < n && !err;) {
        ssize_t w = write(fd, p + done, n - done);
        if (w < 0 && errno != EINTR)
            err = -errno;
        else if (w > 0)
            done += (size_t)w;
    }
    if (!err && fsync(fd) < 0)
        err = -errno;
    if (close(fd) < 0 && !err)
        err = -errno;
    if (!err && renameat(dirfd, tmp, dirfd, rel) < 0)
        err = -errno;
    if (err) {
        unlinkat(dirfd, tmp, 0); /* the good file under rel stays as it was */
        return err;
    }
    /* The rename itself reaches the disk with its directory. */
    char dir[600];
    snprintf(dir, sizeof dir, "%s", rel);
    char *slash = strrchr(dir, '/');
    int dfd = openat(dirfd, slash ? (*slash = '\0', dir) : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;
}

int acme_store_read(int dirfd, const char *rel, size_t max, char **out, size_t *n)
{
    int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        int e = S_ISREG(st.st_mode) ? -errno : -EINVAL;
        close(fd);
        return e;
    }
    char *p = malloc(max + 1);
    size_t len = 0;
    ssize_t r = 1;
    while (p && len <= max && r > 0) {
        r = read(fd, p + len, max + 1 - len);
        if (r > 0)
            len += (size_t)r;
        else if (r < 0 && errno == EINTR)
            r = 1;
    }
    int e = r < 0 ? -errno : !p ? -ENOMEM : len > max ? -EFBIG : 0;
    close(fd);
    if (e) {
        free(p);
        return e;
    }
    p[len] = '\0';
    *out = p;
    *n = len;
    return 0;
}

int acme_store_lock(int dirfd, const char *name, int *fdp)
{
    char rel[300];
    snprintf(rel, sizeof rel, "locks/%s", name);
    int fd = openat(dirfd, rel, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
        int e = errno;
        close(fd);
        return e == EAGAIN || e == EACCES ? 0 : -e;
    }
    *fdp = fd;
    return 1;
}

void acme_store_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* the lock goes with its open file description */
}

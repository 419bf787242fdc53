/* SPDX-License-Identifier: MIT */
/*
 * sys_libc_files.c - sys.h's files over glibc (the full build; the common
 * rules are in sys_libc.h): open (openat2 for the open-beneath of
 * resolve.c), stat, directories (getdents64 read in place), read and write,
 * descriptors, the logs (O_NOFOLLOW), the root's real path, the pidfile
 * (written whole, then renamed into place), renames and locks. The jobs are
 * pith-tiny's (sys_raw_files.c), so either build's file is found by job.
 */
#include "sys/sys.h"

#include "sys/sys_libc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

enum sys_file_type sys_file_type(const struct sys_stat *st)
{
    switch (st->mode & S_IFMT) {
    case S_IFREG: return SYS_FILE_REGULAR;
    case S_IFDIR: return SYS_FILE_DIR;
    case S_IFLNK: return SYS_FILE_LINK;
    default: return SYS_FILE_OTHER;
    }
}

static void fill_stat(const struct stat *s, struct sys_stat *st)
{
    st->dev = s->st_dev;
    st->ino = s->st_ino;
    st->size = s->st_size < 0 ? 0 : (uint64_t)s->st_size;
    st->mode = s->st_mode;
    st->mtime_sec = s->st_mtim.tv_sec;
    st->mtime_nsec = (uint32_t)s->st_mtim.tv_nsec;
}

int sys_open_dir(const char *path)
{
    return (int)ret(open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

int sys_openat(int dirfd, const char *name, int flags)
{
    return (int)ret(openat(dirfd, name, flags | O_CLOEXEC));
}

int sys_openat2_beneath(int dirfd, const char *path, int flags, bool no_symlinks)
{
    struct open_how how = {
        .flags = (uint64_t)(flags | O_CLOEXEC),
        .resolve =
            RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | (no_symlinks ? RESOLVE_NO_SYMLINKS : 0),
    };
    return (int)ret(syscall(SYS_openat2, dirfd, path, &how, sizeof how));
}

int sys_close(int fd)
{
    return (int)ret(close(fd));
}

int sys_fstat(int fd, struct sys_stat *st)
{
    struct stat s;
    if (fstat(fd, &s) < 0)
        return -errno;
    fill_stat(&s, st);
    return 0;
}

int sys_fstatat(int dirfd, const char *name, struct sys_stat *st, bool follow)
{
    struct stat s;
    if (fstatat(dirfd, name, &s, follow ? 0 : AT_SYMLINK_NOFOLLOW) < 0)
        return -errno;
    fill_stat(&s, st);
    return 0;
}

ssize_t sys_readlinkat(int dirfd, const char *name, char *out, size_t cap)
{
    return ret(readlinkat(dirfd, name, out, cap));
}

ssize_t sys_getdents(int fd, void *buf, size_t n)
{
    return ret(getdents64(fd, buf, n));
}

int sys_rewind_dir(int fd)
{
    return (int)ret(lseek(fd, 0, SEEK_SET));
}

size_t sys_dirent_next(const void *buf, size_t n, size_t off, const char **name,
                       enum sys_file_type *type)
{
    if (off >= n)
        return 0;
    const struct dirent64 *d = (const struct dirent64 *)((const char *)buf + off);
    *name = d->d_name;
    switch (d->d_type) {
    case DT_REG: *type = SYS_FILE_REGULAR; break;
    case DT_DIR: *type = SYS_FILE_DIR; break;
    case DT_LNK: *type = SYS_FILE_LINK; break;
    case DT_UNKNOWN: *type = SYS_FILE_UNKNOWN; break;
    default: *type = SYS_FILE_OTHER; break;
    }
    return off + d->d_reclen;
}

ssize_t sys_read(int fd, void *p, size_t n)
{
    return ret(read(fd, p, n));
}

ssize_t sys_pread(int fd, void *p, size_t n, uint64_t off)
{
    return ret(pread(fd, p, n, (off_t)off));
}

ssize_t sys_write(int fd, const void *p, size_t n)
{
    return ret(write(fd, p, n));
}

ssize_t sys_writev(int fd, const struct iovec *iov, int n)
{
    return ret(writev(fd, iov, n));
}

int sys_open_log(const char *path)
{
    /* O_NOFOLLOW: a link planted where the log goes must not redirect our
     * writes (nginx CVE-2016-1247, research S12). */
    return (int)ret(open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
}

int sys_open_log_at(int dirfd, const char *name)
{
    return (int)ret(
        openat(dirfd, name, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
}

int sys_dup2(int from, int to)
{
    return (int)ret(dup2(from, to));
}

int sys_dup_onto(int from, int to)
{
    return (int)ret(dup3(from, to, O_CLOEXEC));
}

int sys_set_cloexec(int fd)
{
    return (int)ret(fcntl(fd, F_SETFD, FD_CLOEXEC));
}

int sys_unlink(const char *path)
{
    return (int)ret(unlink(path));
}

int sys_realpath(const char *path, char *out, size_t cap)
{
    char *p = realpath(path, NULL);
    if (!p)
        return -errno;
    size_t n = strlen(p);
    if (n >= cap) {
        free(p);
        return -ENAMETOOLONG;
    }
    memcpy(out, p, n + 1);
    free(p);
    return 0;
}

/* sys_write_pidfile's check (pid < 0): whether path can be written, leaving
 * no file behind that a watcher could take for the real one. */
static int pidfile_check(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd >= 0) {
        close(fd);
        unlink(path);
        return 0;
    }
    if (errno != EEXIST)
        return -errno;
    fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    close(fd);
    return 0;
}

int sys_write_pidfile(const char *path, int pid)
{
    if (pid < 0)
        return pidfile_check(path);
    char text[24];
    int n = snprintf(text, sizeof text, "%d\n", pid);
    char tmp[PATH_MAX];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return -ENAMETOOLONG;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return -errno;
    ssize_t w = write(fd, text, (size_t)n);
    int e = w == n ? 0 : (w < 0 ? -errno : -EIO);
    close(fd);
    if (!e && rename(tmp, path) < 0)
        e = -errno;
    if (e)
        unlink(tmp);
    return e;
}

int sys_exe_path(char *out, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    if (n < 0)
        return -errno;
    out[n] = '\0';
    return 0;
}

int sys_rename(const char *from, const char *to)
{
    return (int)ret(rename(from, to));
}

int sys_lock(int fd, bool on)
{
    return (int)ret(flock(fd, on ? LOCK_EX : LOCK_UN));
}

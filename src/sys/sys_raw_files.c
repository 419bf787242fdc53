/* SPDX-License-Identifier: MIT */
/*
 * sys_raw_files.c - sys.h's files over raw system calls (pith-tiny; the
 * common rules are in sys_raw.h): open, stat, directories, read and write,
 * descriptors, the root's real path, the pidfile, renames. Offsets are
 * 64-bit on every ABI (O_LARGEFILE, pread64), so a 32-bit build serves
 * files above 2 GiB; the stat buffer is read bytewise (no alignment
 * assumption), its offsets from src/sys/arch/<arch>.h.
 */
#include "sys/sys.h"

#include "core/bytes.h"
#include "sys/sandbox.h" /* sys_open_path_dir */
#include "sys/sys_raw.h"

#if __SIZEOF_LONG__ == 4
#define OPEN_LARGE O_LARGEFILE /* 64-bit offsets on a 32-bit ABI */
#else
#define OPEN_LARGE 0
#endif

enum sys_file_type sys_file_type(const struct sys_stat *st)
{
    switch (st->mode & S_IFMT) {
    case S_IFREG: return SYS_FILE_REGULAR;
    case S_IFDIR: return SYS_FILE_DIR;
    case S_IFLNK: return SYS_FILE_LINK;
    default: return SYS_FILE_OTHER;
    }
}

/* One field of the kernel's stat buffer; 32-bit fields of 32-bit ABIs are
 * widened (mtime sign-extended: time_t). Copied bytewise: no alignment
 * assumption. */
static uint64_t kfield(const unsigned char *k, unsigned off, unsigned size, bool is_signed)
{
    if (size == 8) {
        uint64_t v;
        memcpy(&v, k + off, 8);
        return v;
    }
    uint32_t v;
    memcpy(&v, k + off, 4);
    return is_signed ? (uint64_t)(int64_t)(int32_t)v : v;
}

static int stat_at(int dirfd, const char *name, struct sys_stat *st, int flags)
{
    uint64_t k[(KSTAT_BYTES + 7) / 8];
    const unsigned char *b = (const unsigned char *)k;
    long r = SC4(fstatat, dirfd, name, k, flags);
    if (r < 0)
        return (int)r;
    st->dev = kfield(b, KSTAT_DEV_OFF, KSTAT_DEV_SIZE, false);
    st->ino = kfield(b, KSTAT_INO_OFF, KSTAT_INO_SIZE, false);
    st->mode = (uint32_t)kfield(b, KSTAT_MODE_OFF, KSTAT_MODE_SIZE, false);
    int64_t size = (int64_t)kfield(b, KSTAT_SIZE_OFF, KSTAT_SIZE_SIZE, true);
    st->size = size < 0 ? 0 : (uint64_t)size;
    st->mtime_sec = (int64_t)kfield(b, KSTAT_MTIME_OFF, KSTAT_MTIME_SIZE, true);
    st->mtime_nsec = (uint32_t)kfield(b, KSTAT_MTIME_NSEC_OFF, KSTAT_MTIME_NSEC_SIZE, false);
    return 0;
}

static int open_at(int dirfd, const char *name, int flags, int mode)
{
    return (int)SC4(openat, dirfd, name, flags | O_CLOEXEC | OPEN_LARGE, mode);
}

int sys_open_dir(const char *path)
{
    return open_at(AT_FDCWD, path, O_RDONLY | O_DIRECTORY, 0);
}

int sys_openat(int dirfd, const char *name, int flags)
{
    return open_at(dirfd, name, flags, 0);
}

int sys_openat2_beneath(int dirfd, const char *path, int flags, bool no_symlinks)
{
    uint64_t how[3] = {(uint64_t)(flags | O_CLOEXEC | OPEN_LARGE), 0,
                       RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS |
                           (no_symlinks ? RESOLVE_NO_SYMLINKS : 0)};
    return (int)SC4(openat2, dirfd, path, how, sizeof how);
}

int sys_close(int fd)
{
    return (int)SC1(close, fd);
}

int sys_fstat(int fd, struct sys_stat *st)
{
    return stat_at(fd, "", st, AT_EMPTY_PATH); /* 2.6.39 */
}

int sys_fstatat(int dirfd, const char *name, struct sys_stat *st, bool follow)
{
    return stat_at(dirfd, name, st, follow ? 0 : AT_SYMLINK_NOFOLLOW);
}

ssize_t sys_readlinkat(int dirfd, const char *name, char *out, size_t cap)
{
    return SC4(readlinkat, dirfd, name, out, cap);
}

ssize_t sys_getdents(int fd, void *buf, size_t n)
{
    return SC3(getdents64, fd, buf, n);
}

int sys_rewind_dir(int fd)
{
    return (int)SC3(lseek, fd, 0, SEEK_SET);
}

/* The kernel's struct linux_dirent64, the same on every ABI. */
struct kdirent64 {
    uint64_t ino;
    int64_t off;
    uint16_t reclen;
    unsigned char type;
    char name[];
};

size_t sys_dirent_next(const void *buf, size_t n, size_t off, const char **name,
                       enum sys_file_type *type)
{
    if (off >= n)
        return 0;
    const struct kdirent64 *d = (const struct kdirent64 *)((const char *)buf + off);
    *name = d->name;
    switch (d->type) {
    case DT_REG: *type = SYS_FILE_REGULAR; break;
    case DT_DIR: *type = SYS_FILE_DIR; break;
    case DT_LNK: *type = SYS_FILE_LINK; break;
    case DT_UNKNOWN: *type = SYS_FILE_UNKNOWN; break;
    default: *type = SYS_FILE_OTHER; break;
    }
    return off + d->reclen;
}

ssize_t sys_read(int fd, void *p, size_t n)
{
    return SC3(read, fd, p, n);
}

ssize_t sys_pread(int fd, void *p, size_t n, uint64_t off)
{
#if __SIZEOF_LONG__ == 4
    return sys6(SYS_pread64, fd, (long)p, (long)n, ARG64_PADDED(off));
#else
    return SC4(pread64, fd, p, n, off);
#endif
}

ssize_t sys_write(int fd, const void *p, size_t n)
{
    return SC3(write, fd, p, n);
}

ssize_t sys_writev(int fd, const struct iovec *iov, int n)
{
    return SC3(writev, fd, iov, n);
}

int sys_open_log(const char *path)
{
    return sys_open_log_at(AT_FDCWD, path);
}

int sys_open_log_at(int dirfd, const char *name)
{
    /* O_NOFOLLOW: a link planted where the log goes must not redirect our
     * writes (nginx CVE-2016-1247). */
    return open_at(dirfd, name, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, 0644);
}

int sys_open_path_dir(const char *dir)
{
    return open_at(AT_FDCWD, dir, O_PATH | O_DIRECTORY, 0);
}

int sys_dup2(int from, int to)
{
    /* dup3 refuses from == to, which dup2 accepts; aarch64 has no dup2. */
    return from == to ? to : (int)SC3(dup3, from, to, 0);
}

int sys_dup_onto(int from, int to)
{
    return (int)SC3(dup3, from, to, O_CLOEXEC);
}

int sys_set_cloexec(int fd)
{
    return (int)SC3(fcntl, fd, F_SETFD, FD_CLOEXEC);
}

int sys_unlink(const char *path)
{
    return (int)SC3(unlinkat, AT_FDCWD, path, 0);
}

int sys_realpath(const char *path, char *out, size_t cap)
{
    /* The kernel's getcwd is the canonical path: step into the directory
     * and back (through a descriptor, so relative --log paths still mean
     * what they meant). */
    int here = sys_open_dir(".");
    if (here < 0)
        return here;
    int dir = sys_open_dir(path);
    long r = dir;
    if (dir >= 0) {
        r = SC1(fchdir, dir);
        if (r >= 0) {
            r = SC2(getcwd, out, cap);
            SC1(fchdir, here);
        }
        sys_close(dir);
    }
    sys_close(here);
    return r == -ERANGE ? -ENAMETOOLONG : r < 0 ? (int)r : 0;
}

int sys_write_pidfile(const char *path, int pid)
{
    if (pid < 0) {
        /* Only a check: leave no file behind that a watcher could take for
         * the real one. */
        int fd = open_at(AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
        if (fd >= 0) {
            sys_close(fd);
            sys_unlink(path);
            return 0;
        }
        if (fd != -EEXIST)
            return fd;
        fd = open_at(AT_FDCWD, path, O_WRONLY | O_NOFOLLOW, 0);
        if (fd < 0)
            return fd;
        sys_close(fd);
        return 0;
    }
    char text[24];
    size_t n = u64_format((uint64_t)pid, text);
    text[n++] = '\n';
    char tmp[PATH_MAX];
    size_t len = strlen(path);
    if (len + sizeof ".tmp" > sizeof tmp)
        return -ENAMETOOLONG;
    mem_copy(tmp, path, len);
    mem_copy(tmp + len, ".tmp", sizeof ".tmp");
    int fd = open_at(AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return fd;
    long w = sys_write(fd, text, n);
    sys_close(fd);
    int e = w == (long)n ? 0 : (w < 0 ? (int)w : -EIO);
    if (!e)
        e = sys_rename(tmp, path);
    if (e)
        sys_unlink(tmp);
    return e;
}

int sys_exe_path(char *out, size_t cap)
{
    ssize_t n = sys_readlinkat(AT_FDCWD, "/proc/self/exe", out, cap - 1);
    if (n < 0)
        return (int)n;
    out[n] = '\0';
    return 0;
}

int sys_lock(int fd, bool on)
{
    return (int)SC2(flock, fd, on ? LOCK_EX : LOCK_UN);
}

int sys_rename(const char *from, const char *to)
{
    /* riscv64 has only renameat2, whose flags (0) are the fifth argument. */
    return (int)SC5(renameat, AT_FDCWD, from, AT_FDCWD, to, 0);
}

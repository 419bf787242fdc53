/* SPDX-License-Identifier: MIT */
/*
 * compress_variant.c - one file's variants for `pith compress`: F read
 * whole, compressed per coding, each variant kept only when it saves
 * MIN_SAVING percent (a stale one that no longer pays is removed) and
 * written through a temporary dotfile and a rename; F stat'ed again after
 * the read and before each rename, so no variant of bytes F no longer
 * holds is ever left. Runs on the worker threads (compress_tree.c).
 */
#include "cli/compress_run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- writing one variant ----------------------------------------------------------- */

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Writes the variant through a temporary dotfile in the same directory (the
 * server never serves a dotfile, and rename within a directory is atomic).
 * The data is fsync'd before the rename: after a crash the name holds the old
 * variant or the whole new one, never an empty file with a current mtime.
 * Returns 0 or -errno, with *step naming the call that failed. */
static int write_variant(struct run *r, int dirfd, const char *vname, const unsigned char *p,
                         size_t n, const struct stat *orig, const char **step)
{
    char tmp[64];
    snprintf(tmp, sizeof tmp, ".pith-compress-%ld-%u.tmp", (long)getpid(),
             atomic_fetch_add(&r->tmp_seq, 1));
    int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        *step = "cannot create its temporary file";
        return -errno;
    }
    const struct timespec times[2] = {{.tv_nsec = UTIME_OMIT}, orig->st_mtim};
    int e = write_all(fd, p, n);
    if (e)
        *step = "cannot write its temporary file";
    else if (geteuid() == 0 && fchown(fd, orig->st_uid, orig->st_gid) != 0)
        e = -errno, *step = "cannot give it the original's owner"; /* readable by --user */
    else if (fchmod(fd, orig->st_mode & 0666) != 0)
        e = -errno, *step = "cannot set its mode";
    else if (futimens(fd, times) != 0)
        e = -errno, *step = "cannot set its mtime";
    else if (fsync(fd) != 0)
        e = -errno, *step = "cannot fsync it";
    if (close(fd) != 0 && !e)
        e = -errno, *step = "cannot close it";
    if (!e && renameat(dirfd, tmp, dirfd, vname) != 0)
        e = -errno, *step = "cannot rename the temporary file to it";
    if (e)
        unlinkat(dirfd, tmp, 0);
    return e;
}

/* --- one file ---------------------------------------------------------------------- */

/* Whether F (then st) is another file or has other bytes now: a new inode
 * (replaced by a rename), size or mtime. A variant made from bytes read
 * while F changed would get the mtime of before the read, which marks it
 * current for bytes F no longer holds, so it is never written. */
static bool changed_since(const struct item *it, const struct stat *st)
{
    struct stat now;
    return fstatat(it->dir->fd, it->name, &now, AT_SYMLINK_NOFOLLOW) != 0 ||
           now.st_ino != st->st_ino || now.st_dev != st->st_dev || now.st_size != st->st_size ||
           !compress_same_mtime(&now, st);
}

/* F changed while it was read or compressed: named, and done with. */
static void report_changed(struct run *r, const struct item *it)
{
    pthread_mutex_lock(&r->mu);
    compress_error(r, it->dir->rel, it->name,
                   "changed while it was compressed: no variant written (run again)");
    r->done_files++;
    pthread_mutex_unlock(&r->mu);
}

struct outcome {
    size_t size[CODEC_COUNT];
    bool kept[CODEC_COUNT];
    bool changed; /* F changed while it was read or compressed: nothing more is written */
};

/* Reads the whole file into memory. Returns the buffer (caller frees) and its
 * length, or NULL with *err = -errno and *step set. */
static unsigned char *read_file(int fd, size_t size, size_t *len, int *err, const char **step)
{
    unsigned char *buf = malloc(size ? size : 1);
    size_t got = 0;
    if (!buf) {
        *err = -ENOMEM, *step = "cannot hold in memory";
        return NULL;
    }
    while (got < size) {
        ssize_t n = read(fd, buf + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *err = -errno, *step = "cannot read";
            free(buf);
            return NULL;
        }
        if (n == 0)
            break; /* truncated meanwhile: F's new mtime makes the next run redo it */
        got += (size_t)n;
    }
    *len = got;
    return buf;
}

/* Compresses one codec's variant and keeps it, or removes a stale one when
 * the new one would not save MIN_SAVING percent. Caller does not hold mu. */
static void do_codec(struct run *r, struct codec_state *cs, const struct item *it, enum codec c,
                     enum codec_kind kind, const unsigned char *in, size_t n, const struct stat *st,
                     struct outcome *out)
{
    char vname[NAME_MAX + 8], why[128];
    unsigned char *z;
    size_t zlen;
    snprintf(vname, sizeof vname, "%s%s", it->name, codec_suffix(c));
    if (codec_compress(cs, c, r->opt.level, kind, in, n, &z, &zlen, why, sizeof why) < 0) {
        pthread_mutex_lock(&r->mu);
        compress_error(r, it->dir->rel, it->name, "%s", why);
        pthread_mutex_unlock(&r->mu);
        return;
    }
    out->size[c] = zlen;
    const char *step = NULL;
    int e = 0;
    if (changed_since(it, st)) {
        free(z);
        out->changed = true;
        return;
    }
    if ((uint64_t)zlen * 100 <= (uint64_t)n * (100 - MIN_SAVING)) {
        out->kept[c] = true;
        e = write_variant(r, it->dir->out_fd, vname, z, zlen, st, &step);
    } else if (unlinkat(it->dir->out_fd, vname, 0) != 0 && errno != ENOENT) {
        e = -errno, step = "cannot remove it (stale, and a new one would save under 5%)";
    }
    free(z);
    pthread_mutex_lock(&r->mu);
    if (e)
        compress_error(r, it->dir->rel, vname, "%s: %s", step, strerror(-e));
    else if (out->kept[c]) {
        r->per_codec[c].files++;
        r->per_codec[c].original += n;
        r->per_codec[c].variant += zlen;
    } else
        r->not_kept++;
    pthread_mutex_unlock(&r->mu);
}

/* The plain line for a file (off a terminal). Caller holds mu. */
static void print_file_line(const struct item *it, size_t n, const struct outcome *o)
{
    printf("%s%s: %zu bytes", it->dir->rel, it->name, n);
    for (int c = 0; c < CODEC_COUNT; c++) {
        if (!(it->todo & (1u << c)) || !o->size[c])
            continue;
        unsigned saved = (unsigned)(n > o->size[c] ? 100 * (n - o->size[c]) / n : 0);
        if (o->kept[c])
            printf("; %s %zu (%u%% saved)", codec_name(c), o->size[c], saved);
        else
            printf("; %s not kept (%u%% saved)", codec_name(c), saved);
    }
    putchar('\n');
    fflush(stdout);
}

void compress_file(struct run *r, struct codec_state *cs, const struct item *it)
{
    struct outcome out = {{0}, {0}, false};
    enum codec_kind kind;
    const char *step = "cannot open";
    struct stat st;
    size_t n = 0;
    int err = 0;
    unsigned char *in = NULL;
    compress_is_compressible(it->name, &kind);
    int fd = openat(it->dir->fd, it->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        err = -errno;
    else if (fstat(fd, &st) != 0)
        err = -errno, step = "cannot stat";
    else if (!S_ISREG(st.st_mode))
        err = -EINVAL, step = "is no longer a regular file";
    else
        in = read_file(fd, (size_t)st.st_size, &n, &err, &step);
    if (fd >= 0)
        close(fd);
    if (in && (n != (size_t)st.st_size || changed_since(it, &st))) {
        free(in);
        report_changed(r, it);
        return;
    }
    if (!in) {
        pthread_mutex_lock(&r->mu);
        compress_error(r, it->dir->rel, it->name, "%s: %s", step, strerror(-err));
        r->done_files++;
        pthread_mutex_unlock(&r->mu);
        return;
    }
    for (int c = 0; c < CODEC_COUNT && !out.changed; c++)
        if (it->todo & (1u << c))
            do_codec(r, cs, it, c, kind, in, n, &st, &out);
    free(in);
    if (out.changed) {
        /* Those written before the change was seen hold the old bytes. */
        for (int c = 0; c < CODEC_COUNT; c++) {
            char vname[NAME_MAX + 8];
            snprintf(vname, sizeof vname, "%s%s", it->name, codec_suffix(c));
            if (out.kept[c])
                unlinkat(it->dir->out_fd, vname, 0);
        }
        report_changed(r, it);
        return;
    }
    pthread_mutex_lock(&r->mu);
    r->compressed++;
    r->done_files++;
    r->done_bytes += n;
    if (!r->tty)
        print_file_line(it, n, &out);
    pthread_mutex_unlock(&r->mu);
}

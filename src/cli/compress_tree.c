/* SPDX-License-Identifier: MIT */
/*
 * compress_tree.c - the work of `pith compress`: the walk (directory
 * descriptors, never a symlink followed), the bounded queue and the worker
 * threads, one file's variants written through a temporary file and a
 * rename, and --prune. compress.c holds the options, the messages and the
 * run around it; the rules this keeps are listed at the top of compress.c.
 */
#include "cli/compress_run.h"

#include "core/mime.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- what is compressed ----------------------------------------------------------- */

static bool is_dotfile(const char *name, unsigned depth)
{
    return name[0] == '.' && !(depth == 0 && strcmp(name, ".well-known") == 0);
}

static bool starts(struct span s, const char *prefix)
{
    size_t n = strlen(prefix);
    return s.n >= n && memcmp(s.p, prefix, n) == 0;
}

/* The media type decides: every textual type in the table carries a charset
 * (text/..., JavaScript, CSS, JSON, XML, SVG, markdown, csv, webmanifest, ...),
 * and a few binary formats compress well (wasm, TrueType/OpenType/EOT fonts,
 * icons, BMP). Already-compressed formats (images, woff2, archives) do not. */
static bool compressible(const char *name, enum codec_kind *kind)
{
    struct span type = mime_lookup(span_make(name, strlen(name)));
    static const char *const binary[] = {"application/wasm", "image/vnd.microsoft.icon",
                                         "image/bmp"};
    static const char *const fonts[] = {"font/ttf", "font/otf", "application/vnd.ms-fontobject"};
    *kind = CODEC_KIND_TEXT;
    for (size_t i = 0; i + 8 <= type.n; i++)
        if (memcmp(type.p + i, "charset=", 8) == 0)
            return true;
    for (size_t i = 0; i < sizeof fonts / sizeof fonts[0]; i++)
        if (starts(type, fonts[i]) && type.n == strlen(fonts[i]))
            return *kind = CODEC_KIND_FONT, true;
    *kind = CODEC_KIND_BINARY;
    for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++)
        if (starts(type, binary[i]) && type.n == strlen(binary[i]))
            return true;
    return false;
}

static bool same_mtime(const struct stat *a, const struct stat *b)
{
    return a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The codecs whose variant of `name` is missing or not current. */
static unsigned stale_codecs(const struct run *r, const struct dir *d, const char *name,
                             const struct stat *st)
{
    unsigned todo = 0;
    for (int c = 0; c < CODEC_COUNT; c++) {
        if (!r->opt.enc[c])
            continue;
        char vname[NAME_MAX + 8];
        struct stat vst;
        snprintf(vname, sizeof vname, "%s%s", name, codec_suffix(c));
        if (d->out_fd < 0 || fstatat(d->out_fd, vname, &vst, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(vst.st_mode) || !same_mtime(&vst, st))
            todo |= 1u << c;
    }
    return todo;
}

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
           !same_mtime(&now, st);
}

static void report_changed(struct run *r, const struct item *it)
{
    pthread_mutex_lock(&r->mu);
    compress_error(r, it->dir->rel, it->name,
                   "changed while it was compressed: no variant written (run again)");
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

static void do_file(struct run *r, struct codec_state *cs, const struct item *it)
{
    struct outcome out = {{0}, {0}, false};
    enum codec_kind kind;
    const char *step = "cannot open";
    struct stat st;
    size_t n = 0;
    int err = 0;
    unsigned char *in = NULL;
    compressible(it->name, &kind);
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
        pthread_mutex_lock(&r->mu);
        r->done_files++;
        pthread_mutex_unlock(&r->mu);
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
        pthread_mutex_lock(&r->mu);
        r->done_files++;
        pthread_mutex_unlock(&r->mu);
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

/* --- the queue and the workers --------------------------------------------------------- */

static void dir_put(struct run *r, struct dir *d)
{
    pthread_mutex_lock(&r->mu);
    bool last = --d->refs == 0;
    pthread_mutex_unlock(&r->mu);
    if (!last)
        return;
    if (d->out_fd >= 0 && d->out_fd != d->fd)
        close(d->out_fd);
    close(d->fd);
    free(d->rel);
    free(d);
}

static void *worker(void *arg)
{
    struct run *r = arg;
    struct codec_state cs;
    bool ok = codec_state_init(&cs);
    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (!r->head && !r->closed)
            pthread_cond_wait(&r->cv, &r->mu);
        struct item *it = r->head;
        if (!it)
            break;
        r->head = it->next;
        if (!r->head)
            r->tail = NULL;
        r->queued--;
        r->busy++;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        /* Once interrupted, queued files are dropped: only those in flight
         * are finished. */
        if (ok && !compress_interrupted)
            do_file(r, &cs, it);
        else if (!ok) {
            pthread_mutex_lock(&r->mu);
            compress_error(r, it->dir->rel, it->name, "out of memory for the encoder");
            pthread_mutex_unlock(&r->mu);
        }
        dir_put(r, it->dir);
        free(it->name);
        free(it);
        pthread_mutex_lock(&r->mu);
        r->busy--;
        pthread_cond_broadcast(&r->cv);
    }
    pthread_mutex_unlock(&r->mu);
    if (ok)
        codec_state_free(&cs);
    return NULL;
}

/* Waits up to a redraw period for cv; redraws the bar either way. Caller
 * holds mu. */
static void wait_and_draw(struct run *r)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += REDRAW_NSEC;
    if (until.tv_nsec >= 1000000000L)
        until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&r->cv, &r->mu, &until);
    compress_progress(r);
}

static void enqueue(struct run *r, struct dir *d, const char *name, unsigned todo)
{
    struct item *it = malloc(sizeof *it);
    char *copy = strdup(name);
    if (!it || !copy) {
        free(it);
        free(copy);
        pthread_mutex_lock(&r->mu);
        compress_error(r, d->rel, name, "out of memory");
        pthread_mutex_unlock(&r->mu);
        return;
    }
    *it = (struct item){.dir = d, .name = copy, .todo = todo};
    pthread_mutex_lock(&r->mu);
    while (r->queued >= QUEUE_MAX && !compress_interrupted)
        wait_and_draw(r);
    if (compress_interrupted) {
        pthread_mutex_unlock(&r->mu);
        free(copy);
        free(it);
        return;
    }
    d->refs++;
    if (r->tail)
        r->tail->next = it;
    else
        r->head = it;
    r->tail = it;
    r->queued++;
    pthread_cond_broadcast(&r->cv);
    compress_progress(r);
    pthread_mutex_unlock(&r->mu);
}

/* --- the walk ------------------------------------------------------------------------ */

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory fd, sorted (so runs and their output are
 * reproducible). Returns the count, or -errno; *names is freed by the caller
 * (each name, then the array). */
static int list_dir(int fd, char ***names)
{
    int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    DIR *dh = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!dh) {
        int e = -errno;
        if (dup_fd >= 0)
            close(dup_fd);
        return e;
    }
    /* The dup shares its offset with fd: start from the top, whatever an
     * earlier pass over the same directory left. */
    rewinddir(dh);
    size_t n = 0, cap = 0;
    char **v = NULL;
    struct dirent *de;
    int err = 0;
    errno = 0;
    while ((de = readdir(dh)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nv = realloc(v, cap * sizeof *v);
            if (!nv) {
                err = -ENOMEM;
                break;
            }
            v = nv;
        }
        if (!(v[n] = strdup(de->d_name))) {
            err = -ENOMEM;
            break;
        }
        n++;
        errno = 0;
    }
    if (!err && errno)
        err = -errno;
    closedir(dh);
    if (err) {
        while (n)
            free(v[--n]);
        free(v);
        return err;
    }
    if (n) /* an empty directory has no array at all */
        qsort(v, n, sizeof *v, by_name);
    *names = v;
    return (int)n;
}

static void free_names(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* Makes (if needed) and opens d's directory in the mirror tree, parents
 * first. Only the walker calls it, while every ancestor is still open. */
static int ensure_out(struct dir *d)
{
    if (d->out_fd >= 0)
        return 0;
    if (!d->parent)
        return -ENOENT; /* the mirror root is opened (or made) before the walk */
    int e = ensure_out(d->parent);
    if (e)
        return e;
    if (mkdirat(d->parent->out_fd, d->name, 0755) != 0 && errno != EEXIST)
        return -errno;
    d->out_fd = openat(d->parent->out_fd, d->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return d->out_fd < 0 ? -errno : 0;
}

static void walk_dir(struct run *r, struct dir *d, unsigned depth);

/* F is now too small for variants, but old ones may remain. One whose mtime
 * differs from F's was made from other content: older ones the server
 * ignores, but a newer one (F put back by rsync -t) it would serve, so they
 * go. Only the walker calls it, in the second pass. */
static void remove_stale(struct run *r, struct dir *d, const char *name, const struct stat *st)
{
    for (int c = 0; c < CODEC_COUNT && d->out_fd >= 0; c++) {
        char vname[NAME_MAX + 8];
        struct stat vst;
        snprintf(vname, sizeof vname, "%s%s", name, codec_suffix(c));
        if (!r->opt.enc[c] || fstatat(d->out_fd, vname, &vst, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(vst.st_mode) || same_mtime(&vst, st))
            continue;
        int e = r->opt.dry_run || unlinkat(d->out_fd, vname, 0) == 0 ? 0 : errno;
        pthread_mutex_lock(&r->mu);
        if (e)
            compress_error(r, d->rel, vname, "cannot remove it (stale): %s", strerror(e));
        else {
            if (r->opt.dry_run || !r->tty)
                printf("%s %s%s (stale: %s is under %d bytes now)\n",
                       r->opt.dry_run ? "would remove" : "removed", d->rel, vname, name, MIN_SIZE);
            r->pruned++;
        }
        pthread_mutex_unlock(&r->mu);
    }
}

static void on_file(struct run *r, struct dir *d, const char *name, const struct stat *st)
{
    enum codec_kind kind;
    if (!compressible(name, &kind))
        return;
    if (st->st_size < MIN_SIZE) {
        if (!r->counting)
            remove_stale(r, d, name, st);
        return;
    }
    unsigned todo = stale_codecs(r, d, name, st);
    pthread_mutex_lock(&r->mu);
    if (!todo) {
        if (!r->counting)
            r->current++;
        pthread_mutex_unlock(&r->mu);
        return;
    }
    if (r->counting) {
        r->total_files++;
        r->total_bytes += (uint64_t)st->st_size;
    }
    pthread_mutex_unlock(&r->mu);
    if (r->counting)
        return;
    for (int c = 0; c < CODEC_COUNT; c++) {
        if ((todo & (1u << c)) && strlen(name) + strlen(codec_suffix(c)) > NAME_MAX) {
            pthread_mutex_lock(&r->mu);
            compress_error(r, d->rel, name,
                           "the name of its %s variant would be longer than %d bytes",
                           codec_name(c), NAME_MAX);
            pthread_mutex_unlock(&r->mu);
            return;
        }
    }
    if (r->opt.dry_run) {
        printf("would compress %s%s (", d->rel, name);
        for (int c = 0, first = 1; c < CODEC_COUNT; c++)
            if (todo & (1u << c))
                printf("%s%s", first ? "" : ", ", codec_name(c)), first = 0;
        printf(")\n");
        r->compressed++;
        return;
    }
    int e = ensure_out(d);
    if (e) {
        pthread_mutex_lock(&r->mu);
        compress_error(r, d->rel, name, "cannot make its directory under --out: %s", strerror(-e));
        pthread_mutex_unlock(&r->mu);
        return;
    }
    enqueue(r, d, name, todo);
}

static struct dir *open_child(struct run *r, struct dir *parent, const char *name)
{
    struct dir *d = calloc(1, sizeof *d);
    size_t len = strlen(parent->rel) + strlen(name) + 2;
    char *rel = malloc(len);
    int fd = openat(parent->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (!d || !rel || fd < 0) {
        int e = fd < 0 ? errno : ENOMEM;
        pthread_mutex_lock(&r->mu);
        if (!r->counting)
            compress_error(r, parent->rel, name, "cannot open the directory: %s", strerror(e));
        pthread_mutex_unlock(&r->mu);
        free(d);
        free(rel);
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    snprintf(rel, len, "%s%s/", parent->rel, name);
    *d =
        (struct dir){.parent = parent, .name = name, .rel = rel, .fd = fd, .out_fd = -1, .refs = 1};
    if (!r->opt.out)
        d->out_fd = fd;
    else if (parent->out_fd >= 0)
        d->out_fd = openat(parent->out_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return d;
}

/* A temporary file of write_variant()'s: ".pith-compress-PID-SEQ.tmp". */
static bool is_tmp_name(const char *name)
{
    static const char prefix[] = ".pith-compress-", suffix[] = ".tmp";
    size_t n = strlen(name);
    return n > sizeof prefix - 1 + sizeof suffix - 1 &&
           memcmp(name, prefix, sizeof prefix - 1) == 0 &&
           strcmp(name + n - (sizeof suffix - 1), suffix) == 0;
}

/* Removes the temporary files a crashed or killed run left in d's variant
 * directory (names: its listing). A run in flight changes its file's
 * status (write, fchmod, futimens) within seconds, so one whose ctime is
 * older than TMP_STALE_S (PITH_COMPRESS_TMP_STALE_S in tests; the mtime
 * is F's, so says nothing) belongs to nobody. The server never serves them
 * (dotfiles). Only the walker calls it, in the second pass. */
static void remove_stale_tmps(struct run *r, struct dir *d, char **names, int n)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (!is_tmp_name(names[i]) || fstatat(d->out_fd, names[i], &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode) || now.tv_sec - st.st_ctim.tv_sec < r->tmp_stale_s)
            continue;
        int e = r->opt.dry_run || unlinkat(d->out_fd, names[i], 0) == 0 ? 0 : errno;
        pthread_mutex_lock(&r->mu);
        if (e)
            compress_error(r, d->rel, names[i], "cannot remove it (a stale temporary file): %s",
                           strerror(e));
        else {
            if (r->opt.dry_run || !r->tty)
                printf("%s %s%s (a temporary file an interrupted run left)\n",
                       r->opt.dry_run ? "would remove" : "removed", d->rel, names[i]);
            r->pruned++;
        }
        pthread_mutex_unlock(&r->mu);
    }
}

/* The variant directory's stale temporary files, when it is not d itself
 * (--out): its own listing. */
static void remove_stale_tmps_out(struct run *r, struct dir *d)
{
    char **names;
    int n = list_dir(d->out_fd, &names);
    if (n <= 0)
        return;
    remove_stale_tmps(r, d, names, n);
    free_names(names, n);
}

static void walk_dir(struct run *r, struct dir *d, unsigned depth)
{
    char **names;
    int n = list_dir(d->fd, &names);
    if (n < 0) {
        pthread_mutex_lock(&r->mu);
        if (!r->counting)
            compress_error(r, d->rel, "", "cannot read the directory: %s", strerror(-n));
        pthread_mutex_unlock(&r->mu);
        return;
    }
    if (!r->counting && d->out_fd == d->fd)
        remove_stale_tmps(r, d, names, n);
    else if (!r->counting && d->out_fd >= 0)
        remove_stale_tmps_out(r, d);
    for (int i = 0; i < n && !compress_interrupted; i++) {
        struct stat st;
        if (is_dotfile(names[i], depth) || fstatat(d->fd, names[i], &st, AT_SYMLINK_NOFOLLOW))
            continue; /* vanished meanwhile: nothing to do */
        if (S_ISREG(st.st_mode))
            on_file(r, d, names[i], &st);
        else if (S_ISDIR(st.st_mode)) {
            struct dir *child = open_child(r, d, names[i]);
            if (child) {
                walk_dir(r, child, depth + 1);
                child->parent = NULL;
                dir_put(r, child);
            }
        }
    }
    free_names(names, n);
}

/* --- pruning --------------------------------------------------------------------------- */

/* Is `name` a variant, named F.br/.zst/.gz for a selected coding, of a file
 * F that `pith compress` would compress? Writes F into orig. Any other file
 * (archive.tar.gz, a dotfile's variant) is never touched. */
static bool variant_of(const struct run *r, const char *name, char *orig, size_t len)
{
    size_t n = strlen(name);
    for (int c = 0; c < CODEC_COUNT; c++) {
        const char *suf = codec_suffix(c);
        size_t s = strlen(suf);
        if (!r->opt.enc[c] || n <= s + 1 || n - s >= len || strcmp(name + n - s, suf) != 0)
            continue;
        memcpy(orig, name, n - s);
        orig[n - s] = 0;
        enum codec_kind kind;
        return orig[0] != '.' && compressible(orig, &kind);
    }
    return false;
}

/* Walks the variants' tree (vfd: ROOT or --out DIR) beside the originals'
 * (ofd: the same directory in ROOT, or -1 where it is gone) and removes
 * variants whose original no longer exists. */
static void prune_dir(struct run *r, int vfd, int ofd, const char *rel, unsigned depth)
{
    char **names;
    int n = list_dir(vfd, &names);
    if (n < 0) {
        compress_error(r, rel, "", "cannot read the directory: %s", strerror(-n));
        return;
    }
    for (int i = 0; i < n; i++) {
        const char *name = names[i];
        struct stat st;
        char orig[NAME_MAX + 1], sub[PATH_MAX];
        if (is_dotfile(name, depth) || fstatat(vfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            int cv = openat(vfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            int cv_err = errno;
            int co =
                ofd < 0 ? -1 : openat(ofd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            bool gone = ofd < 0 || (co < 0 && (errno == ENOENT || errno == ENOTDIR));
            snprintf(sub, sizeof sub, "%s%s/", rel, name);
            if (cv < 0)
                compress_error(r, rel, name, "cannot open the directory: %s", strerror(cv_err));
            else if (co >= 0 || gone) /* else F's directory is there but unreadable: keep */
                prune_dir(r, cv, co, sub, depth + 1);
            if (cv >= 0)
                close(cv);
            if (co >= 0)
                close(co);
            continue;
        }
        if (!S_ISREG(st.st_mode) || !variant_of(r, name, orig, sizeof orig))
            continue;
        struct stat ost;
        if (ofd >= 0 && (fstatat(ofd, orig, &ost, AT_SYMLINK_NOFOLLOW) == 0 ||
                         (errno != ENOENT && errno != ENOTDIR)))
            continue; /* the original is there (or cannot be ruled out) */
        if (r->opt.dry_run)
            printf("would remove %s%s (%s is gone)\n", rel, name, orig);
        else if (unlinkat(vfd, name, 0) != 0) {
            compress_error(r, rel, name, "cannot remove: %s", strerror(errno));
            continue;
        } else if (!r->tty)
            printf("removed %s%s (%s is gone)\n", rel, name, orig);
        r->pruned++;
    }
    free_names(names, n);
}

void compress_tree(struct run *r, int root_fd, int out_fd)
{
    struct dir *top = calloc(1, sizeof *top);
    char *rel = strdup("");
    if (!top || !rel) {
        free(top);
        free(rel);
        compress_error(r, "", r->opt.root, "out of memory");
        return;
    }
    *top = (struct dir){.rel = rel, .fd = dup(root_fd), .out_fd = -1, .refs = 1};
    const char *stale = getenv("PITH_COMPRESS_TMP_STALE_S");
    r->tmp_stale_s = stale && *stale ? atol(stale) : TMP_STALE_S;
    top->out_fd = out_fd < 0 ? -1 : (out_fd == root_fd ? top->fd : dup(out_fd));
    if (r->tty) { /* counts first, for the bar's totals and ETA */
        r->counting = true;
        walk_dir(r, top, 0);
        r->counting = false;
    }
    pthread_t tids[JOBS_MAX];
    unsigned started = 0;
    int err = 0;
    if (!r->opt.dry_run)
        for (; started < r->opt.jobs; started++)
            if ((err = pthread_create(&tids[started], NULL, worker, r)) != 0)
                break;
    if (!r->opt.dry_run && started == 0) {
        compress_error(r, "", r->opt.root, "cannot start a thread: %s", strerror(err));
        dir_put(r, top);
        return;
    }
    walk_dir(r, top, 0);
    dir_put(r, top);
    pthread_mutex_lock(&r->mu);
    r->closed = true;
    pthread_cond_broadcast(&r->cv);
    while (r->head || r->busy)
        wait_and_draw(r);
    if (r->tty && started)
        compress_draw_bar(r);
    compress_clear_bar(r);
    pthread_mutex_unlock(&r->mu);
    for (unsigned i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
}

void compress_prune(struct run *r, int vfd, int ofd)
{
    prune_dir(r, vfd, ofd, "", 0);
}

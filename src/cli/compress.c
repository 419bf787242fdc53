/* SPDX-License-Identifier: MIT */
/*
 * compress.c - `pith compress`: walks ROOT and writes F.br, F.zst and F.gz
 * beside each compressible file F (or under a mirror tree, --out DIR), for
 * the server to send per Accept-Encoding at no CPU cost per request.
 *
 * A standalone tool inside the full binary: it uses libc, pthreads and the
 * compression libraries directly (codec.c), not src/sys, and is never linked
 * into the server's request path or the tiny build.
 *
 * Rules it keeps, each for the server's sake:
 * - The walk goes by directory descriptors (openat/fstatat, O_NOFOLLOW and
 *   AT_SYMLINK_NOFOLLOW) and never follows a symlink; dotfiles are skipped
 *   except a top-level .well-known (the server's own rule, RFC 8615).
 * - A variant is written to a temporary dotfile in its final directory,
 *   given the original's mtime, fsync'd, then renamed over the old one: a
 *   running server sees the old variant or the new one, never a part. The
 *   server ignores variants older than F, so equal mtimes mean "current".
 * - A variant is "up to date" when its mtime equals F's to the nanosecond;
 *   anything else (older, or newer because F was replaced by an older copy)
 *   is redone, so a second run writes nothing.
 * - A variant is kept only when at least 5% smaller than F; a stale one that
 *   no longer pays is removed, since the server might otherwise serve it.
 */
#include "cli/compress.h"

#include "cli/codec.h"
#include "core/mime.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MIN_SIZE    256 /* smaller files gain too little to be worth a variant */
#define MIN_SAVING  5   /* percent a variant must save to be kept */
#define QUEUE_MAX   64  /* bounds the directory descriptors held by queued files */
#define JOBS_MAX    256
#define REDRAW_NSEC 100000000L /* 10 redraws a second */

static const char usage_text[] =
    "Usage: pith compress [OPTIONS] ROOT\n"
    "Write F.br, F.zst and F.gz beside each compressible file F under ROOT, for\n"
    "clients that accept them (text, JavaScript, CSS, JSON, SVG, XML, wasm, fonts, ...).\n"
    "\n"
    "Options:\n"
    "      --level fast|max      max (default): brotli 11, zstd 19, gzip 9;\n"
    "                            fast: brotli 5, zstd 3, gzip 6\n"
    "      --jobs N              files compressed in parallel [1..256]\n"
    "                            (default: number of online CPUs)\n"
    "      --out DIR             write the variants into a mirror tree under DIR\n"
    "                            (for pith --precompressed DIR) instead of beside F\n"
    "      --encodings LIST      comma-separated subset of br,zstd,gzip (default all)\n"
    "      --prune               also remove variants whose original is gone\n"
    "      --dry-run             say what would be done; write and remove nothing\n"
    "  -h, --help                show this help and exit\n"
    "\n"
    "Skipped: symlinks, dotfiles (except .well-known), files under 256 bytes, other\n"
    "types. A variant is kept only if at least 5% smaller than F; it gets F's mtime,\n"
    "and only files changed since their variants were made are redone. Variants are\n"
    "written to a temporary file and renamed, so a running pith never serves a part.\n"
    "zstd windows stay within 8 MiB (RFC 9659), brotli's within 16 MiB.\n"
    "Exit status: 0 done, 1 some file failed (each named on stderr), 2 bad usage.\n";

struct options {
    enum codec_level level;
    unsigned jobs;
    const char *root;
    const char *out;
    bool enc[CODEC_COUNT];
    bool prune;
    bool dry_run;
};

/* A directory of the walk. The walker holds one reference while it reads the
 * directory, each queued file one more; the last one closes the descriptors.
 * parent is only used by the walker, while the parent is still open. */
struct dir {
    struct dir *parent;
    const char *name;
    char *rel; /* path below ROOT with a trailing '/', "" for ROOT */
    int fd;
    int out_fd; /* where variants go: fd itself, a mirror directory, or -1 (not yet made) */
    int refs;
};

struct item {
    struct item *next;
    struct dir *dir;
    char *name;
    unsigned todo; /* bit per codec */
};

struct tally {
    uint64_t files, original, variant;
};

struct run {
    struct options opt;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* queue, space and completion changes */
    struct item *head, *tail;
    unsigned queued, busy;
    bool closed;
    /* counters, under mu */
    struct tally per_codec[CODEC_COUNT];
    uint64_t done_files, done_bytes, total_files, total_bytes;
    unsigned compressed, current, failed, not_kept, pruned;
    bool counting; /* the count pass: no messages, no work */
    bool tty;
    bool bar_shown;
    struct timespec start, last_draw;
    atomic_uint tmp_seq;
};

/* --- messages ------------------------------------------------------------------ */

static void clear_bar(struct run *r)
{
    if (r->bar_shown) {
        fputs("\r\033[K", stderr);
        r->bar_shown = false;
    }
}

/* One line naming the file and the reason; counts a failure. Caller holds mu
 * (or is alone). */
__attribute__((format(printf, 4, 5))) static void file_error(struct run *r, const char *rel,
                                                             const char *name, const char *fmt, ...)
{
    va_list ap;
    r->failed++;
    clear_bar(r);
    fprintf(stderr, "pith compress: %s%s: ", rel, name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static void human(uint64_t n, char *out, size_t len)
{
    if (n < 1024)
        snprintf(out, len, "%llu B", (unsigned long long)n);
    else if (n < 1024 * 1024)
        snprintf(out, len, "%.1f KiB", (double)n / 1024);
    else
        snprintf(out, len, "%.1f MiB", (double)n / (1024 * 1024));
}

static unsigned term_width(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col;
    return 80;
}

/* The progress bar, redrawn in place on stderr: files, bytes, rate, ETA.
 * Caller holds mu. */
static void draw_bar(struct run *r)
{
    double t = seconds_since(&r->start);
    double rate = t > 0 ? (double)r->done_bytes / t : 0;
    uint64_t total = r->total_bytes > r->done_bytes ? r->total_bytes : r->done_bytes;
    char done_s[32], total_s[32], rate_s[32], eta[32] = "--:--", line[256], bar[21];
    human(r->done_bytes, done_s, sizeof done_s);
    human(total, total_s, sizeof total_s);
    human((uint64_t)rate, rate_s, sizeof rate_s);
    if (rate > 0 && r->done_bytes > 0) {
        unsigned left = (unsigned)((double)(total - r->done_bytes) / rate + 0.5);
        snprintf(eta, sizeof eta, "%u:%02u", left / 60, left % 60);
    }
    unsigned fill = total ? (unsigned)(20 * r->done_bytes / total) : 0;
    for (unsigned i = 0; i < 20; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[20] = 0;
    int n = snprintf(line, sizeof line, "[%s] %llu/%llu files  %s/%s  %s/s  ETA %s", bar,
                     (unsigned long long)r->done_files, (unsigned long long)r->total_files, done_s,
                     total_s, rate_s, eta);
    unsigned width = term_width() - 1;
    if (n > 0 && (unsigned)n > width)
        line[width] = 0;
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
    r->bar_shown = true;
    clock_gettime(CLOCK_MONOTONIC, &r->last_draw);
}

static void maybe_draw(struct run *r)
{
    if (r->tty && seconds_since(&r->last_draw) * 1e9 >= (double)REDRAW_NSEC)
        draw_bar(r);
}

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
        *step = "cannot create a temporary file";
        return -errno;
    }
    const struct timespec times[2] = {{.tv_nsec = UTIME_OMIT}, orig->st_mtim};
    int e = write_all(fd, p, n);
    if (e)
        *step = "cannot write";
    else if (geteuid() == 0 && fchown(fd, orig->st_uid, orig->st_gid) != 0)
        e = -errno, *step = "cannot give the original's owner to"; /* readable by --user */
    else if (fchmod(fd, orig->st_mode & 0666) != 0)
        e = -errno, *step = "cannot set the mode of";
    else if (futimens(fd, times) != 0)
        e = -errno, *step = "cannot set the mtime of";
    else if (fsync(fd) != 0)
        e = -errno, *step = "cannot fsync";
    if (close(fd) != 0 && !e)
        e = -errno, *step = "cannot close";
    if (!e && renameat(dirfd, tmp, dirfd, vname) != 0)
        e = -errno, *step = "cannot rename the temporary file to";
    if (e)
        unlinkat(dirfd, tmp, 0);
    return e;
}

/* --- one file ---------------------------------------------------------------------- */

struct outcome {
    size_t size[CODEC_COUNT];
    bool kept[CODEC_COUNT];
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
        file_error(r, it->dir->rel, it->name, "%s", why);
        pthread_mutex_unlock(&r->mu);
        return;
    }
    out->size[c] = zlen;
    const char *step = NULL;
    int e = 0;
    if ((uint64_t)zlen * 100 <= (uint64_t)n * (100 - MIN_SAVING)) {
        out->kept[c] = true;
        e = write_variant(r, it->dir->out_fd, vname, z, zlen, st, &step);
    } else if (unlinkat(it->dir->out_fd, vname, 0) != 0 && errno != ENOENT) {
        e = -errno, step = "cannot remove the stale";
    }
    free(z);
    pthread_mutex_lock(&r->mu);
    if (e)
        file_error(r, it->dir->rel, vname, "%s it: %s", step, strerror(-e));
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
    struct outcome out = {{0}, {0}};
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
    if (!in) {
        pthread_mutex_lock(&r->mu);
        file_error(r, it->dir->rel, it->name, "%s: %s", step, strerror(-err));
        r->done_files++;
        pthread_mutex_unlock(&r->mu);
        return;
    }
    for (int c = 0; c < CODEC_COUNT; c++)
        if (it->todo & (1u << c))
            do_codec(r, cs, it, c, kind, in, n, &st, &out);
    free(in);
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
        if (ok)
            do_file(r, &cs, it);
        else {
            pthread_mutex_lock(&r->mu);
            file_error(r, it->dir->rel, it->name, "out of memory for the encoder");
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
    maybe_draw(r);
}

static void enqueue(struct run *r, struct dir *d, const char *name, unsigned todo)
{
    struct item *it = malloc(sizeof *it);
    char *copy = strdup(name);
    if (!it || !copy) {
        free(it);
        free(copy);
        pthread_mutex_lock(&r->mu);
        file_error(r, d->rel, name, "out of memory");
        pthread_mutex_unlock(&r->mu);
        return;
    }
    *it = (struct item){.dir = d, .name = copy, .todo = todo};
    pthread_mutex_lock(&r->mu);
    while (r->queued >= QUEUE_MAX)
        wait_and_draw(r);
    d->refs++;
    if (r->tail)
        r->tail->next = it;
    else
        r->head = it;
    r->tail = it;
    r->queued++;
    pthread_cond_broadcast(&r->cv);
    maybe_draw(r);
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

static void on_file(struct run *r, struct dir *d, const char *name, const struct stat *st)
{
    enum codec_kind kind;
    if (st->st_size < MIN_SIZE || !compressible(name, &kind))
        return;
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
        file_error(r, d->rel, name, "cannot make its directory under --out: %s", strerror(-e));
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
            file_error(r, parent->rel, name, "cannot open the directory: %s", strerror(e));
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

static void walk_dir(struct run *r, struct dir *d, unsigned depth)
{
    char **names;
    int n = list_dir(d->fd, &names);
    if (n < 0) {
        pthread_mutex_lock(&r->mu);
        if (!r->counting)
            file_error(r, d->rel, "", "cannot read the directory: %s", strerror(-n));
        pthread_mutex_unlock(&r->mu);
        return;
    }
    for (int i = 0; i < n; i++) {
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
        file_error(r, rel, "", "cannot read the directory: %s", strerror(-n));
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
            int co =
                ofd < 0 ? -1 : openat(ofd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            bool gone = ofd < 0 || (co < 0 && (errno == ENOENT || errno == ENOTDIR));
            snprintf(sub, sizeof sub, "%s%s/", rel, name);
            if (cv < 0)
                file_error(r, rel, name, "cannot open the directory: %s", strerror(errno));
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
            file_error(r, rel, name, "cannot remove: %s", strerror(errno));
            continue;
        } else if (!r->tty)
            printf("removed %s%s (%s is gone)\n", rel, name, orig);
        r->pruned++;
    }
    free_names(names, n);
}

/* --- options ------------------------------------------------------------------------- */

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("pith compress: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (see pith compress --help)\n", stderr);
    return 2;
}

static int parse_encodings(const char *list, bool enc[CODEC_COUNT])
{
    memset(enc, 0, CODEC_COUNT * sizeof enc[0]);
    const char *p = list;
    for (;;) {
        size_t n = strcspn(p, ",");
        int found = -1;
        for (int c = 0; c < CODEC_COUNT; c++)
            if (strlen(codec_name(c)) == n && strncmp(p, codec_name(c), n) == 0)
                found = c;
        if (found < 0)
            return usage_error("--encodings: '%s' is not a list of br, zstd, gzip", list);
        enc[found] = true;
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

static int parse_jobs(const char *v, unsigned *jobs)
{
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end || errno || n < 1 || n > JOBS_MAX)
        return usage_error("--jobs: '%s' is not a number from 1 to 256", v);
    *jobs = (unsigned)n;
    return 0;
}

/* Returns 0 to run, 1 for --help (printed), 2 for bad usage (printed). */
static int parse_options(int argc, char **argv, struct options *o)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    *o = (struct options){.level = CODEC_MAX, .jobs = cpus < 1 ? 1 : (unsigned)cpus};
    for (int c = 0; c < CODEC_COUNT; c++)
        o->enc[c] = true;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options_done || a[0] != '-' || !a[1]) {
            if (o->root)
                return usage_error("more than one ROOT: '%s'", a);
            o->root = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            options_done = true;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage_text, stdout);
            return 1;
        }
        if (strcmp(a, "--prune") == 0 || strcmp(a, "--dry-run") == 0) {
            *(a[2] == 'p' ? &o->prune : &o->dry_run) = true;
            continue;
        }
        /* The rest take a value: "--flag value" or "--flag=value". */
        static const char *const valued[] = {"--level", "--jobs", "--out", "--encodings"};
        const char *v = NULL, *eq = strchr(a, '=');
        size_t flen = eq ? (size_t)(eq - a) : strlen(a);
        int which = -1;
        for (int k = 0; k < 4; k++)
            if (strlen(valued[k]) == flen && strncmp(a, valued[k], flen) == 0)
                which = k;
        if (which < 0)
            return usage_error("unknown option '%s'", a);
        if (eq)
            v = eq + 1;
        else if (i + 1 < argc)
            v = argv[++i];
        else
            return usage_error("%s needs a value", a);
        int e = 0;
        if (which == 0) {
            if (strcmp(v, "fast") && strcmp(v, "max"))
                return usage_error("--level: '%s' is neither fast nor max", v);
            o->level = strcmp(v, "fast") == 0 ? CODEC_FAST : CODEC_MAX;
        } else if (which == 1)
            e = parse_jobs(v, &o->jobs);
        else if (which == 2) {
            if (!v[0])
                return usage_error("--out: '%s' is an empty path", v);
            o->out = v;
        } else
            e = parse_encodings(v, o->enc);
        if (e)
            return e;
    }
    if (!o->root)
        return usage_error("%s", "a ROOT directory is needed: pith compress [OPTIONS] ROOT");
    return 0;
}

/* --- the run ------------------------------------------------------------------------- */

static void print_table(const struct run *r, double secs)
{
    printf("%-8s %8s %14s %14s %14s %7s\n", "encoding", "files", "original B", "variants B",
           "saved B", "saved");
    for (int c = 0; c < CODEC_COUNT; c++) {
        const struct tally *t = &r->per_codec[c];
        if (!r->opt.enc[c])
            continue;
        double pct =
            t->original ? 100.0 * (double)(t->original - t->variant) / (double)t->original : 0;
        printf("%-8s %8llu %14llu %14llu %14llu %6.1f%%\n", codec_name(c),
               (unsigned long long)t->files, (unsigned long long)t->original,
               (unsigned long long)t->variant, (unsigned long long)(t->original - t->variant), pct);
    }
    printf("%u file%s compressed, %u up to date, %u variant%s not kept (under %d%% smaller), "
           "%u pruned, %u failed, %.2f s\n",
           r->compressed, r->compressed == 1 ? "" : "s", r->current, r->not_kept,
           r->not_kept == 1 ? "" : "s", MIN_SAVING, r->pruned, r->failed, secs);
}

/* Opens ROOT and, with --out, the mirror root (made if missing). */
static int open_roots(const struct options *o, int *root_fd, int *out_fd)
{
    *root_fd = open(o->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*root_fd < 0) {
        fprintf(stderr, "pith compress: cannot open ROOT '%s': %s\n", o->root, strerror(errno));
        return 1;
    }
    *out_fd = *root_fd;
    if (!o->out)
        return 0;
    if (!o->dry_run && mkdir(o->out, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "pith compress: cannot make --out '%s': %s\n", o->out, strerror(errno));
        return 1;
    }
    *out_fd = open(o->out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*out_fd < 0 && !(o->dry_run && errno == ENOENT)) {
        fprintf(stderr, "pith compress: cannot open --out '%s': %s\n", o->out, strerror(errno));
        return 1;
    }
    return 0;
}

/* Queued files hold their directory open; lift the soft descriptor limit to
 * the hard one so deep trees never run short. */
static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static void compress_tree(struct run *r, int root_fd, int out_fd)
{
    struct dir *top = calloc(1, sizeof *top);
    char *rel = strdup("");
    if (!top || !rel) {
        free(top);
        free(rel);
        file_error(r, "", r->opt.root, "out of memory");
        return;
    }
    *top = (struct dir){.rel = rel, .fd = dup(root_fd), .out_fd = -1, .refs = 1};
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
        file_error(r, "", r->opt.root, "cannot start a thread: %s", strerror(err));
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
        draw_bar(r);
    clear_bar(r);
    pthread_mutex_unlock(&r->mu);
    for (unsigned i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
}

int compress_main(int argc, char **argv)
{
    static struct run run;
    struct run *r = &run;
    int e = parse_options(argc, argv, &r->opt);
    if (e)
        return e == 1 ? 0 : e;
    int root_fd, out_fd;
    if (open_roots(&r->opt, &root_fd, &out_fd))
        return 1;
    raise_nofile();
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->tty = isatty(STDERR_FILENO) && isatty(STDOUT_FILENO) && !r->opt.dry_run;
    clock_gettime(CLOCK_MONOTONIC, &r->start);
    compress_tree(r, root_fd, out_fd);
    if (r->opt.prune && out_fd >= 0)
        prune_dir(r, out_fd, root_fd, "", 0);
    print_table(r, seconds_since(&r->start));
    if (out_fd >= 0 && out_fd != root_fd)
        close(out_fd);
    close(root_fd);
    return r->failed ? 1 : 0;
}

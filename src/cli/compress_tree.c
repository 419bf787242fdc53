/* SPDX-License-Identifier: MIT */
/*
 * compress_tree.c - the walk of `pith compress` (directory descriptors,
 * never a symlink followed; which files are compressed and which variants
 * are missing or not current), the bounded queue and the worker threads.
 * One file's variants are compress_variant.c's; removing stale variants and
 * temporary files, and --prune, compress_stale.c's; which files and
 * directories are what, compress_files.c's; the messages and the progress
 * bar, compress_report.c's. compress.c holds the options and the run around
 * it; the rules this keeps are listed at the top of compress.c.
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
            !S_ISREG(vst.st_mode) || !compress_same_mtime(&vst, st))
            todo |= 1u << c;
    }
    return todo;
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
            compress_file(r, &cs, it);
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

static void on_file(struct run *r, struct dir *d, const char *name, const struct stat *st)
{
    enum codec_kind kind;
    if (!compress_is_compressible(name, &kind))
        return;
    if (st->st_size < MIN_SIZE) {
        if (!r->counting)
            compress_remove_stale(r, d, name, st);
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

static void walk_dir(struct run *r, struct dir *d, unsigned depth)
{
    char **names;
    int n = compress_list_dir(d->fd, &names);
    if (n < 0) {
        pthread_mutex_lock(&r->mu);
        if (!r->counting)
            compress_error(r, d->rel, "", "cannot read the directory: %s", strerror(-n));
        pthread_mutex_unlock(&r->mu);
        return;
    }
    if (!r->counting)
        compress_remove_stale_tmps(r, d, names, n);
    for (int i = 0; i < n && !compress_interrupted; i++) {
        struct stat st;
        if (compress_is_dotfile(names[i], depth) ||
            fstatat(d->fd, names[i], &st, AT_SYMLINK_NOFOLLOW))
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
    compress_free_names(names, n);
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

/* SPDX-License-Identifier: MIT */
/*
 * compress_run.h - what compress.c (options, messages, the run),
 * compress_tree.c (the walk, the queue, the workers), compress_variant.c
 * (one file's variants) and compress_stale.c (removing stale variants and
 * temporary files, --prune) share: the state of one `pith compress` run.
 * Private to those four files.
 */
#ifndef PITH_COMPRESS_RUN_H
#define PITH_COMPRESS_RUN_H

#include "cli/codec.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#define MIN_SIZE    256 /* smaller files gain too little to be worth a variant */
#define MIN_SAVING  5   /* percent a variant must save to be kept */
#define QUEUE_MAX   64  /* bounds the directory descriptors held by queued files */
#define JOBS_MAX    256
#define REDRAW_NSEC 100000000L /* 10 redraws a second */
#define TMP_STALE_S 600        /* a temporary file untouched this long was left by a crash */

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
    long tmp_stale_s; /* TMP_STALE_S, or PITH_COMPRESS_TMP_STALE_S (tests) */
};

/* Set by SIGINT/SIGTERM: the walk stops queueing, queued files are dropped,
 * files in flight are finished (so no temporary file is left behind). */
extern volatile sig_atomic_t compress_interrupted;

/* Names rel+name on stderr with the reason (clearing the progress bar
 * first) and counts a failure. Caller holds r->mu, or no worker runs. */
__attribute__((format(printf, 4, 5))) void compress_error(struct run *r, const char *rel,
                                                          const char *name, const char *fmt, ...);

/* Redraws the progress bar (on a terminal) if a redraw period has passed,
 * or at once with compress_draw_bar; compress_clear_bar erases it. Caller
 * holds r->mu. */
void compress_progress(struct run *r);
/* Seconds since t0 (CLOCK_MONOTONIC): the run's time, the bar's rate. */
double compress_seconds_since(const struct timespec *t0);
void compress_draw_bar(struct run *r);
void compress_clear_bar(struct run *r);

/* compress_files.c: whether name's media type is one compressed (textual,
 * or a binary format that compresses well), and as which kind. */
bool compress_is_compressible(const char *name, enum codec_kind *kind);

/* A dotfile is never compressed nor pruned (except ROOT's .well-known). */
bool compress_is_dotfile(const char *name, unsigned depth);

/* A variant is current when its mtime is its original's, to the nanosecond. */
bool compress_same_mtime(const struct stat *a, const struct stat *b);

/* The names in directory fd, sorted (so runs and their output are
 * reproducible). Returns the count, or -errno; *names is freed with
 * compress_free_names. */
int compress_list_dir(int fd, char ***names);
void compress_free_names(char **names, int n);

/* compress_variant.c, on a worker thread (not holding mu): the variants of
 * the file it names for the codecs in it->todo, counted in r, failures
 * named. */
void compress_file(struct run *r, struct codec_state *cs, const struct item *it);

/* compress_stale.c, on the walker's thread in the second pass: the variants
 * of name (too small for variants now) whose mtime is not st's; the
 * temporary files a killed run left in d's variant directory (names: d's
 * listing, used when the variants are beside the files). */
void compress_remove_stale(struct run *r, struct dir *d, const char *name, const struct stat *st);
void compress_remove_stale_tmps(struct run *r, struct dir *d, char **names, int n);

/* Compresses the tree under root_fd (variants beside the files, or under
 * out_fd for --out; out_fd < 0 only with --dry-run and a missing DIR) with
 * r->opt.jobs threads; failures are counted in r and named on stderr. */
void compress_tree(struct run *r, int root_fd, int out_fd);

/* Removes the variants under vfd (ROOT or --out DIR) whose original under
 * ofd (ROOT) is gone. */
void compress_prune(struct run *r, int vfd, int ofd);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * compress_run.h - what compress.c (options, messages, the run) and
 * compress_tree.c (the walk, the workers, the writes, pruning) share: the
 * state of one `pith compress` run. Private to those two files.
 */
#ifndef PITH_COMPRESS_RUN_H
#define PITH_COMPRESS_RUN_H

#include "cli/codec.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
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
void compress_draw_bar(struct run *r);
void compress_clear_bar(struct run *r);

/* Compresses the tree under root_fd (variants beside the files, or under
 * out_fd for --out; out_fd < 0 only with --dry-run and a missing DIR) with
 * r->opt.jobs threads; failures are counted in r and named on stderr. */
void compress_tree(struct run *r, int root_fd, int out_fd);

/* Removes the variants under vfd (ROOT or --out DIR) whose original under
 * ofd (ROOT) is gone. */
void compress_prune(struct run *r, int vfd, int ofd);

#endif

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
 * - F is stat'ed again after it was read and before each variant is renamed
 *   into place: a file that changed (inode, size, mtime) gets no variant,
 *   since one of its old bytes would carry the old mtime and look current.
 * - Temporary files a killed run left are removed once 10 minutes old.
 * - A variant is kept only when at least 5% smaller than F; a stale one that
 *   no longer pays is removed, since the server might otherwise serve it.
 */
#include "cli/compress.h"

#include "cli/compress_run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

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
    "A first Ctrl-C (or SIGTERM) finishes the files in flight and stops.\n"
    "Exit status: 0 done, 1 some file failed (each named on stderr) or interrupted,\n"
    "2 bad usage.\n";

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
    /* One thread per online CPU, within the thread table's JOBS_MAX. */
    *o = (struct options){.level = CODEC_MAX,
                          .jobs = cpus < 1          ? 1
                                  : cpus > JOBS_MAX ? JOBS_MAX
                                                    : (unsigned)cpus};
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
    if (r->opt.dry_run) { /* nothing was compressed: no sizes to show */
        printf("dry run: %u file%s would be compressed, %u up to date, %u variant%s would be "
               "pruned, %u failed\n",
               r->compressed, r->compressed == 1 ? "" : "s", r->current, r->pruned,
               r->pruned == 1 ? "" : "s", r->failed);
        return;
    }
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

static void on_signal(int sig)
{
    compress_interrupted = sig;
}

/* The first SIGINT/SIGTERM stops the run cleanly (files in flight are
 * finished and renamed, nothing half-written stays); a second one kills. */
static void catch_signals(void)
{
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESETHAND};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
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
    catch_signals();
    compress_tree(r, root_fd, out_fd);
    if (r->opt.prune && out_fd >= 0 && !compress_interrupted)
        compress_prune(r, out_fd, root_fd);
    print_table(r, compress_seconds_since(&r->start));
    if (out_fd >= 0 && out_fd != root_fd)
        close(out_fd);
    close(root_fd);
    if (compress_interrupted) {
        fprintf(stderr,
                "pith compress: interrupted by signal %d: the files in flight were finished, "
                "the rest is not done\n",
                (int)compress_interrupted);
        return 1;
    }
    return r->failed ? 1 : 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * compress_stale.c - what `pith compress` removes: the variants of a file
 * now too small for them whose mtime is not F's, the temporary files a
 * killed run left (by their ctime), and with --prune the variants whose
 * original is gone. Only the walker's thread (or the run itself, for
 * --prune) calls these; nothing else ever deletes a file.
 */
#include "cli/compress_run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- stale variants and temporary files ------------------------------------------ */

/* F is now too small for variants, but old ones may remain. One whose mtime
 * differs from F's was made from other content: older ones the server
 * ignores, but a newer one (F put back by rsync -t) it would serve, so they
 * go. Only the walker calls it, in the second pass. */
void compress_remove_stale(struct run *r, struct dir *d, const char *name, const struct stat *st)
{
    for (int c = 0; c < CODEC_COUNT && d->out_fd >= 0; c++) {
        char vname[NAME_MAX + 8];
        struct stat vst;
        snprintf(vname, sizeof vname, "%s%s", name, codec_suffix(c));
        if (!r->opt.enc[c] || fstatat(d->out_fd, vname, &vst, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(vst.st_mode) || compress_same_mtime(&vst, st))
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

/* A temporary file of write_variant()'s (compress_variant.c):
 * ".pith-compress-PID-SEQ.tmp". */
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
static void remove_tmps_in(struct run *r, struct dir *d, char **names, int n)
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

void compress_remove_stale_tmps(struct run *r, struct dir *d, char **names, int n)
{
    if (d->out_fd == d->fd) {
        remove_tmps_in(r, d, names, n);
        return;
    }
    if (d->out_fd < 0)
        return;
    /* The variant directory is not d itself (--out): its own listing. */
    char **out_names;
    int k = compress_list_dir(d->out_fd, &out_names);
    if (k <= 0)
        return;
    remove_tmps_in(r, d, out_names, k);
    compress_free_names(out_names, k);
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
        return orig[0] != '.' && compress_is_compressible(orig, &kind);
    }
    return false;
}

/* Walks the variants' tree (vfd: ROOT or --out DIR) beside the originals'
 * (ofd: the same directory in ROOT, or -1 where it is gone) and removes
 * variants whose original no longer exists. */
static void prune_dir(struct run *r, int vfd, int ofd, const char *rel, unsigned depth)
{
    char **names;
    int n = compress_list_dir(vfd, &names);
    if (n < 0) {
        compress_error(r, rel, "", "cannot read the directory: %s", strerror(-n));
        return;
    }
    for (int i = 0; i < n; i++) {
        const char *name = names[i];
        struct stat st;
        char orig[NAME_MAX + 1], sub[PATH_MAX];
        if (compress_is_dotfile(name, depth) || fstatat(vfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
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
    compress_free_names(names, n);
}

void compress_prune(struct run *r, int vfd, int ofd)
{
    prune_dir(r, vfd, ofd, "", 0);
}

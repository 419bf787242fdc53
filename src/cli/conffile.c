/* SPDX-License-Identifier: MIT */
/*
 * conffile.c - see conffile.h. Every file is read whole into one static
 * text area (so values can point into it for the life of the process), then
 * walked with core's line reader; an include line is expanded where it
 * stands. Nothing is allocated: bounded tables, sized above.
 */
#include "cli/conffile.h"

#include "core/bytes.h"
#include "core/glob.h"
#include "sys/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define DEPTH_MAX     8
#define MATCHES_MAX   128   /* files one include pattern may name */
#define MATCH_BYTES   16384 /* their names */
#define PATHS_BYTES   32768 /* the files' paths, for messages */
#define MESSAGES_MAX  64
#define MESSAGE_BYTES 320

struct walk {
    conffile_fn fn;
    void *ctx;
    unsigned files;
};

static char text[CONFFILE_TEXT_MAX + CONFFILE_FILES_MAX]; /* each file and its NUL */
static size_t text_used;
static char paths[PATHS_BYTES];
static size_t paths_used;
static char messages[MESSAGES_MAX][MESSAGE_BYTES];
static unsigned nmessages;

/* A copy of s that lives as long as the process (file names, messages). */
static const char *keep_path(const char *s)
{
    size_t n = strlen(s);
    if (paths_used + n + 1 > sizeof paths)
        return "(too many files)";
    char *p = paths + paths_used;
    mem_copy(p, s, n + 1);
    paths_used += n + 1;
    return p;
}

/* An error item at file:line with a message of its own. */
static void report(struct walk *w, const char *file, unsigned line, const char *a, const char *b,
                   const char *c, const char *d)
{
    char *m = messages[nmessages < MESSAGES_MAX ? nmessages++ : MESSAGES_MAX - 1];
    snprintf(m, MESSAGE_BYTES, "%s%s%s%s", a, b, c, d);
    struct conf_item it = {.kind = CONF_ERROR, .line = line, .error = m};
    w->fn(w->ctx, file, &it);
}

/* The whole of a regular file into the text area: its span, or an error
 * (a sentence) in *why. O_NONBLOCK: a FIFO at that path must not hang the
 * start; it is refused as not a regular file. */
static bool read_file(const char *path, struct span *out, const char **why)
{
    int fd = sys_openat(AT_FDCWD, path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        *why = strerrordesc_np(-fd);
        return false;
    }
    struct sys_stat st;
    int r = sys_fstat(fd, &st);
    if (r < 0 || sys_file_type(&st) != SYS_FILE_REGULAR) {
        sys_close(fd);
        *why = r < 0 ? strerrordesc_np(-r) : "not a regular file";
        return false;
    }
    char *dst = text + text_used;
    size_t room =
        CONFFILE_TEXT_MAX - (text_used < CONFFILE_TEXT_MAX ? text_used : CONFFILE_TEXT_MAX);
    size_t n = 0;
    ssize_t k = 0;
    while (n < room && (k = sys_read(fd, dst + n, room - n)) > 0)
        n += (size_t)k;
    char extra;
    bool more = n == room && sys_read(fd, &extra, 1) > 0;
    sys_close(fd);
    if (k < 0 || more) {
        *why = k < 0 ? strerrordesc_np((int)-k) : "the configuration is larger than 1 MiB in all";
        return false;
    }
    dst[n] = '\0'; /* a value at the very end is terminated here */
    text_used += n + 1;
    *out = span_make(dst, n);
    return true;
}

static void walk_file(struct walk *w, const char *path, unsigned depth, const char *from,
                      unsigned line);

/* dir of file (up to its last '/', or "." when it has none) joined with
 * rel, into out[cap]; rel as it is when absolute. */
static bool join(const char *file, const char *rel, char *out, size_t cap)
{
    if (rel[0] == '/')
        return (size_t)snprintf(out, cap, "%s", rel) < cap;
    const char *slash = strrchr(file, '/');
    int dir = slash ? (int)(slash - file) : 1;
    return (size_t)snprintf(out, cap, "%.*s/%s", dir, slash ? file : ".", rel) < cap;
}

static bool has_pattern(const char *s)
{
    return strcspn(s, "*?[") < strlen(s);
}

/* The names in dir that pattern matches, sorted, into pool (offsets in
 * off[]); their count, or -errno. */
static int list_matches(const char *dir, struct span pattern, char *pool, uint16_t *off)
{
    int fd = sys_open_dir(dir);
    if (fd < 0)
        return fd;
    char buf[8192];
    size_t used = 0;
    int n = 0;
    ssize_t got;
    while ((got = sys_getdents(fd, buf, sizeof buf)) > 0) {
        size_t at = 0;
        const char *name;
        enum sys_file_type type;
        while ((at = sys_dirent_next(buf, (size_t)got, at, &name, &type)) != 0) {
            size_t len = strlen(name);
            if (name[0] == '.' || !glob_match(pattern, span_make(name, len)))
                continue;
            if (n == MATCHES_MAX || used + len + 1 > MATCH_BYTES) {
                sys_close(fd);
                return -E2BIG;
            }
            /* Insertion in byte order: a few dozen names at most. */
            int i = n++;
            mem_copy(pool + used, name, len + 1);
            while (i > 0 && strcmp(pool + off[i - 1], pool + used) > 0) {
                off[i] = off[i - 1];
                i--;
            }
            off[i] = (uint16_t)used;
            used += len + 1;
        }
    }
    sys_close(fd);
    return got < 0 ? (int)got : n;
}

/* `include GLOB` at file:line. */
static void include(struct walk *w, const char *file, unsigned line, const char *glob,
                    unsigned depth)
{
    static char pools[DEPTH_MAX][MATCH_BYTES];
    static uint16_t offs[DEPTH_MAX][MATCHES_MAX];
    char path[PATH_MAX];
    if (!glob[0]) {
        report(w, file, line, "include: the value is empty", "", "", "");
        return;
    }
    if (depth >= DEPTH_MAX) {
        report(w, file, line, "include '", glob, "': includes nest more than 8 deep", "");
        return;
    }
    if (!join(file, glob, path, sizeof path)) {
        report(w, file, line, "include '", glob, "': the path is too long", "");
        return;
    }
    char *slash = strrchr(path, '/');
    *slash = '\0';
    if (has_pattern(path)) {
        report(w, file, line, "include '", glob, "': only the last part of a path may be a pattern",
               "");
        return;
    }
    if (!has_pattern(slash + 1)) {
        *slash = '/';
        walk_file(w, keep_path(path), depth + 1, file, line);
        return;
    }
    struct span pattern = span_make(slash + 1, strlen(slash + 1));
    if (!glob_valid(pattern)) {
        report(w, file, line, "include '", glob, "': not a valid pattern", "");
        return;
    }
    int n = list_matches(path, pattern, pools[depth], offs[depth]);
    if (n < 0) {
        report(w, file, line, "include '", glob,
               n == -E2BIG ? "': more than 128 files match" : "': cannot list its directory: ",
               n == -E2BIG ? "" : strerrordesc_np(-n));
        return;
    }
    for (int i = 0; i < n; i++) {
        char one[PATH_MAX];
        if ((size_t)snprintf(one, sizeof one, "%s/%s", path, pools[depth] + offs[depth][i]) >=
            sizeof one) {
            report(w, file, line, "include '", glob, "': a matching path is too long", "");
            continue;
        }
        walk_file(w, keep_path(one), depth + 1, file, line);
    }
}

/* path, included from from:line (NULL: the file --config names). */
static void walk_file(struct walk *w, const char *path, unsigned depth, const char *from,
                      unsigned line)
{
    struct span t;
    const char *why;
    if (w->files == CONFFILE_FILES_MAX) {
        report(w, from ? from : path, line, "more than 64 configuration files", "", "", "");
        return;
    }
    if (!read_file(path, &t, &why)) {
        if (from)
            report(w, from, line, "include: cannot read '", path, "': ", why);
        else
            report(w, path, 0, "cannot read the configuration file: ", why, "", "");
        return;
    }
    w->files++;
    struct conf_reader r = conf_reader_make(t);
    struct conf_item it;
    while (conf_next(&r, &it)) {
        /* Terminated in place: the reader is past this line already. */
        if (it.kind == CONF_OPTION)
            ((char *)it.name.p)[it.name.n] = '\0';
        if (it.kind == CONF_OPTION || it.kind == CONF_SITE_BEGIN)
            ((char *)it.value.p)[it.value.n] = '\0';
        if (it.kind == CONF_OPTION && span_eq_cstr(it.name, "include"))
            include(w, path, it.line, it.value.p, depth);
        else
            w->fn(w->ctx, path, &it);
    }
}

unsigned conffile_read(const char *path, conffile_fn fn, void *ctx)
{
    struct walk w = {fn, ctx, 0};
    walk_file(&w, path, 0, NULL, 0);
    return w.files;
}

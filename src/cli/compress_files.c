/* SPDX-License-Identifier: MIT */
/*
 * compress_files.c - what the walk, the variant writer and the pruning of
 * `pith compress` all ask of a file or a directory: whether a name is a
 * dotfile, whether a file is compressed (and as which kind), whether a
 * variant is current (its mtime is its original's), and a directory's
 * names in order. It calls nothing of the tool.
 */
#include "cli/compress_run.h"

#include "core/mime.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool compress_is_dotfile(const char *name, unsigned depth)
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
bool compress_is_compressible(const char *name, enum codec_kind *kind)
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

bool compress_same_mtime(const struct stat *a, const struct stat *b)
{
    return a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory fd, sorted (so runs and their output are
 * reproducible). Returns the count, or -errno; *names is freed by the caller
 * (each name, then the array). */
int compress_list_dir(int fd, char ***names)
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

void compress_free_names(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

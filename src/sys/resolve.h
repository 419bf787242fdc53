/* SPDX-License-Identifier: MIT */
/*
 * resolve.h - opening a normalized relative path beneath the document root so
 * that nothing outside the root, and no symlink unless allowed, is ever
 * opened. Two strategies with one meaning:
 *   - openat2(RESOLVE_BENEATH [| RESOLVE_NO_SYMLINKS]) where the kernel has
 *     it (Linux 5.6+), checked once at start by resolve_probe();
 *   - a component-by-component walk with O_NOFOLLOW otherwise, following
 *     links by hand (and only beneath the root) when allowed.
 * The kernel checks each step against the root fd, so a link swapped in
 * between a check and the open cannot escape (no TOCTOU).
 */
#ifndef PITH_RESOLVE_H
#define PITH_RESOLVE_H

#include "sys/sys.h"

#include <stdbool.h>

enum resolve_method {
    RESOLVE_OPENAT2,
    RESOLVE_WALK,
};

/* Which method this kernel supports: RESOLVE_OPENAT2 when an openat2 call
 * beneath root_fd works, else RESOLVE_WALK (ENOSYS, seccomp EPERM, ...). */
enum resolve_method resolve_probe(int root_fd);

/* The method's name for the start line: "openat2" or "walk". */
const char *resolve_method_name(enum resolve_method m);

/*
 * Opens `path` (from target_normalize: relative, no empty/"."/".." segments,
 * NUL-terminated; "" means the root itself) beneath root_fd: a regular file
 * or directory read-only, close-on-exec; anything else (FIFO, socket,
 * device) only as an O_PATH descriptor, never opened for reading, so its
 * type can be checked without side effects (a FIFO's writer never sees a
 * reader). Returns an fd, or:
 *   -ELOOP   a symlink in the path and follow_symlinks is false, or too many
 *   -EXDEV   a followed link would leave the root (absolute or climbing)
 *   -ENOENT, -ENOTDIR, -EACCES, -ENAMETOOLONG, -EMFILE ... from the kernel
 */
int resolve_open(int root_fd, const char *path, bool follow_symlinks, enum resolve_method m);

/* The stat of what resolve_open() would open, by the same rules (a link
 * in the path not allowed, nothing outside the root), without opening its
 * content: 0 or the same errors. Three system calls. */
int resolve_stat(int root_fd, const char *path, bool follow_symlinks, enum resolve_method m,
                 struct sys_stat *st);

/* The same file: inode, device, size and modification time (to the
 * nanosecond) agree. */
bool resolve_same_file(const struct sys_stat *a, const struct sys_stat *b);

/* The open-file caches' freshness rule, one for the full build's filecache.c
 * and the router profile's: an entry made from *st and last checked at
 * checked_ms is looked at again at most once a second, by resolving its path
 * again beneath root_fd with resolve_open()'s rules (O_PATH, no content
 * opened). Returns
 *    0  nothing to do: checked within the second, or out of descriptors
 *       (EMFILE, ENFILE: it cannot look now; it keeps serving the entry and
 *       looks at the next use);
 *   -1  stale: the path no longer reaches the same regular file (replaced,
 *       changed, removed, a directory in its path swapped for a link): the
 *       entry goes, and the next lookup opens afresh with every check;
 *    1  looked, and the same file: the caller sets checked_ms to now_ms
 *       (after any checks of its own). */
int resolve_recheck(int root_fd, const char *path, bool follow_symlinks, enum resolve_method m,
                    const struct sys_stat *st, int64_t checked_ms, int64_t now_ms);

/* The protocol contract's status for a failed open or stat beneath the root
 * (docs/DESIGN.md §2): 404 for what names no file, 403 for what may not be
 * served, 503 for exhausted descriptors or memory, else 500. One map for
 * the full build's handler and the router profile's. */
int resolve_error_status(int err);

#endif

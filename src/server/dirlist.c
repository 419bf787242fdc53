/* SPDX-License-Identifier: MIT */
/*
 * dirlist.c - streaming a directory listing: the directory is read twice with
 * getdents (directories first, then the rest), each fill turns a bounded
 * number of entries into one HTTP/1.1 chunk (or raw bytes for HTTP/1.0,
 * close-delimited), so a directory of 10,000 entries costs neither memory
 * nor a long stall of the worker. Hidden here: dotfiles, special files, and
 * symlinks unless they may be followed (then shown without metadata, which
 * would describe the target, possibly outside the root).
 */
#include "core/bytes.h"
#include "core/respond.h"
#include "server/server.h"
#include "sys/sys.h"

#include <errno.h>

#define CHUNK_HEAD       10  /* "XXXXXXXX\r\n": a fixed-width size, patched in later */
#define FILL_MAX_ENTRIES 128 /* fstatat calls per fill: bounds one wake-up */

static void chunk_open(struct buf *b, bool chunked, size_t *mark)
{
    *mark = b->len;
    if (chunked)
        buf_put(b, "00000000\r\n", CHUNK_HEAD);
}

/* Patches the size into the chunk opened at mark, or drops an empty chunk
 * (a zero size would end the body). */
static void chunk_close(struct buf *b, bool chunked, size_t mark)
{
    if (!chunked)
        return;
    size_t n = b->len - mark - CHUNK_HEAD;
    if (n == 0) {
        b->len = mark;
        return;
    }
    static const char hex[] = "0123456789abcdef";
    for (int i = 7; i >= 0; i--, n >>= 4)
        b->p[mark + (size_t)i] = hex[n & 15];
    buf_put(b, "\r\n", 2);
}

void dirlist_start(struct worker *w, struct conn *c, int dirfd, enum listing_format f)
{
    size_t path_len = cstr_len(w->path);
    bool chunked = c->log_minor == 1;
    if (!chunked)
        c->keep_alive = false; /* HTTP/1.0: the close ends the body */
    struct buf b = handler_head_begin(w, c, 200);
    respond_field_cstr(&b, "Content-Type",
                       f == LISTING_JSON ? "application/json; charset=utf-8"
                                         : "text/html; charset=utf-8");
    /* The listing has no validator and changes with the directory. */
    respond_field_cstr(&b, "Cache-Control", "no-cache");
    respond_field_cstr(&b, "Vary", "Accept");
    if (chunked)
        respond_field_cstr(&b, "Transfer-Encoding", "chunked");
    if (!c->keep_alive || w->draining)
        respond_field_cstr(&b, "Connection", "close");
    respond_end_head(&b);
    c->head_left = (uint32_t)b.len;
    if (c->head_only) {
        sys_close(dirfd);
        conn_push_out(c, b.len);
        return;
    }
    size_t mark;
    chunk_open(&b, chunked, &mark);
    listing_begin(&b, f, span_make(w->path, path_len));
    chunk_close(&b, chunked, mark);
    if (b.full) {
        /* A path so deep or so escaped that its breadcrumb does not fit
         * the out region: refuse rather than truncate the page. */
        sys_close(dirfd);
        handler_error(w, c, 414);
        return;
    }
    conn_push_out(c, b.len);
    c->body = BODY_LISTING;
    c->body_fd = dirfd;
    c->body_fd_owned = true;
    c->listing = (struct listing_state){.pass = 0, .first = true, .chunked = chunked, .format = f};
}

/* Fills *e for one directory entry; false when it is not to be shown in
 * this pass. */
static bool entry_for(struct worker *w, struct conn *c, const char *name, enum sys_file_type hint,
                      struct listing_entry *e)
{
    if (name[0] == '.')
        return false; /* ".", ".." and dotfiles */
    /* getdents' type spares a stat of every entry in the wrong pass. */
    if (hint != SYS_FILE_UNKNOWN && (hint == SYS_FILE_DIR) != (c->listing.pass == 0))
        return false;
    struct sys_stat st;
    if (sys_fstatat(c->body_fd, name, &st, false) < 0)
        return false;
    *e = (struct listing_entry){.name = span_make(name, cstr_len(name))};
    switch (sys_file_type(&st)) {
    case SYS_FILE_DIR: e->is_dir = true; break;
    case SYS_FILE_REGULAR: break;
    case SYS_FILE_LINK:
        if (!w->srv->cfg.follow_symlinks)
            return false;
        return c->listing.pass == 1; /* no metadata: it would be the target's */
    default: return false;
    }
    if (e->is_dir != (c->listing.pass == 0))
        return false;
    e->has_meta = true;
    e->size = st.size;
    e->mtime = st.mtime_sec;
    return true;
}

/* The next raw entry name, reading more of the directory as needed;
 * NULL at the end of a pass. */
static const char *next_name(struct conn *c, enum sys_file_type *type, int *err)
{
    struct listing_state *ls = &c->listing;
    for (;;) {
        if (ls->dir_off < ls->dir_len) {
            const char *name;
            size_t next = sys_dirent_next(conn_dir(c), ls->dir_len, ls->dir_off, &name, type);
            ls->dir_off = (uint32_t)next;
            return name;
        }
        ssize_t n = sys_getdents(c->body_fd, conn_dir(c), POOL_DIR_SIZE);
        if (n <= 0) {
            *err = (int)n;
            return NULL;
        }
        ls->dir_len = (uint32_t)n;
        ls->dir_off = 0;
    }
}

int dirlist_fill(struct worker *w, struct conn *c)
{
    struct listing_state *ls = &c->listing;
    struct buf b = buf_make(conn_out(c), POOL_OUT_SIZE);
    size_t mark;
    chunk_open(&b, ls->chunked, &mark);
    for (int count = 0; count < FILL_MAX_ENTRIES && ls->pass < 2 &&
                        b.cap - b.len > LISTING_ENTRY_MAX + LISTING_TAIL_MAX;) {
        int err = 0;
        enum sys_file_type hint;
        const char *name = next_name(c, &hint, &err);
        if (!name) {
            if (err < 0)
                return err;
            ls->pass++;
            ls->dir_len = ls->dir_off = 0;
            if (ls->pass == 1 && sys_rewind_dir(c->body_fd) < 0)
                return -EIO;
            continue;
        }
        struct listing_entry e;
        if (!entry_for(w, c, name, hint, &e))
            continue;
        listing_entry(&b, ls->format, &e, ls->first);
        ls->first = false;
        count++;
    }
    if (ls->pass == 2)
        listing_end(&b, ls->format, SPAN_LIT(SERVER_NAME));
    chunk_close(&b, ls->chunked, mark);
    if (ls->pass == 2) {
        if (ls->chunked)
            buf_put(&b, "0\r\n\r\n", 5);
        c->body = BODY_NONE; /* the descriptor is released with the response */
    }
    PITH_ASSERT(!b.full);
    conn_push_out(c, b.len);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * dirlist.c - a directory listing as a body source: the directory is read
 * twice with getdents (directories first, then the rest), and each fill
 * scans a bounded number of entries (shown or not) and turns those it shows
 * into one piece of the body, then lets other connections run. So neither a
 * directory of a million entries nor one of a million hidden ones costs
 * memory or a long stall of the worker. The length is unknown in advance:
 * the HTTP/1 encoder sends it chunked (1.1) or close-delimited (1.0).
 * Hidden here: dotfiles, special files, and symlinks unless they may be
 * followed (then shown without metadata, which would describe the target,
 * possibly outside the root).
 */
#include "http/dirlist.h"

#include "base/server.h"
#include "base/worker.h"
#include "core/bytes.h"
#include "core/response.h"
#include "http/exchange.h"
#include "http/reply.h"
#include "sys/sys.h"

#include <errno.h>

#define FILL_MAX_SHOWN   128 /* entries written (an fstatat each) per fill */
#define FILL_MAX_SCANNED 512 /* entries looked at per fill, hidden ones included */

/* The listing's state, at the start of the exchange's scratch memory; the
 * getdents buffer follows it. */
struct listing_src {
    int fd;      /* the directory (owned by the exchange) */
    int pass;    /* 0: directories, 1: everything else, 2: done */
    bool first;  /* no entry written yet (JSON commas) */
    bool follow; /* --follow-symlinks: links are shown */
    enum listing_format format;
    uint32_t dir_len, dir_off; /* getdents bytes in the buffer */
    uint32_t lead;             /* bytes before the out room that go with the next piece */
};

static struct listing_src *state_of(struct exchange *x)
{
    return (struct listing_src *)(void *)x->scratch;
}

/* getdents records are 8-byte aligned from the buffer's start. */
#define DIRBUF_OFF ((sizeof(struct listing_src) + 15) & ~(size_t)15)

static char *dirbuf_of(struct exchange *x)
{
    return x->scratch + DIRBUF_OFF;
}

static size_t dirbuf_cap(const struct exchange *x)
{
    return x->scratch_cap - DIRBUF_OFF;
}

/* Fills *e for one directory entry; false when it is not to be shown in
 * this pass. */
static bool entry_for(const struct listing_src *ls, const char *name, enum sys_file_type hint,
                      struct listing_entry *e)
{
    if (name[0] == '.')
        return false; /* ".", ".." and dotfiles */
    /* getdents' type spares a stat of every entry in the wrong pass. */
    if (hint != SYS_FILE_UNKNOWN && (hint == SYS_FILE_DIR) != (ls->pass == 0))
        return false;
    struct sys_stat st;
    if (sys_fstatat(ls->fd, name, &st, false) < 0)
        return false;
    *e = (struct listing_entry){.name = span_make(name, cstr_len(name))};
    switch (sys_file_type(&st)) {
    case SYS_FILE_DIR: e->is_dir = true; break;
    case SYS_FILE_REGULAR: break;
    case SYS_FILE_LINK:
        if (!ls->follow)
            return false;
        return ls->pass == 1; /* no metadata: it would be the target's */
    default: return false;
    }
    if (e->is_dir != (ls->pass == 0))
        return false;
    e->has_meta = true;
    e->size = st.size;
    e->mtime = st.mtime_sec;
    return true;
}

/* The next raw entry name, reading more of the directory as needed; NULL at
 * the end of a pass (*err 0) or on an error (*err < 0). */
static const char *next_name(struct exchange *x, enum sys_file_type *type, int *err)
{
    struct listing_src *ls = state_of(x);
    for (;;) {
        if (ls->dir_off < ls->dir_len) {
            const char *name;
            size_t next = sys_dirent_next(dirbuf_of(x), ls->dir_len, ls->dir_off, &name, type);
            ls->dir_off = (uint32_t)next;
            return name;
        }
        ssize_t n = sys_getdents(ls->fd, dirbuf_of(x), dirbuf_cap(x));
        if (n <= 0) {
            *err = (int)n;
            return NULL;
        }
        ls->dir_len = (uint32_t)n;
        ls->dir_off = 0;
    }
}

static int listing_fill(struct worker *w, struct exchange *x)
{
    struct listing_src *ls = state_of(x);
    struct buf b = exchange_out_room(x);
    int shown = 0, scanned = 0;
    while (ls->pass < 2 && shown < FILL_MAX_SHOWN && scanned < FILL_MAX_SCANNED &&
           b.cap - b.len > LISTING_ENTRY_MAX + LISTING_TAIL_MAX) {
        int err = 0;
        enum sys_file_type hint;
        const char *name = next_name(x, &hint, &err);
        if (!name) {
            if (err < 0)
                return err;
            ls->pass++;
            ls->dir_len = ls->dir_off = 0;
            if (ls->pass == 1 && sys_rewind_dir(ls->fd) < 0)
                return -EIO;
            continue;
        }
        scanned++;
        struct listing_entry e;
        if (!entry_for(ls, name, hint, &e))
            continue;
        listing_entry(&b, ls->format, &e, ls->first);
        ls->first = false;
        shown++;
    }
    if (ls->pass == 2)
        listing_end(&b, ls->format, SPAN_LIT(SERVER_NAME));
    PITH_ASSERT(!b.full);
    exchange_out_commit(x, b.len);
    /* The page's start, written by dirlist_start() just before, goes in
     * the same piece (one chunk). */
    exchange_body_mem(x, b.p - ls->lead, ls->lead + b.len);
    ls->lead = 0;
    (void)w;
    return ls->pass == 2 ? BODY_DONE : BODY_PAUSE;
}

static const struct body_source listing_source = {.fill = listing_fill, .done = NULL};

void dirlist_start(struct worker *w, struct exchange *x, int dirfd, enum listing_format f)
{
    struct span path = span_make(w->path, cstr_len(w->path));
    /* A path so deep or so escaped that its breadcrumb would not fit the
     * out region next to a head: refuse rather than truncate the page. */
    struct buf count = buf_counter();
    listing_begin(&count, f, path);
    if (count.len > x->out.cap / 2) {
        sys_close(dirfd);
        reply_error(w, x, 414);
        return;
    }
    x->fd = dirfd; /* closed when the exchange ends */
    *state_of(x) = (struct listing_src){.fd = dirfd,
                                        .pass = 0,
                                        .first = true,
                                        .follow = exchange_site(w, x)->conf->follow_symlinks,
                                        .format = f};
    struct response r;
    response_init(&r, 200);
    response_add(&r, FIELD(CONTENT_TYPE),
                 f == LISTING_JSON ? SPAN_LIT("application/json; charset=utf-8")
                                   : SPAN_LIT("text/html; charset=utf-8"));
    /* The listing has no validator and changes with the directory. */
    response_add(&r, FIELD(CACHE_CONTROL), SPAN_LIT("no-cache"));
    response_add(&r, FIELD(VARY), SPAN_LIT("Accept"));
    r.length_known = false;
    exchange_reply(w, x, &r);
    if (!x->body) {
        exchange_body_source(x, &listing_source); /* HEAD: nothing to list */
        return;
    }
    /* The page's start goes out with the first entries: written here, where
     * the path is at hand, and queued by the first fill, which follows at
     * once and writes right after it. */
    struct buf b = exchange_out_room(x);
    listing_begin(&b, f, path);
    PITH_ASSERT(!b.full);
    exchange_out_commit(x, b.len);
    state_of(x)->lead = (uint32_t)b.len;
    exchange_body_source(x, &listing_source);
}

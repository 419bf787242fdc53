/* SPDX-License-Identifier: MIT */
/*
 * listing.h - the directory listing as HTML (a page people can use: breadcrumb,
 * sortable columns, dark scheme, no external resources) or JSON, written one
 * entry at a time so a directory of any size streams through a small buffer.
 * Every name is HTML-escaped in text and percent-encoded in hrefs; this module
 * never decides which entries to show (the caller hides dotfiles).
 */
#ifndef PITH_LISTING_H
#define PITH_LISTING_H

#include "core.h"

enum listing_format {
    LISTING_HTML,
    LISTING_JSON,
};

/* Room an entry needs at most, whatever its name (up to 255 bytes, each
 * escaped to at most 6): callers leave this much free before listing_entry. */
#define LISTING_ENTRY_MAX 3072
#define LISTING_TAIL_MAX  2048

struct listing_entry {
    struct span name; /* one path segment, as on disk (any bytes but '/' and NUL) */
    bool is_dir;
    bool has_meta; /* size and mtime known (false for a link not followed) */
    uint64_t size;
    int64_t mtime;
};

/* The page head up to the first entry. `path` is the directory's decoded path
 * relative to the root without leading or trailing '/' ("" for the root); it
 * is shown (escaped) in the title and the breadcrumb. The head grows with the
 * square of the path's depth (each breadcrumb link holds its whole prefix),
 * so callers check b->full afterwards rather than predict its size. */
void listing_begin(struct buf *b, enum listing_format f, struct span path);

/* One entry; `first` is true for the first entry written (JSON commas). */
void listing_entry(struct buf *b, enum listing_format f, const struct listing_entry *e, bool first);

/* The end of the page, with `server` (e.g. "pith/0.1.0") in the footer. */
void listing_end(struct buf *b, enum listing_format f, struct span server);

/* Writes n bytes as "1.5 KiB" style text (exact bytes below 1 KiB). */
void listing_human_size(struct buf *b, uint64_t n);

#endif

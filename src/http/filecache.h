/* SPDX-License-Identifier: MIT */
/*
 * filecache.h - the per-worker open-file and small-file cache.
 *
 * An entry is keyed by its root (one per site, issue 22: two sites never
 * share an entry for the same relative path) and the normalized relative
 * path, and holds what answering
 * for that file needs without a system call: the stat, the ETag and
 * Last-Modified, the media type, the fields of a 200 response (with their
 * HTTP/1 form, so a hit copies none of them), and
 * either the file's bytes (files up to --cache-max-file, within --cache-size
 * MiB per worker) or an open descriptor for sendfile.
 *
 * Freshness: an entry is revalidated with one fstatat at most once a second;
 * a different inode, size or mtime (or a vanished file) drops it, so a
 * replaced or deleted file is served stale for at most a second, and an
 * in-memory copy is always served whole (never a truncated mix).
 *
 * Bounds: a fixed table of entries (LRU), so descriptors and memory are
 * capped; an entry in use by a response in flight is never freed under it
 * (reference count), only unlinked.
 *
 * Precompressed variants (issue 11): with variants on, a miss also looks
 * for F.br, F.zst and F.gz (beside F, or at the same relative path under
 * the mirror tree), each opened by the same resolver and rules as F. A
 * variant is kept when it is a regular file no older than F; it gets its
 * own bytes (memory or descriptor), size, ETag and 200 field block, and the
 * entry remembers what each of the three paths showed (a stat, or nothing)
 * so that revalidation covers F and its variants together: any change in
 * any of the four drops the entry. All descriptors held by entries, F's and
 * the variants', count against one budget of --cache-entries; when a new
 * entry's would not fit even after idle entries are dropped, F is served
 * uncached and without variants.
 */
#ifndef PITH_FILECACHE_H
#define PITH_FILECACHE_H

#include "base/server.h"
#include "core/accept_encoding.h"
#include "core/date.h"
#include "core/etag.h"
#include "core/response.h"
#include "sys/resolve.h"
#include "sys/sys.h"

#include <stdbool.h>
#include <stdint.h>

/* pith-tiny serves no precompressed variants (issue 12 leaves them out):
 * there this is a constant false, so the compiler drops the variant code
 * and the settings' `precompressed` is never consulted. */
#ifdef PITH_TINY
#define FILECACHE_VARIANTS false
#else
#define FILECACHE_VARIANTS true
#endif

#define FC_KEY_MAX   256 /* longer paths bypass the cache */
#define FC_HEAD_MAX  384 /* the constant head fields of one file (Vary included) */
#define FC_VHEAD_MAX 512 /* those of a variant (a longer ETag, Content-Encoding) */
#define FC_MIN_BLOCK 256

/* One precompressed variant of an entry's file. */
struct fc_variant {
    bool seen;          /* the path held something (st) at the last look */
    bool used;          /* served: a regular file beneath the root, no older than F */
    struct sys_stat st; /* what the path held, for revalidation */
    int fd;             /* -1 when the bytes are in memory (or unused) */
    char *body;
    uint8_t body_class;
    uint8_t etag_len;
    char etag[ETAG_VARIANT_MAX];
    struct field_block fields; /* a 200's fields: F's, plus Content-Encoding and Vary */
    char head[FC_VHEAD_MAX];   /* their HTTP/1 form */
};

struct fc_entry {
    struct fc_entry *hnext;               /* hash chain */
    struct fc_entry *lru_prev, *lru_next; /* most recent at the list's head */
    uint32_t hash;
    uint32_t refs; /* responses in flight using this entry */
    bool linked;   /* in the hash table (false: dropped, freed at refs 0) */
    bool in_use;   /* the slot holds an entry */
    int fd;        /* -1 when the body is in memory (or the file is empty) */
    char *body;    /* the file's bytes, or NULL */
    uint8_t body_class;
    int64_t checked_ms;
    struct sys_stat st;
    struct span type;
    struct span cache_control; /* a constant, or the settings' string */
    bool immutable;
    bool has_lm;
    int64_t lm;
    uint8_t etag_len;
    char etag[ETAG_MAX];
    char lm_text[DATE_IMF_LEN];
    struct field_block fields;  /* Content-Type .. Accept-Ranges of a 200 */
    char head[FC_HEAD_MAX];     /* their HTTP/1 form, for a cached entry */
    const struct fc_root *root; /* with key: what the entry is for */
    uint16_t key_len;
    char key[FC_KEY_MAX];
    bool has_variants; /* some variant is used: every response says Vary */
    struct fc_variant var[AE_CODINGS];
};

/* What all the sites' entries share: one table, one budget. */
struct fc_settings {
    enum resolve_method resolve;
    uint32_t entries;
    uint64_t mem_bytes; /* --cache-size */
    uint32_t max_file;  /* --cache-max-file: larger files go by sendfile */
};

#define FC_CLASSES 13 /* 256 B .. 1 MiB blocks: up to --cache-max-file's maximum */

struct filecache {
    struct fc_settings cfg;
    struct fc_entry *slots;
    uint32_t next_unused;
    struct fc_entry **table; /* hash buckets */
    uint32_t mask;
    struct fc_entry lru; /* sentinel */
    uint32_t count;
    char *arena;
    uint64_t arena_used;
    char *free_blocks[FC_CLASSES]; /* singly linked through the block's first bytes */
    uint32_t fds;                  /* descriptors entries hold (at most cfg.entries) */
    uint64_t hits, misses;
};

/* What a lookup found. */
struct fc_result {
    struct fc_entry *entry; /* a regular file, referenced: filecache_release() it */
    int fd;                 /* else, when >= 0: an open non-regular file (a
                             * directory...) or an uncached regular file; the
                             * caller owns it; st describes it */
    struct sys_stat st;
    int err; /* else: -errno of the open beneath the root */
};

/* Reserves the table and the memory arena (address space only). 0 or -ENOMEM. */
int filecache_init(struct filecache *fc, const struct fc_settings *s);

/* Looks path (normalized, NUL-terminated) up beneath root (which must
 * outlive the cache), opening it there on a miss. now_ms paces
 * revalidation; now_sec clamps Last-Modified. */
void filecache_lookup(struct filecache *fc, const struct fc_root *root, const char *path,
                      int64_t now_ms, int64_t now_sec, struct fc_result *out);

/* Drops a reference taken by filecache_lookup(). */
void filecache_release(struct filecache *fc, struct fc_entry *e);

/* Fills an entry's validators, type and field block for st with root's
 * caching rules (also used for files that are not cached); the block keeps
 * no HTTP/1 form. */
void filecache_describe(const struct fc_root *root, struct fc_entry *e, const struct sys_stat *st,
                        struct span name, int64_t now_sec);

#endif

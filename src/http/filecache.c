/* SPDX-License-Identifier: MIT */
/*
 * filecache.c - see filecache.h. A fixed array of entries (handed out from
 * an untouched tail first, so unused capacity costs no resident memory), a
 * power-of-two hash table with chaining, an LRU list, and a block arena for
 * small files with one free list per power-of-two size class. Nothing is
 * allocated after filecache_init().
 */
#include "http/filecache.h"

#include "core/bytes.h"
#include "core/glob.h"
#include "core/mime.h"

#include <errno.h>

/* FNV-1a over the root (which site) and the path: short keys, no attacker
 * gain from collisions beyond a longer chain in a table of bounded size. */
static uint32_t hash_key(const struct fc_root *root, const char *p, size_t n)
{
    uint32_t h = 2166136261u ^ (uint32_t)((uintptr_t)root >> 4);
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 16777619u;
    return h;
}

int filecache_init(struct filecache *fc, const struct fc_settings *s)
{
    *fc = (struct filecache){.cfg = *s};
    uint32_t buckets = 64;
    while (buckets < 2 * s->entries)
        buckets <<= 1;
    /* --cache-entries 0: no slots, every lookup opens the file. */
    fc->slots = s->entries ? sys_map((size_t)s->entries * sizeof *fc->slots) : NULL;
    fc->table = sys_map((size_t)buckets * sizeof *fc->table);
    fc->arena = s->mem_bytes ? sys_map(s->mem_bytes) : NULL;
    if ((s->entries && !fc->slots) || !fc->table || (s->mem_bytes && !fc->arena))
        return -ENOMEM;
    fc->mask = buckets - 1;
    fc->lru.lru_next = fc->lru.lru_prev = &fc->lru;
    return 0;
}

/* ---- small-file memory ------------------------------------------------------ */

static int size_class(uint64_t n)
{
    int c = 0;
    uint64_t size = FC_MIN_BLOCK;
    while (size < n && c < FC_CLASSES) {
        size <<= 1;
        c++;
    }
    return c < FC_CLASSES ? c : -1;
}

static char *block_get(struct filecache *fc, int c)
{
    uint64_t size = (uint64_t)FC_MIN_BLOCK << c;
    char *b = fc->free_blocks[c];
    if (b) {
        mem_copy(&fc->free_blocks[c], b, sizeof(char *));
        return b;
    }
    if (!fc->arena || fc->cfg.mem_bytes - fc->arena_used < size)
        return NULL;
    b = fc->arena + fc->arena_used;
    fc->arena_used += size;
    return b;
}

static void block_put(struct filecache *fc, char *b, int c)
{
    mem_copy(b, &fc->free_blocks[c], sizeof(char *));
    fc->free_blocks[c] = b;
}

/* ---- entries ----------------------------------------------------------------- */

static void lru_unlink(struct fc_entry *e)
{
    e->lru_prev->lru_next = e->lru_next;
    e->lru_next->lru_prev = e->lru_prev;
}

static void lru_push_front(struct filecache *fc, struct fc_entry *e)
{
    e->lru_next = fc->lru.lru_next;
    e->lru_prev = &fc->lru;
    fc->lru.lru_next->lru_prev = e;
    fc->lru.lru_next = e;
}

static void hash_unlink(struct filecache *fc, struct fc_entry *e)
{
    struct fc_entry **pp = &fc->table[e->hash & fc->mask];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    e->linked = false;
}

/* Gives back a descriptor or a block an entry (or one of its variants)
 * holds. */
static void bytes_free(struct filecache *fc, int *fd, char **body, uint8_t body_class)
{
    if (*fd >= 0) {
        sys_close(*fd);
        fc->fds--;
    }
    *fd = -1;
    if (*body)
        block_put(fc, *body, body_class);
    *body = NULL;
}

/* Frees what the entry holds and puts it on the LRU tail for reuse. */
static void entry_free(struct filecache *fc, struct fc_entry *e)
{
    bytes_free(fc, &e->fd, &e->body, e->body_class);
    for (int c = 0; c < AE_CODINGS && FILECACHE_VARIANTS; c++)
        bytes_free(fc, &e->var[c].fd, &e->var[c].body, e->var[c].body_class);
    e->in_use = false;
    fc->count--;
}

/* Takes an entry out of service: no new lookups find it; its resources go
 * when the last response using it ends. */
static void entry_drop(struct filecache *fc, struct fc_entry *e)
{
    if (e->linked)
        hash_unlink(fc, e);
    if (e->refs == 0)
        entry_free(fc, e);
}

void filecache_release(struct filecache *fc, struct fc_entry *e)
{
    PITH_ASSERT(e->refs > 0);
    if (--e->refs == 0 && !e->linked)
        entry_free(fc, e);
}

/* A slot for a new entry: an untouched one, a free one, or the least
 * recently used one that no response holds. NULL when all are busy. */
static struct fc_entry *entry_slot(struct filecache *fc)
{
    if (fc->next_unused < fc->cfg.entries) {
        struct fc_entry *e = &fc->slots[fc->next_unused++];
        e->fd = -1;
        for (int c = 0; c < AE_CODINGS; c++)
            e->var[c].fd = -1;
        lru_push_front(fc, e);
        return e;
    }
    for (struct fc_entry *e = fc->lru.lru_prev; e != &fc->lru; e = e->lru_prev) {
        if (!e->in_use) {
            lru_unlink(e);
            lru_push_front(fc, e);
            return e;
        }
        if (e->refs == 0) {
            entry_drop(fc, e);
            lru_unlink(e);
            lru_push_front(fc, e);
            return e;
        }
    }
    return NULL;
}

static struct fc_entry *find(struct filecache *fc, const struct fc_root *root, const char *key,
                             size_t n, uint32_t h)
{
    for (struct fc_entry *e = fc->table[h & fc->mask]; e; e = e->hnext)
        if (e->hash == h && e->root == root && e->key_len == n && mem_eq(e->key, key, n))
            return e;
    return NULL;
}

static struct span last_segment(struct span path)
{
    size_t i = path.n;
    while (i > 0 && path.p[i - 1] != '/')
        i--;
    return span_make(path.p + i, path.n - i);
}

void filecache_describe(const struct fc_root *s, struct fc_entry *e, const struct sys_stat *st,
                        struct span name, int64_t now_sec)
{
    e->st = *st;
    e->has_variants = false;
    e->type = mime_lookup(name);
    e->immutable = false;
    struct span base = last_segment(name);
    for (unsigned i = 0; i < s->nimmutable && !e->immutable; i++)
        e->immutable = glob_match(span_make(s->immutable[i], cstr_len(s->immutable[i])), base);
    e->etag_len = (uint8_t)etag_make(st->ino, st->size, st->mtime_sec, st->mtime_nsec, e->etag);
    /* RFC 9110 §8.8.2.1: never a Last-Modified later than the Date. */
    e->lm = st->mtime_sec > now_sec ? now_sec : st->mtime_sec;
    e->has_lm = date_format_imf(e->lm, e->lm_text) != 0;
    e->cache_control = e->immutable ? SPAN_LIT("max-age=31536000, immutable")
                                    : span_make(s->cache_control, cstr_len(s->cache_control));
    struct field_block *fb = &e->fields;
    fb->n = 0;
    fb->h1 = (struct span){0};
    fb->lasting = false; /* a scratch description: its values are copied */
    fb->f[fb->n++] = (struct response_field){FIELD(CONTENT_TYPE), e->type};
    if (e->has_lm)
        fb->f[fb->n++] =
            (struct response_field){FIELD(LAST_MODIFIED), span_make(e->lm_text, DATE_IMF_LEN)};
    fb->f[fb->n++] = (struct response_field){FIELD(ETAG), span_make(e->etag, e->etag_len)};
    fb->f[fb->n++] = (struct response_field){FIELD(CACHE_CONTROL), e->cache_control};
    fb->f[fb->n++] = (struct response_field){FIELD(ACCEPT_RANGES), SPAN_LIT("bytes")};
}

/* Keeps the block's HTTP/1 form in the entry (it lives as long as the
 * entry, which every response using it holds). A file with variants says
 * Vary on its identity response too (RFC 9110 §12.5.5). */
static void keep_h1(struct fc_entry *e)
{
    if (e->has_variants)
        e->fields.f[e->fields.n++] =
            (struct response_field){FIELD(VARY), SPAN_LIT("Accept-Encoding")};
    struct buf b = buf_make(e->head, sizeof e->head);
    field_block_encode_h1(&b, &e->fields);
    PITH_ASSERT(!b.full);
    e->fields.h1 = span_make(e->head, b.len);
    e->fields.lasting = true; /* the entry: every exchange using it holds it */
}

/* Reads a whole file of `size` bytes into a block; false (and no block) if
 * it changed size under us or memory is short: the entry then keeps the fd. */
static bool load_body(struct filecache *fc, int fd, uint64_t size, char **body, uint8_t *body_class)
{
    int c = size_class(size);
    if (size == 0 || size > fc->cfg.max_file || c < 0)
        return false;
    char *b = block_get(fc, c);
    if (!b)
        return false;
    uint64_t got = 0;
    while (got < size) {
        ssize_t n = sys_pread(fd, b + got, size - got, got);
        if (n == -EINTR)
            continue;
        if (n <= 0)
            break;
        got += (uint64_t)n;
    }
    if (got != size) {
        block_put(fc, b, c);
        return false;
    }
    *body = b;
    *body_class = (uint8_t)c;
    return true;
}

/* The bytes of a file just opened: in memory (fd closed, *fd = -1) or by
 * its descriptor (kept in *fd, not yet counted in fc->fds). */
static void take_bytes(struct filecache *fc, int *fd, uint64_t size, char **body,
                       uint8_t *body_class)
{
    *body = NULL;
    if (load_body(fc, *fd, size, body, body_class) || size == 0) {
        sys_close(*fd);
        *fd = -1;
    }
}

/* ---- precompressed variants ------------------------------------------------------ */

/* A variant is stale when F was modified in a later second. Seconds, not
 * nanoseconds: brotli(1) -k copies F's time only to the second, so a fresh
 * variant made by it would otherwise always look older. */
static bool not_older(const struct sys_stat *v, const struct sys_stat *f)
{
    return v->mtime_sec >= f->mtime_sec;
}

/* The variant's path: the entry's key and the coding's suffix. false when
 * it does not fit (then there is no variant). */
static bool variant_path(const struct fc_entry *e, int c, char *out, size_t cap)
{
    struct span sfx = ae_coding_suffix(c);
    if (e->key_len + sfx.n + 1 > cap)
        return false;
    mem_copy(out, e->key, e->key_len);
    mem_copy(out + e->key_len, sfx.p, sfx.n);
    out[e->key_len + sfx.n] = '\0';
    return true;
}

/* The variant's validators and 200 fields: F's type, Last-Modified and
 * Cache-Control, its own ETag and length, Content-Encoding, Vary. */
static void variant_describe(struct fc_entry *e, int c)
{
    struct fc_variant *v = &e->var[c];
    v->etag_len =
        (uint8_t)etag_make_variant(span_make(e->etag, e->etag_len), ae_coding_name(c), v->st.ino,
                                   v->st.size, v->st.mtime_sec, v->st.mtime_nsec, v->etag);
    struct field_block *fb = &v->fields;
    fb->n = 0;
    fb->f[fb->n++] = (struct response_field){FIELD(CONTENT_TYPE), e->type};
    fb->f[fb->n++] = (struct response_field){FIELD(CONTENT_ENCODING), ae_coding_name(c)};
    if (e->has_lm)
        fb->f[fb->n++] =
            (struct response_field){FIELD(LAST_MODIFIED), span_make(e->lm_text, DATE_IMF_LEN)};
    fb->f[fb->n++] = (struct response_field){FIELD(ETAG), span_make(v->etag, v->etag_len)};
    fb->f[fb->n++] = (struct response_field){FIELD(CACHE_CONTROL), e->cache_control};
    fb->f[fb->n++] = (struct response_field){FIELD(ACCEPT_RANGES), SPAN_LIT("bytes")};
    fb->f[fb->n++] = (struct response_field){FIELD(VARY), SPAN_LIT("Accept-Encoding")};
    struct buf b = buf_make(v->head, sizeof v->head);
    field_block_encode_h1(&b, fb);
    PITH_ASSERT(!b.full);
    fb->h1 = span_make(v->head, b.len);
    fb->lasting = true;
}

/* Whether the variant file fd (st) may stand for F (f) under coding c: not
 * empty, starting with the coding's magic number (gzip 1f 8b, RFC 1952;
 * zstd 28 b5 2f fd, RFC 8878), and for brotli, which has none, smaller than
 * F. An empty or truncated file, or junk named like a variant, would
 * otherwise win as the smallest representation and be sent as the body. */
static bool variant_valid(int fd, const struct sys_stat *st, const struct sys_stat *f, int c)
{
    static const unsigned char gzip_magic[] = {0x1f, 0x8b}, zstd_magic[] = {0x28, 0xb5, 0x2f, 0xfd};
    const unsigned char *magic = c == AE_GZIP ? gzip_magic : c == AE_ZSTD ? zstd_magic : NULL;
    size_t n = c == AE_GZIP ? sizeof gzip_magic : c == AE_ZSTD ? sizeof zstd_magic : 0;
    if (st->size == 0)
        return false;
    if (!magic)
        return st->size < f->size;
    unsigned char head[4];
    return sys_pread(fd, head, n, 0) == (ssize_t)n && mem_eq(head, magic, n);
}

/* Looks at one variant's path: records what it holds (for revalidation)
 * and, when it may be served, takes its bytes. Opened by the resolver with
 * F's rules, so a symlink (unless followed beneath the directory), a FIFO
 * or anything outside is never opened for reading. */
static void variant_fill(struct filecache *fc, struct fc_entry *e, int c)
{
    const struct fc_root *s = e->root;
    struct fc_variant *v = &e->var[c];
    char path[FC_KEY_MAX + 8];
    v->seen = v->used = false;
    v->fd = -1;
    v->body = NULL;
    if (!variant_path(e, c, path, sizeof path))
        return;
    int fd = resolve_open(s->variant_dir_fd, path, s->follow_symlinks, fc->cfg.resolve);
    if (fd < 0)
        return;
    if (sys_fstat(fd, &v->st) < 0) {
        sys_close(fd);
        return;
    }
    v->seen = true;
    if (sys_file_type(&v->st) != SYS_FILE_REGULAR || !not_older(&v->st, &e->st) ||
        !variant_valid(fd, &v->st, &e->st, c)) {
        sys_close(fd); /* a directory, stale (F is newer), or not of its coding */
        return;
    }
    v->fd = fd;
    take_bytes(fc, &v->fd, v->st.size, &v->body, &v->body_class);
    v->used = true;
    e->has_variants = true;
}

/* Drops idle entries that hold descriptors, least recent first, until
 * `need` more fit the budget. false when they cannot. */
static bool fds_make_room(struct filecache *fc, uint32_t need)
{
    for (struct fc_entry *e = fc->lru.lru_prev;
         e != &fc->lru && fc->fds + need > fc->cfg.entries;) {
        struct fc_entry *prev = e->lru_prev;
        bool holds = e->fd >= 0;
        for (int c = 0; c < AE_CODINGS && FILECACHE_VARIANTS; c++)
            holds = holds || e->var[c].fd >= 0;
        if (e->in_use && e->refs == 0 && holds)
            entry_drop(fc, e);
        e = prev;
    }
    return fc->fds + need <= fc->cfg.entries;
}

/* The variants of a new entry, and the descriptor budget for all it holds
 * (need: 1 when F's descriptor stays open): true when the entry may be kept
 * (its descriptors counted), false when they do not fit (every variant's
 * bytes given back). */
static bool variants_fill(struct filecache *fc, struct fc_entry *e, uint32_t need)
{
    for (int c = 0; c < AE_CODINGS; c++) {
        e->var[c].seen = e->var[c].used = false;
        e->var[c].fd = -1;
        e->var[c].body = NULL;
        if (FILECACHE_VARIANTS && e->root->precompressed) {
            variant_fill(fc, e, c);
            need += e->var[c].fd >= 0;
        }
    }
    if (fds_make_room(fc, need)) {
        fc->fds += need;
        return true;
    }
    for (int c = 0; c < AE_CODINGS && FILECACHE_VARIANTS; c++) {
        struct fc_variant *v = &e->var[c];
        if (v->fd >= 0)
            sys_close(v->fd);
        v->fd = -1;
        if (v->body)
            block_put(fc, v->body, v->body_class);
        v->body = NULL;
    }
    return false;
}

/* A miss: open beneath the root and, for a regular file, make an entry. */
static void fill(struct filecache *fc, const struct fc_root *s, const char *path, size_t n,
                 uint32_t h, int64_t now_ms, int64_t now_sec, struct fc_result *out)
{
    int fd = resolve_open(s->root_fd, path, s->follow_symlinks, fc->cfg.resolve);
    if (fd < 0) {
        out->err = fd;
        return;
    }
    int r = sys_fstat(fd, &out->st);
    if (r < 0) {
        sys_close(fd);
        out->err = r;
        return;
    }
    struct fc_entry *e = NULL;
    if (sys_file_type(&out->st) == SYS_FILE_REGULAR && n <= FC_KEY_MAX)
        e = entry_slot(fc);
    if (!e) {
        out->fd = fd; /* a directory, or no room: served uncached */
        return;
    }
    filecache_describe(s, e, &out->st, span_make(path, n), now_sec);
    e->root = s;
    mem_copy(e->key, path, n);
    e->key_len = (uint16_t)n;
    e->hash = h;
    e->checked_ms = now_ms;
    e->fd = -1;
    e->body = NULL;
    bool in_memory = load_body(fc, fd, e->st.size, &e->body, &e->body_class) || e->st.size == 0;
    if (!variants_fill(fc, e, !in_memory)) {
        /* No descriptor to spare: F alone, uncached, without variants. */
        if (e->body)
            block_put(fc, e->body, e->body_class);
        e->body = NULL;
        out->fd = fd;
        return;
    }
    if (in_memory)
        sys_close(fd); /* in memory: no descriptor held */
    else
        e->fd = fd;
    for (int c = 0; c < AE_CODINGS && FILECACHE_VARIANTS; c++)
        if (e->var[c].used)
            variant_describe(e, c);
    keep_h1(e);
    e->in_use = true;
    e->refs = 1;
    e->hnext = fc->table[h & fc->mask];
    fc->table[h & fc->mask] = e;
    e->linked = true;
    fc->count++;
    out->entry = e;
}

/* Does each variant path hold what it held when the entry was made (the
 * same file, or still nothing)? A variant that appeared, changed or went
 * away makes the entry be made afresh. */
static bool variants_unchanged(struct filecache *fc, const struct fc_entry *e)
{
    const struct fc_root *s = e->root;
    for (int c = 0; c < AE_CODINGS; c++) {
        const struct fc_variant *v = &e->var[c];
        char path[FC_KEY_MAX + 8];
        struct sys_stat st;
        if (!variant_path(e, c, path, sizeof path))
            continue;
        int r = resolve_stat(s->variant_dir_fd, path, s->follow_symlinks, fc->cfg.resolve, &st);
        if (r == -EMFILE || r == -ENFILE)
            continue; /* cannot look now: keep what we have */
        if ((r == 0) != v->seen || (r == 0 && !resolve_same_file(&st, &v->st)))
            return false;
    }
    return true;
}

/* Still the same file, reached by the same rules (resolve_recheck, the rule
 * the router profile's cache follows too), with the same variants? */
static bool still_fresh(struct filecache *fc, struct fc_entry *e, int64_t now_ms)
{
    const struct fc_root *s = e->root;
    int r = resolve_recheck(s->root_fd, e->key, s->follow_symlinks, fc->cfg.resolve, &e->st,
                            e->checked_ms, now_ms);
    if (r <= 0)
        return r == 0;
    if (FILECACHE_VARIANTS && s->precompressed && !variants_unchanged(fc, e))
        return false;
    e->checked_ms = now_ms;
    return true;
}

void filecache_lookup(struct filecache *fc, const struct fc_root *root, const char *path,
                      int64_t now_ms, int64_t now_sec, struct fc_result *out)
{
    size_t n = cstr_len(path);
    uint32_t h = hash_key(root, path, n);
    *out = (struct fc_result){.fd = -1};
    struct fc_entry *e = n <= FC_KEY_MAX ? find(fc, root, path, n, h) : NULL;
    if (e && !still_fresh(fc, e, now_ms)) {
        entry_drop(fc, e);
        e = NULL;
    }
    if (e) {
        fc->hits++;
        e->refs++;
        lru_unlink(e);
        lru_push_front(fc, e);
        out->entry = e;
        out->st = e->st;
        return;
    }
    fc->misses++;
    fill(fc, root, path, n, h, now_ms, now_sec, out);
}

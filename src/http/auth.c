/* SPDX-License-Identifier: MIT */
/*
 * auth.c - basic auth (see auth.h). The master reads the password files
 * into memory before forking (as it reads TLS keys: the workers may have
 * dropped privileges and are confined by then); a worker checks
 * credentials with crypt_rn against that memory, remembers the good ones,
 * and counts the bad ones per client in the shared tables of clients.c.
 */
#include "http/auth.h"

#include "base/clients.h"
#include "base/server.h"
#include "base/stats.h"
#include "base/worker.h"
#include "core/basic_auth.h"
#include "core/bytes.h"
#include "core/htpasswd.h"
#include "core/siphash.h"
#include "http/exchange.h"
#include "http/reply.h"
#include "sys/sys.h"

#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#define FILES_MAX  64
#define USERS_MAX  16384
#define TEXT_MAX   (1024 * 1024) /* all password files together */
#define CACHE_WAYS 4
#define CACHE_SETS 64   /* 256 remembered credentials per worker */
#define CRED_MAX   1024 /* decoded credentials' bytes: more is no credential */

struct auth_user {
    struct span user;
    const char *hash; /* NUL-terminated in text[] */
    size_t hash_len;
};

struct auth_file {
    const char *path;
    unsigned first, n; /* its users in users[] */
};

struct auth_server {
    struct auth_file files[FILES_MAX];
    unsigned nfiles;
    int rule_file[SETTINGS_AUTH_MAX]; /* each rule's file */
    struct auth_user users[USERS_MAX];
    unsigned nusers;
    size_t used;
    char text[TEXT_MAX];
};

struct cached {
    uint64_t key[2];
    uint32_t used; /* the worker's tick when last used; 0: empty */
};

struct auth_worker {
    struct siphash_key k;
    uint32_t tick;
    struct cached set[CACHE_SETS][CACHE_WAYS];
    struct crypt_data cd; /* crypt_rn's state: 32 KiB, not on the stack */
};

/* ---- the master: reading the files ------------------------------------------------ */

static int problem(const char *file, unsigned line, const char *user, size_t ulen, const char *why)
{
    if (user)
        fprintf(stderr, "pith: %s:%u: user '%.*s': %s\n", file, line, (int)ulen, user, why);
    else
        fprintf(stderr, "pith: %s:%u: %s\n", file, line, why);
    return 1;
}

/* The file whole into a's text; its span, or NULL after saying why. */
static char *read_whole(struct auth_server *a, const char *origin, const char *path, size_t *len)
{
    int fd = sys_openat(AT_FDCWD, path, O_RDONLY | O_NONBLOCK);
    struct sys_stat st;
    int r = fd < 0 ? fd : sys_fstat(fd, &st);
    const char *why = r < 0 ? strerrordesc_np(-r) : NULL;
    if (!why && sys_file_type(&st) != SYS_FILE_REGULAR)
        why = "not a regular file";
    char *dst = a->text + a->used;
    size_t room = TEXT_MAX - a->used, n = 0;
    ssize_t k = 0;
    while (!why && n < room && (k = sys_read(fd, dst + n, room - n)) > 0)
        n += (size_t)k;
    if (!why && (k < 0 || n == room))
        why = k < 0 ? strerrordesc_np((int)-k) : "the password files are larger than 1 MiB in all";
    if (fd >= 0)
        sys_close(fd);
    if (why) {
        fprintf(stderr, "pith: %s: auth: cannot read the password file %s: %s\n", origin, path,
                why);
        return NULL;
    }
    dst[n] = '\0';
    a->used += n + 1;
    *len = n;
    return dst;
}

/* One file's lines into users[]; 0, or 1 after its problems (all said). */
static int load_lines(struct auth_server *a, struct auth_file *f, char *t, size_t n)
{
    int bad = 0;
    unsigned line = 0;
    for (size_t at = 0; at < n;) {
        size_t end = at + mem_find(t + at, n - at, '\n');
        struct htpasswd_entry e = {{0}, {0}};
        const char *why;
        line++;
        int r = htpasswd_line(span_make(t + at, end - at), &e, &why);
        at = end + 1;
        if (r == 0)
            continue;
        if (r < 0) { /* the user is named when the line got as far */
            bad |= problem(f->path, line, e.user.n ? e.user.p : NULL, e.user.n, why);
            continue;
        }
        ((char *)e.hash.p)[e.hash.n] = '\0'; /* its '\n' or '\r', or the end */
        /* libxcrypt's own verdict on the setting: one it would not take, or
         * takes only for old hashes, is refused now, not at a sign-in. */
        if (crypt_checksalt(e.hash.p) != CRYPT_SALT_OK) {
            bad |= problem(f->path, line, e.user.p, e.user.n,
                           "libxcrypt refuses this hash (crypt_checksalt): make it again");
            continue;
        }
        for (unsigned i = f->first; i < a->nusers; i++)
            if (a->users[i].user.n == e.user.n && mem_eq(a->users[i].user.p, e.user.p, e.user.n)) {
                bad |= problem(f->path, line, e.user.p, e.user.n, "named twice in the file");
                e.user.n = 0;
                break;
            }
        if (!e.user.n)
            continue;
        if (a->nusers == USERS_MAX)
            return problem(f->path, line, NULL, 0, "more than 16384 users in all");
        a->users[a->nusers++] = (struct auth_user){e.user, e.hash.p, e.hash.n};
    }
    f->n = a->nusers - f->first;
    if (!bad && f->n == 0)
        bad = problem(f->path, line, NULL, 0, "no user in the password file");
    return bad;
}

/* The file of rule r: read once, however many rules name it. */
static int load_rule(struct auth_server *a, const struct auth_rule *r, int *index)
{
    for (unsigned i = 0; i < a->nfiles; i++)
        if (strcmp(a->files[i].path, r->file) == 0) {
            *index = (int)i;
            return 0;
        }
    if (a->nfiles == FILES_MAX) {
        fprintf(stderr, "pith: %s: auth: more than 64 password files\n", r->origin);
        return 1;
    }
    size_t n;
    char *t = read_whole(a, r->origin, r->file, &n);
    if (!t)
        return 1;
    struct auth_file *f = &a->files[a->nfiles];
    *f = (struct auth_file){r->file, a->nusers, 0};
    *index = (int)a->nfiles++;
    return load_lines(a, f, t, n);
}

int auth_load(struct server *srv)
{
    const struct settings *set = &srv->set;
    if (set->nauth == 0)
        return 0;
    struct auth_server *a = sys_map(sizeof *a);
    if (!a) {
        fprintf(stderr, "pith: cannot reserve memory for the password files\n");
        return 1;
    }
    int bad = 0;
    for (unsigned i = 0; i < set->nauth; i++)
        bad |= load_rule(a, &set->auth[i], &a->rule_file[i]);
    srv->auth = a;
    return bad ? 2 : 0;
}

/* ---- a worker: checking a request ---------------------------------------------------- */

/* The rule of x's site whose prefix covers path: the longest. */
static int rule_for(const struct settings *set, const struct site_conf *site, const char *path)
{
    int best = -1;
    size_t n = strlen(path), best_len = 0;
    for (unsigned i = site->auth_first; i < site->auth_first + site->nauth; i++) {
        const struct auth_rule *r = &set->auth[i];
        size_t k = r->path_len;
        /* "private" covers "private" itself and "private/..."; "" covers all */
        bool covers = k == 0 || (n >= k && mem_eq(path, r->path, k) && (n == k || path[k] == '/'));
        if (covers && (best < 0 || k >= best_len)) {
            best = (int)i;
            best_len = k;
        }
    }
    return best;
}

static struct auth_worker *state(struct worker *w)
{
    if (!w->auth) {
        w->auth = sys_map(sizeof *w->auth);
        if (w->auth && sys_random(&w->auth->k, sizeof w->auth->k) < 0) {
            sys_unmap(w->auth, sizeof *w->auth);
            w->auth = NULL;
        }
    }
    return w->auth;
}

/* The value of the request's only Authorization field: 1, 0 (none), -1
 * (more than one: nothing is believed). */
static int authorization(const struct http_request *req, struct span *value)
{
    int found = 0;
    for (size_t i = 0; i < req->nfields; i++)
        if (span_eq_nocase_cstr(req->fields[i].name, "Authorization")) {
            *value = req->fields[i].value;
            found = found ? -1 : 1;
        }
    return found;
}

static bool same128(const uint64_t a[2], const uint64_t b[2])
{
    return ((a[0] ^ b[0]) | (a[1] ^ b[1])) == 0; /* no early exit */
}

static void credential_key(const struct auth_worker *aw, int rule, struct span value,
                           uint64_t out[2])
{
    char buf[CRED_MAX + 8];
    size_t n = value.n > CRED_MAX ? CRED_MAX : value.n;
    buf[0] = (char)rule;
    buf[1] = (char)(rule >> 8);
    mem_copy(buf + 2, value.p, n);
    siphash128(&aw->k, buf, n + 2, out);
}

static bool cache_has(struct auth_worker *aw, const uint64_t key[2])
{
    struct cached *set = aw->set[key[0] % CACHE_SETS];
    for (int i = 0; i < CACHE_WAYS; i++)
        if (set[i].used && same128(set[i].key, key)) {
            set[i].used = ++aw->tick ? aw->tick : (aw->tick = 1);
            return true;
        }
    return false;
}

static void cache_put(struct auth_worker *aw, const uint64_t key[2])
{
    struct cached *set = aw->set[key[0] % CACHE_SETS], *old = &set[0];
    for (int i = 1; i < CACHE_WAYS; i++)
        if (set[i].used < old->used)
            old = &set[i]; /* the least recently used, an empty one first */
    old->key[0] = key[0];
    old->key[1] = key[1];
    old->used = ++aw->tick ? aw->tick : (aw->tick = 1);
}

/* Does crypt's output equal the stored hash? Every byte is looked at,
 * whatever the first difference. */
static bool same_hash(const char *got, const char *hash, size_t n)
{
    unsigned char diff = 0;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(got[i] ^ hash[i]);
    return diff == 0 && got[n] == '\0';
}

/* crypt_rn of password against the user's hash; an unknown user's
 * password is checked against the file's first hash, so that the answer
 * takes as long either way. */
static bool verified(struct auth_worker *aw, const struct auth_server *a, const struct auth_file *f,
                     struct span user, struct span password)
{
    const struct auth_user *u = NULL;
    for (unsigned i = f->first; i < f->first + f->n && !u; i++)
        if (a->users[i].user.n == user.n && mem_eq(a->users[i].user.p, user.p, user.n))
            u = &a->users[i];
    const struct auth_user *h = u ? u : &a->users[f->first];
    const char *got = crypt_rn(password.p, h->hash, &aw->cd, sizeof aw->cd);
    return got && same_hash(got, h->hash, h->hash_len) && u;
}

static void challenge(struct worker *w, struct exchange *x, const struct auth_rule *r)
{
    char v[128];
    struct buf b = buf_make(v, sizeof v);
    buf_put_cstr(&b, "Basic realm=\"");
    buf_put_cstr(&b, r->realm); /* checked at start: no '"' or '\\' */
    buf_put_cstr(&b, "\", charset=\"UTF-8\"");
    PITH_ASSERT(!b.full);
    reply_error_with(w, x, 401, FIELD(WWW_AUTHENTICATE), span_make(v, b.len));
}

static void too_many(struct worker *w, struct exchange *x, int64_t retry)
{
    char v[24];
    struct buf b = buf_make(v, sizeof v);
    buf_put_u64(&b, (uint64_t)(retry > 0 ? retry : 1));
    reply_error_with(w, x, 429, FIELD(RETRY_AFTER), span_make(v, b.len));
}

bool auth_allow(struct worker *w, struct exchange *x, const struct http_request *req,
                const char *path)
{
    const struct server *srv = w->srv;
    int rule = srv->auth ? rule_for(&srv->set, exchange_site(w, x)->conf, path) : -1;
    if (rule < 0)
        return true;
    const struct auth_rule *r = &srv->set.auth[rule];
    struct span value;
    struct auth_worker *aw = state(w);
    if (!aw) {
        reply_error(w, x, 503); /* no memory for the check: never let it through */
        return false;
    }
    if (authorization(req, &value) != 1) {
        stats_add(&w->stats->auth[STATS_AUTH_MISSING], 1);
        challenge(w, x, r);
        return false;
    }
    uint64_t key[2];
    credential_key(aw, rule, value, key);
    if (cache_has(aw, key)) {
        stats_add(&w->stats->auth[STATS_AUTH_CACHED], 1);
        return true;
    }
    int64_t retry;
    if (x->client_key &&
        clients_failures(srv->clients, x->client_key, w->now_sec, &retry) >= AUTH_FAILURES_MAX) {
        stats_add(&w->stats->auth[STATS_AUTH_LIMITED], 1);
        too_many(w, x, retry);
        return false;
    }
    char cred[CRED_MAX + 1];
    struct span user, password, token;
    const struct auth_server *a = srv->auth;
    bool ok = basic_auth_parse(value, cred, sizeof cred, &user, &password, &token) == 0 &&
              verified(aw, a, &a->files[a->rule_file[rule]], user, password);
    if (ok) {
        stats_add(&w->stats->auth[STATS_AUTH_OK], 1);
        cache_put(aw, key);
        return true;
    }
    stats_add(&w->stats->auth[STATS_AUTH_FAILED], 1);
    if (x->client_key &&
        !clients_failed(srv->clients, w->index, x->client_key, w->now_sec, AUTH_WINDOW_S)) {
        too_many(w, x, AUTH_WINDOW_S); /* too many clients failing at once to remember */
        return false;
    }
    challenge(w, x, r);
    return false;
}

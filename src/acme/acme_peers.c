/* SPDX-License-Identifier: MIT */
/*
 * acme_peers.c - several pith instances behind one balancer, sharing one
 * state directory (issue 35). The lock of a name (acme_store.c) makes one
 * instance order it, but the CA's validation connects to whichever
 * instance the balancer picks, so every instance must answer the
 * challenges of an order in progress. The ordering instance writes each
 * challenge it publishes to challenges/NAME as well (JSON: the token, the
 * key authorization, tls-alpn-01's certificate and throwaway key: public
 * things, as in the shared table), and, when another instance is alive,
 * waits PROPAGATE_S before asking the CA to validate; every ACME process
 * looks at challenges/ each CHAL_POLL_S while another instance is alive
 * and copies what it finds, for its own names, into its own challenge
 * table, which its workers answer from.
 *
 * Who is alive: each ACME process holds a shared OFD lock on the first
 * byte of locks/.instances for its whole life (the kernel drops it when the
 * process dies; NFS carries it), and asks F_OFD_GETLK whether an exclusive
 * lock on that byte would conflict: locks of its own open file description
 * never do, so the answer is "another instance holds it" or "no one does".
 * A single instance thus never waits and never reads challenges/.
 */
#include "acme/acme_internal.h"

#include "sys/sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHAL_POLL_S   1   /* an instance looks at challenges/ this often */
#define PROPAGATE_S   3   /* the orderer waits this long before the CA validates */
#define CHAL_LIFE_S   600 /* a challenge file older than this is a dead holder's */
#define CHAL_FILE_MAX 16384

struct acme_peers {
    int dirfd;
    int instances; /* locks/.instances, shared-locked; -1: cannot tell (assume others) */
    struct acme_shared *sh;
    const char *names[ACME_SLOTS]; /* NULL: no name in that slot */
    bool own[ACME_SLOTS];          /* this instance's own challenge is in the slot */
    char mirrored[ACME_SLOTS][ACME_TOKEN_MAX + 1]; /* another's token in the slot; "" none */
    int64_t last_look;
};

struct acme_peers *acme_peers_new(int dirfd, struct acme_shared *sh,
                                  const char *const names[ACME_SLOTS])
{
    struct acme_peers *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->dirfd = dirfd;
    p->sh = sh;
    memcpy(p->names, names, sizeof p->names);
    /* What a previous ACME process left in the table (it died mid-order)
     * is no one's now. */
    for (unsigned i = 0; i < ACME_SLOTS; i++)
        acme_shared_withdraw(sh, i);
    p->instances =
        openat(dirfd, "locks/.instances", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    if (p->instances >= 0 && fcntl(p->instances, F_OFD_SETLK, &fl) < 0) {
        close(p->instances);
        p->instances = -1;
    }
    if (p->instances < 0)
        acme_log("cannot take locks/.instances (%s): assuming other instances share the state "
                 "directory",
                 strerror(errno));
    return p;
}

bool acme_peers_others(const struct acme_peers *p)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    if (p->instances < 0 || fcntl(p->instances, F_OFD_GETLK, &fl) < 0)
        return true; /* cannot tell: the safe answer */
    return fl.l_type != F_UNLCK;
}

/* ---- the orderer --------------------------------------------------------------------- */

static void chal_rel(const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "challenges/%s", name);
}

void acme_peers_publish(struct acme_peers *p, unsigned slot, const struct acme_challenge *c)
{
    if (slot >= ACME_SLOTS)
        return;
    p->own[slot] = true;
    p->mirrored[slot][0] = '\0';
    acme_shared_publish(p->sh, slot, c);
    if (!acme_peers_others(p))
        return;
    char rel[300];
    chal_rel(c->name, rel, sizeof rel);
    json_t *j = json_pack("{s:s, s:s, s:s#, s:s#, s:I}", "token", c->token, "keyauth", c->keyauth,
                          "cert", c->cert, (int)c->cert_len, "key", c->key, (int)c->key_len,
                          "until", (json_int_t)(time(NULL) + CHAL_LIFE_S));
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    int r = text ? acme_store_write(p->dirfd, rel, text, strlen(text)) : -ENOMEM;
    free(text);
    if (r < 0) {
        acme_log("%s: cannot write %s for the other instances (%s): the CA's validation may "
                 "reach one that cannot answer it",
                 c->name, rel, strerror(-r));
        return;
    }
    /* Every other instance looks at challenges/ within CHAL_POLL_S. */
    acme_peers_sleep(p, PROPAGATE_S);
}

void acme_peers_withdraw(struct acme_peers *p, unsigned slot)
{
    if (slot >= ACME_SLOTS)
        return;
    acme_shared_withdraw(p->sh, slot);
    p->own[slot] = false;
    acme_peers_clear(p, slot);
}

void acme_peers_clear(struct acme_peers *p, unsigned slot)
{
    char rel[300];
    if (slot >= ACME_SLOTS || !p->names[slot])
        return;
    chal_rel(p->names[slot], rel, sizeof rel);
    if (unlinkat(p->dirfd, rel, 0) < 0 && errno != ENOENT)
        acme_log("cannot remove %s: %s", rel, strerror(errno));
}

/* ---- the others ----------------------------------------------------------------------- */

/* A challenge file of another instance for name: checked field by field
 * (the directory is shared, its files are not taken on trust for more than
 * what the table holds), and not past its life. */
static bool chal_read(struct acme_peers *p, const char *name, struct acme_challenge *c)
{
    char rel[300], *text = NULL;
    size_t n;
    chal_rel(name, rel, sizeof rel);
    if (acme_store_read(p->dirfd, rel, CHAL_FILE_MAX, &text, &n) < 0)
        return false;
    json_t *j = json_loadb(text, n, JSON_REJECT_DUPLICATES, NULL);
    free(text);
    const char *token = json_string_value(json_object_get(j, "token"));
    const char *keyauth = json_string_value(json_object_get(j, "keyauth"));
    json_t *cert = json_object_get(j, "cert"), *key = json_object_get(j, "key");
    json_int_t until = json_integer_value(json_object_get(j, "until"));
    memset(c, 0, sizeof *c);
    size_t tn = token ? strlen(token) : 0;
    bool ok = token && keyauth && json_is_string(cert) && json_is_string(key) &&
              until > (json_int_t)time(NULL) && acme_token_ok(span_make(token, tn)) &&
              strlen(keyauth) <= ACME_KEYAUTH_MAX && strncmp(keyauth, token, tn) == 0 &&
              keyauth[tn] == '.' && json_string_length(cert) <= sizeof c->cert &&
              json_string_length(key) <= sizeof c->key;
    if (ok) {
        snprintf(c->name, sizeof c->name, "%s", name);
        memcpy(c->token, token, tn + 1);
        memcpy(c->keyauth, keyauth, strlen(keyauth) + 1);
        c->cert_len = (uint16_t)json_string_length(cert);
        c->key_len = (uint16_t)json_string_length(key);
        memcpy(c->cert, json_string_value(cert), c->cert_len);
        memcpy(c->key, json_string_value(key), c->key_len);
    }
    json_decref(j);
    return ok;
}

void acme_peers_mirror(struct acme_peers *p)
{
    int64_t now = (int64_t)time(NULL);
    bool others = acme_peers_others(p);
    p->last_look = now;
    static struct acme_challenge c; /* one thread; keeps the stack small */
    for (unsigned i = 0; i < ACME_SLOTS; i++) {
        if (!p->names[i] || p->own[i])
            continue;
        bool have = others && chal_read(p, p->names[i], &c);
        if (have && strcmp(c.token, p->mirrored[i]) != 0) {
            acme_shared_publish(p->sh, i, &c);
            memcpy(p->mirrored[i], c.token, sizeof p->mirrored[i]);
            acme_log("%s: answering the %s challenge of another instance's order", c.name,
                     c.cert_len ? "tls-alpn-01" : "http-01");
        } else if (!have && p->mirrored[i][0]) {
            acme_shared_withdraw(p->sh, i);
            p->mirrored[i][0] = '\0';
        }
    }
}

void acme_peers_sleep(struct acme_peers *p, unsigned seconds)
{
    static const int sigs[] = {SIGTERM, SIGINT};
    for (unsigned k = 0; k < seconds * (1000 / 250); k++) {
        /* A stop in the middle of an order: its file goes (the next holder
         * of the lock would remove it anyway), and so does the process. */
        if (sys_sigwait(sigs, ARRAY_LEN(sigs), 250) > 0) {
            for (unsigned i = 0; i < ACME_SLOTS; i++)
                if (p->own[i])
                    acme_peers_clear(p, i);
            sys_exit(0);
        }
        if ((int64_t)time(NULL) - p->last_look >= CHAL_POLL_S)
            acme_peers_mirror(p);
    }
}

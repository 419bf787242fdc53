/* SPDX-License-Identifier: MIT */
/*
 * acme_shared.c - the challenge table: a MAP_SHARED area the master maps
 * before forking, which the ACME process (its only writer) fills with the
 * pending challenges and every worker reads while answering one: http-01's
 * key authorization for a token, tls-alpn-01's certificate for a name.
 * Everything in it is public (RFC 8555 §8.1: the key authorization is what
 * anyone asking the CA's validator would see), so a worker holding it
 * learns nothing it could abuse. No lock: each slot is a seqlock, so a
 * reader never takes half of an old challenge and half of a new one, and
 * a worker can never block the ACME process (nor the reverse).
 */
#include "acme/acme_internal.h"

#include "core/bytes.h"
#include "sys/sys.h"

#include <string.h>

struct acme_slot {
    uint32_t seq; /* odd while the writer is in the slot */
    uint32_t used;
    struct acme_challenge c;
};

struct acme_shared {
    struct acme_slot slot[ACME_SLOTS];
};

struct acme_shared *acme_shared_new(void)
{
    return sys_map_shared(sizeof(struct acme_shared));
}

/* ---- the writer (the ACME process) --------------------------------------------- */

static void write_slot(struct acme_slot *s, const struct acme_challenge *c)
{
    uint32_t seq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
    __atomic_store_n(&s->seq, seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE); /* odd before any byte moves */
    if (c)
        memcpy(&s->c, c, sizeof *c);
    __atomic_store_n(&s->used, c != NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELEASE);
}

void acme_shared_publish(struct acme_shared *sh, unsigned i, const struct acme_challenge *c)
{
    if (i < ACME_SLOTS)
        write_slot(&sh->slot[i], c);
}

void acme_shared_withdraw(struct acme_shared *sh, unsigned i)
{
    if (i < ACME_SLOTS)
        write_slot(&sh->slot[i], NULL);
}

/* ---- the readers (workers) ------------------------------------------------------ */

int acme_shared_readonly(struct acme_shared *sh)
{
    return sys_map_readonly(sh, sizeof *sh);
}

/* A consistent copy of slot s into *out: false when it is empty, or kept
 * changing under us (the ACME process rewrites a slot a few times a
 * minute at most, so a few tries always suffice in practice). */
static bool read_slot(const struct acme_slot *s, struct acme_challenge *out)
{
    for (int tries = 0; tries < 4; tries++) {
        uint32_t a = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
        if (a & 1)
            continue;
        if (!__atomic_load_n(&s->used, __ATOMIC_RELAXED))
            return false;
        memcpy(out, &s->c, sizeof *out);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) == a) {
            out->name[ACME_NAME_MAX] = out->token[ACME_TOKEN_MAX] = '\0';
            out->keyauth[ACME_KEYAUTH_MAX] = '\0';
            return true;
        }
    }
    return false;
}

int acme_tlsalpn01(const struct acme_shared *sh, const char *name, char *cert, size_t *cert_len,
                   char *key, size_t *key_len)
{
    static struct acme_challenge c; /* a worker is one thread; keeps the stack small */
    for (unsigned i = 0; sh && i < ACME_SLOTS; i++) {
        if (!read_slot(&sh->slot[i], &c) || strcmp(c.name, name) != 0 || !c.cert_len)
            continue;
        if (c.cert_len > *cert_len || c.key_len > *key_len || c.cert_len > sizeof c.cert ||
            c.key_len > sizeof c.key)
            return -1;
        memcpy(cert, c.cert, c.cert_len);
        memcpy(key, c.key, c.key_len);
        *cert_len = c.cert_len;
        *key_len = c.key_len;
        return 0;
    }
    return -1;
}

#define CHALLENGE_PREFIX "/.well-known/acme-challenge/"
_Static_assert(ACME_KEYAUTH_MAX < ACME_KEYAUTH_CAP, "a key authorization fits acme_http01's room");

/* A token is base64url (RFC 8555 §8.3): anything else names none. */
bool acme_token_ok(struct span t)
{
    if (t.n == 0 || t.n > ACME_TOKEN_MAX)
        return false;
    for (size_t i = 0; i < t.n; i++) {
        char ch = t.p[i];
        if (!ascii_is_digit(ch) && !(ch >= 'a' && ch <= 'z') && !(ch >= 'A' && ch <= 'Z') &&
            ch != '-' && ch != '_')
            return false;
    }
    return true;
}

int acme_http01(const struct acme_shared *sh, struct span path, char *keyauth, size_t cap)
{
    size_t pn = sizeof CHALLENGE_PREFIX - 1;
    if (path.n <= pn || !mem_eq(path.p, CHALLENGE_PREFIX, pn))
        return -1;
    struct span token = span_make(path.p + pn, path.n - pn);
    static struct acme_challenge c; /* a worker is one thread; keeps the stack small */
    for (unsigned i = 0; acme_token_ok(token) && i < ACME_SLOTS; i++) {
        if (!read_slot(&sh->slot[i], &c) || !span_eq_cstr(token, c.token))
            continue;
        size_t n = strlen(c.keyauth);
        if (n >= cap)
            return 0;
        memcpy(keyauth, c.keyauth, n + 1);
        return (int)n;
    }
    return 0;
}

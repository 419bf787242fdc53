/* SPDX-License-Identifier: MIT */
/*
 * tls_tickets.c - session tickets (RFC 8446 §4.6.1, RFC 5077): two
 * AES-256-CBC + HMAC-SHA256 keys in a shared mapping, made by the master
 * before forking, so a ticket one worker issued resumes on any other. The
 * master replaces the older key every 12 hours; the previous one still
 * decrypts (and such a ticket is renewed). There is no session cache.
 *
 * Only the master writes the keys; a worker reads them in its ticket
 * callback. A key is never rewritten while it is the current one.
 */
#include "tls/tls.h"
#include "tls/tls_internal.h"

#include "sys/sys.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>

#define TICKET_ROTATE_S (12 * 3600)

struct ticket_key {
    unsigned char name[16], aes[32], hmac[32];
};

/* Shared between the master and every worker (MAP_SHARED). */
struct tls_tickets {
    uint32_t current;   /* keys[current] encrypts; the other one still decrypts */
    int64_t rotated_at; /* seconds */
    int64_t rotate_s;   /* TICKET_ROTATE_S (PITH_TICKET_ROTATE_S in tests) */
    struct ticket_key keys[2];
};

static void new_ticket_key(struct ticket_key *k)
{
    if (RAND_bytes(k->name, sizeof k->name) != 1 || RAND_bytes(k->aes, sizeof k->aes) != 1 ||
        RAND_bytes(k->hmac, sizeof k->hmac) != 1)
        sys_random(k, sizeof *k); /* the kernel's CSPRNG directly */
}

struct tls_tickets *tls_tickets_new(void)
{
    struct tls_tickets *tk = sys_map_shared(sizeof *tk);
    if (!tk)
        return NULL;
    new_ticket_key(&tk->keys[0]);
    new_ticket_key(&tk->keys[1]);
    tk->rotated_at = sys_now_real();
    tk->rotate_s = TICKET_ROTATE_S;
    /* The tests shorten the 12 hours to watch a rotation happen. */
    const char *rot = sys_getenv("PITH_TICKET_ROTATE_S");
    if (rot && rot[0] >= '1' && rot[0] <= '9')
        tk->rotate_s = strtol(rot, NULL, 10);
    return tk;
}

void tls_tickets_forget(struct tls_tickets *tk)
{
    sys_unmap(tk, sizeof *tk);
}

void tls_server_tick(struct tls_server *ts, int64_t now)
{
    struct tls_tickets *tk = ts->tickets;
    if (now - tk->rotated_at < tk->rotate_s)
        return;
    /* The previous key is overwritten, the current one becomes the
     * previous: tickets from the last 12 hours still resume. */
    uint32_t next = (tk->current & 1) ^ 1;
    new_ticket_key(&tk->keys[next]);
    __atomic_store_n(&tk->current, next, __ATOMIC_RELEASE);
    tk->rotated_at = now;
}

static int ticket_mac(EVP_MAC_CTX *hctx, unsigned char *key)
{
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, key, 32),
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
        OSSL_PARAM_construct_end(),
    };
    return EVP_MAC_CTX_set_params(hctx, params);
}

/* Encrypts new tickets with the current key; decrypts with whichever of
 * the two made the ticket (1), asking for a fresh ticket when it was the
 * previous key (2); an unknown key means a full handshake (0). */
static int ticket_key_cb(SSL *s, unsigned char name[16], unsigned char *iv, EVP_CIPHER_CTX *ctx,
                         EVP_MAC_CTX *hctx, int enc)
{
    struct tls_server *ts = SSL_CTX_get_app_data(SSL_get_SSL_CTX(s));
    if (!ts)
        return -1;
    struct tls_tickets *tk = ts->tickets;
    uint32_t cur = __atomic_load_n(&tk->current, __ATOMIC_ACQUIRE) & 1;
    if (enc) {
        struct ticket_key *k = &tk->keys[cur];
        if (RAND_bytes(iv, 16) != 1)
            return -1;
        memcpy(name, k->name, 16);
        if (EVP_EncryptInit_ex(ctx, EVP_aes_256_cbc(), NULL, k->aes, iv) != 1 ||
            ticket_mac(hctx, k->hmac) != 1)
            return -1;
        return 1;
    }
    for (uint32_t j = 0; j < 2; j++) {
        uint32_t i = cur ^ j;
        struct ticket_key *k = &tk->keys[i];
        if (memcmp(name, k->name, 16) != 0)
            continue;
        if (EVP_DecryptInit_ex(ctx, EVP_aes_256_cbc(), NULL, k->aes, iv) != 1 ||
            ticket_mac(hctx, k->hmac) != 1)
            return -1;
        return j == 0 ? 1 : 2;
    }
    return 0;
}

int tls_tickets_use(SSL_CTX *ctx)
{
    return SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, ticket_key_cb) == 1;
}

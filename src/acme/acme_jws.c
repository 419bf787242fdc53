/* SPDX-License-Identifier: MIT */
/*
 * acme_jws.c - the account key's public form and the requests it signs:
 * base64url (RFC 7515 §2), the JWK of an ECDSA P-256 key (RFC 7518 §6.2),
 * its thumbprint (RFC 7638), and the flattened JWS of RFC 8555 §6.2 with
 * ES256 (RFC 7518 §3.4: the signature is R || S, 32 bytes each, not
 * OpenSSL's DER). The JSON is written by jansson, never by hand, except the
 * thumbprint's input, whose exact bytes RFC 7638 §3.2 prescribes.
 */
#include "acme/acme_internal.h"

#include <jansson.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

size_t acme_b64url(const unsigned char *p, size_t n, char *out, size_t cap)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t need = n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
    if (need + 1 > cap)
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n)
            v |= p[i + 2];
        out[k++] = abc[v >> 18 & 63];
        out[k++] = abc[v >> 12 & 63];
        if (i + 1 < n)
            out[k++] = abc[v >> 6 & 63];
        if (i + 2 < n)
            out[k++] = abc[v & 63];
    }
    out[k] = '\0';
    return k;
}

/* The key's public point as x and y, 32 bytes each. */
static int point(EVP_PKEY *key, unsigned char x[32], unsigned char y[32])
{
    unsigned char pub[65];
    size_t n = 0;
    if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, pub, sizeof pub, &n) != 1 ||
        n != 65 || pub[0] != 4)
        return -1; /* uncompressed: 0x04 || X || Y */
    memcpy(x, pub + 1, 32);
    memcpy(y, pub + 33, 32);
    return 0;
}

int acme_jwk(EVP_PKEY *key, char *jwk, size_t cap)
{
    unsigned char x[32], y[32];
    char bx[48], by[48];
    if (point(key, x, y) < 0)
        return -1;
    acme_b64url(x, 32, bx, sizeof bx);
    acme_b64url(y, 32, by, sizeof by);
    /* RFC 7638 §3.2: the required members only, in lexicographic order,
     * no whitespace: the thumbprint hashes exactly these bytes. */
    int n =
        snprintf(jwk, cap, "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"%s\",\"y\":\"%s\"}", bx, by);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

int acme_thumbprint(EVP_PKEY *key, char *out, size_t cap)
{
    char jwk[256];
    unsigned char md[SHA256_DIGEST_LENGTH];
    if (acme_jwk(key, jwk, sizeof jwk) < 0)
        return -1;
    SHA256((const unsigned char *)jwk, strlen(jwk), md);
    return acme_b64url(md, sizeof md, out, cap) ? 0 : -1;
}

/* ES256 over in[n]: R || S into sig[64]. */
static int sign(EVP_PKEY *key, const char *in, size_t n, unsigned char sig[64])
{
    unsigned char der[80];
    size_t dn = sizeof der;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int ok = md && EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) == 1 &&
             EVP_DigestSign(md, der, &dn, (const unsigned char *)in, n) == 1;
    EVP_MD_CTX_free(md);
    if (!ok)
        return -1;
    const unsigned char *p = der;
    ECDSA_SIG *s = d2i_ECDSA_SIG(NULL, &p, (long)dn);
    if (!s)
        return -1;
    const BIGNUM *r, *sv;
    ECDSA_SIG_get0(s, &r, &sv);
    ok = BN_bn2binpad(r, sig, 32) == 32 && BN_bn2binpad(sv, sig + 32, 32) == 32;
    ECDSA_SIG_free(s);
    return ok ? 0 : -1;
}

/* The protected header, as JSON text: {alg, nonce, url, kid | jwk}. */
static char *protected_header(EVP_PKEY *key, const char *kid, const char *nonce, const char *url)
{
    json_t *h = json_pack("{s:s, s:s, s:s}", "alg", "ES256", "nonce", nonce, "url", url);
    if (h && kid) {
        json_object_set_new(h, "kid", json_string(kid));
    } else if (h) {
        char jwk[256];
        json_t *j = acme_jwk(key, jwk, sizeof jwk) == 0 ? json_loads(jwk, 0, NULL) : NULL;
        if (!j || json_object_set_new(h, "jwk", j) < 0) {
            json_decref(h);
            return NULL;
        }
    }
    char *text = h ? json_dumps(h, JSON_COMPACT) : NULL;
    json_decref(h);
    return text;
}

/* base64url of text into a malloc'd string. */
static char *b64_text(const char *text)
{
    size_t n = strlen(text), cap = n / 3 * 4 + 8;
    char *out = malloc(cap);
    if (out && !acme_b64url((const unsigned char *)text, n, out, cap)) {
        if (n == 0) {
            out[0] = '\0';
            return out;
        }
        free(out);
        return NULL;
    }
    return out;
}

char *acme_jws(EVP_PKEY *key, const char *kid, const char *nonce, const char *url,
               const char *payload)
{
    char *hdr = protected_header(key, kid, nonce, url);
    char *ph = hdr ? b64_text(hdr) : NULL;
    char *pl = b64_text(payload ? payload : ""); /* POST-as-GET: empty (RFC 8555 §6.3) */
    char *input = NULL, *out = NULL;
    unsigned char sig[64];
    char bs[100];
    if (ph && pl && (input = malloc(strlen(ph) + strlen(pl) + 2))) {
        sprintf(input, "%s.%s", ph, pl);
        if (sign(key, input, strlen(input), sig) == 0 && acme_b64url(sig, 64, bs, sizeof bs)) {
            json_t *j =
                json_pack("{s:s, s:s, s:s}", "protected", ph, "payload", pl, "signature", bs);
            out = j ? json_dumps(j, JSON_COMPACT) : NULL;
            json_decref(j);
        }
    }
    free(hdr);
    free(ph);
    free(pl);
    free(input);
    return out;
}

/* SPDX-License-Identifier: MIT */
/*
 * acme_cert.c - the X.509 side of ACME, all through OpenSSL 3: a fresh
 * ECDSA P-256 key per certificate, the CSR that finalizes an order (RFC
 * 8555 §7.4: the name in subjectAltName, nothing else asked for), the check
 * of a chain before it is stored or served (the leaf matches the key,
 * names the name, is within its validity), the self-signed certificate of
 * tls-alpn-01 (RFC 8737 §3), and ARI's certificate identifier (RFC 9773).
 */
#include "acme/acme_internal.h"

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>
#include <string.h>

EVP_PKEY *acme_key_new(void)
{
    return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

/* subjectAltName = DNS:name on a CSR or certificate's extension list. */
static X509_EXTENSION *san(const char *name)
{
    char v[ACME_NAME_MAX + 8];
    snprintf(v, sizeof v, "DNS:%s", name);
    return X509V3_EXT_conf_nid(NULL, NULL, NID_subject_alt_name, v);
}

int acme_csr(EVP_PKEY *key, const char *name, char *out, size_t cap)
{
    X509_REQ *req = X509_REQ_new();
    STACK_OF(X509_EXTENSION) *exts = sk_X509_EXTENSION_new_null();
    X509_EXTENSION *ext = san(name);
    unsigned char *der = NULL;
    int len = -1, r = -1;
    /* The subject is empty: CAs take the names from subjectAltName alone
     * (RFC 8555 §7.4), and a CN would only be one more thing to match. */
    if (req && exts && ext && X509_REQ_set_version(req, 0) == 1 &&
        X509_REQ_set_pubkey(req, key) == 1 && sk_X509_EXTENSION_push(exts, ext) > 0) {
        ext = NULL; /* the stack owns it */
        if (X509_REQ_add_extensions(req, exts) == 1 && X509_REQ_sign(req, key, EVP_sha256()) > 0)
            len = i2d_X509_REQ(req, &der);
    }
    if (len > 0 && acme_b64url(der, (size_t)len, out, cap))
        r = 0;
    OPENSSL_free(der);
    X509_EXTENSION_free(ext);
    sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
    X509_REQ_free(req);
    ERR_clear_error();
    return r;
}

static int64_t asn1_time(const ASN1_TIME *t)
{
    struct tm tm;
    if (!t || ASN1_TIME_to_tm(t, &tm) != 1)
        return 0;
    return (int64_t)timegm(&tm);
}

int acme_pair_check(const char *pem, size_t n, const char *name, int64_t now, struct acme_pair *out,
                    char *why, size_t cap)
{
    memset(out, 0, sizeof *out);
    BIO *b = BIO_new_mem_buf(pem, (int)n);
    EVP_PKEY *key = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, (void *)"") : NULL;
    BIO_free(b);
    b = BIO_new_mem_buf(pem, (int)n);
    X509 *leaf = b ? PEM_read_bio_X509(b, NULL, NULL, (void *)"") : NULL;
    X509 *next = leaf ? PEM_read_bio_X509(b, NULL, NULL, (void *)"") : NULL;
    BIO_free(b);
    ERR_clear_error();
    const char *bad =
        !key                                           ? "no private key in it"
        : !leaf                                        ? "no certificate in it"
        : !next                                        ? "no issuer certificate after the leaf"
        : X509_check_private_key(leaf, key) != 1       ? "the certificate does not match the key"
        : X509_check_host(leaf, name, 0, 0, NULL) != 1 ? "the certificate does not name the site"
                                                       : NULL;
    X509_free(next);
    if (!bad) {
        out->not_before = asn1_time(X509_get0_notBefore(leaf));
        out->not_after = asn1_time(X509_get0_notAfter(leaf));
        if (out->not_after <= now)
            bad = "the certificate has expired";
    }
    ERR_clear_error();
    if (bad) {
        snprintf(why, cap, "%s", bad);
        EVP_PKEY_free(key);
        X509_free(leaf);
        return -1;
    }
    out->key = key;
    out->leaf = leaf;
    return 0;
}

void acme_pair_free(struct acme_pair *p)
{
    EVP_PKEY_free(p->key);
    X509_free(p->leaf);
    p->key = NULL;
    p->leaf = NULL;
}

/* id-pe-acmeIdentifier (RFC 8737 §6.1): critical, its value the DER of an
 * OCTET STRING holding SHA-256 of the key authorization. */
static X509_EXTENSION *acme_identifier(const char *keyauth)
{
    unsigned char md[SHA256_DIGEST_LENGTH], der[2 + SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)keyauth, strlen(keyauth), md);
    der[0] = 0x04; /* OCTET STRING */
    der[1] = SHA256_DIGEST_LENGTH;
    memcpy(der + 2, md, sizeof md);
    ASN1_OBJECT *oid = OBJ_txt2obj("1.3.6.1.5.5.7.1.31", 1);
    ASN1_OCTET_STRING *v = ASN1_OCTET_STRING_new();
    X509_EXTENSION *ext = NULL;
    if (oid && v && ASN1_OCTET_STRING_set(v, der, sizeof der) == 1)
        ext = X509_EXTENSION_create_by_OBJ(NULL, oid, 1, v);
    ASN1_OBJECT_free(oid);
    ASN1_OCTET_STRING_free(v);
    return ext;
}

/* PEM of a cert or key into dst[cap]; the length, or 0. */
static size_t pem_out(X509 *cert, EVP_PKEY *key, char *dst, size_t cap)
{
    BIO *b = BIO_new(BIO_s_mem());
    int ok = b && (cert ? PEM_write_bio_X509(b, cert)
                        : PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL));
    char *p;
    long n = ok ? BIO_get_mem_data(b, &p) : 0;
    size_t r = 0;
    if (n > 0 && (size_t)n <= cap) {
        memcpy(dst, p, (size_t)n);
        r = (size_t)n;
    }
    BIO_free(b);
    return r;
}

int acme_alpn_cert(const char *name, const char *keyauth, struct acme_challenge *c)
{
    EVP_PKEY *key = acme_key_new();
    X509 *x = X509_new();
    X509_EXTENSION *e1 = san(name), *e2 = acme_identifier(keyauth);
    unsigned char serial[16];
    BIGNUM *sn = NULL;
    int r = -1;
    if (key && x && e1 && e2 && RAND_bytes(serial, sizeof serial) == 1 &&
        (sn = BN_bin2bn(serial, sizeof serial, NULL)) &&
        BN_to_ASN1_INTEGER(sn, X509_get_serialNumber(x)) && X509_set_version(x, 2) == 1 &&
        X509_gmtime_adj(X509_getm_notBefore(x), -3600) &&
        X509_gmtime_adj(X509_getm_notAfter(x), 7 * 86400) && X509_set_pubkey(x, key) == 1 &&
        X509_add_ext(x, e1, -1) == 1 && X509_add_ext(x, e2, -1) == 1 &&
        X509_sign(x, key, EVP_sha256()) > 0) {
        c->cert_len = (uint16_t)pem_out(x, NULL, c->cert, sizeof c->cert);
        c->key_len = (uint16_t)pem_out(NULL, key, c->key, sizeof c->key);
        r = c->cert_len && c->key_len ? 0 : -1;
    }
    BN_free(sn);
    X509_EXTENSION_free(e1);
    X509_EXTENSION_free(e2);
    X509_free(x);
    EVP_PKEY_free(key);
    ERR_clear_error();
    return r;
}

int acme_ari_id(X509 *leaf, char *out, size_t cap)
{
    const ASN1_OCTET_STRING *akid = X509_get0_authority_key_id(leaf);
    const ASN1_INTEGER *serial = X509_get0_serialNumber(leaf);
    unsigned char *der = NULL;
    int n = serial ? i2d_ASN1_INTEGER(serial, &der) : -1;
    int r = -1;
    /* The serial's DER content octets: past the tag and the one-byte
     * length (serials are at most 20 octets, RFC 5280 §4.1.2.2). */
    if (akid && n > 2 && der[1] == n - 2) {
        size_t k = acme_b64url(akid->data, (size_t)akid->length, out, cap);
        if (k && k + 1 < cap) {
            out[k] = '.';
            r = acme_b64url(der + 2, (size_t)n - 2, out + k + 1, cap - k - 1) ? 0 : -1;
        }
    }
    OPENSSL_free(der);
    ERR_clear_error();
    return r;
}

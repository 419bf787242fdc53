/* SPDX-License-Identifier: MIT */
/*
 * acme_order.c - the ACME protocol (RFC 8555 §7), one certificate per name:
 * the directory, a nonce, the account (found again by its key on every
 * start: newAccount answers 200 for an existing one), the order, each
 * authorization's challenge (tls-alpn-01 first, http-01 after a tls-alpn-01
 * failure or where the CA offers only that), finalize with a CSR, and the
 * chain, checked before the caller stores it. Every request is a JWS POST
 * (POST-as-GET for reads, §6.3); a badNonce answer is retried at once with
 * the nonce it carries (§6.5). Every document goes through jansson with
 * duplicate keys refused; an answer of the wrong type or shape is an error
 * naming the URL, never a guess. ARI (RFC 9773) where the directory lists
 * renewalInfo.
 */
#include "acme/acme_internal.h"

#include "base/server.h"

#include <jansson.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define URL_MAX   512
#define POLLS_MAX 60 /* an authorization or order is polled this often at most */
/* badNonce is retried at once this often. A CA may refuse any nonce
 * (pebble refuses 5% on purpose): three tries failed one order in 8,000
 * requests there and cost the backoff; five make it one in 3.2 million. */
#define NONCE_TRIES 5

struct acme_client {
    const struct settings *set;
    struct acme_peers *peers;
    EVP_PKEY *account;
    struct acme_http *http;
    struct acme_resp resp;
    char thumb[64];
    char nonce[128];
    char kid[URL_MAX]; /* the account's URL; "" until known */
    char new_nonce[URL_MAX], new_account[URL_MAX], new_order[URL_MAX], renewal_info[URL_MAX];
    bool have_dir;
    bool alpn_failed[ACME_SLOTS]; /* the last attempt's tls-alpn-01 failed: http-01 next */
    long retry_after;
    bool rate_limited;
    char problem[64]; /* the last problem document's type, past "urn:...:error:" */
};

struct acme_client *acme_client_new(const struct settings *set, struct acme_peers *peers,
                                    EVP_PKEY *account)
{
    const char *t = getenv("PITH_ACME_TIMEOUT_S"); /* tests: a stalling CA */
    struct acme_client *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->set = set;
    c->peers = peers;
    c->account = account;
    c->http = acme_http_new(set->acme_ca_root, t ? atol(t) : 30);
    if (!c->http || acme_thumbprint(account, c->thumb, sizeof c->thumb) < 0) {
        acme_client_free(c);
        return NULL;
    }
    return c;
}

void acme_client_free(struct acme_client *c)
{
    if (!c)
        return;
    acme_http_free(c->http);
    free(c);
}

/* ---- answers ---------------------------------------------------------------------- */

/* Copies a string member of o into dst[cap]; false when missing, not a
 * string, or too long. */
static bool member(json_t *o, const char *name, char *dst, size_t cap)
{
    const char *s = json_string_value(json_object_get(o, name));
    if (!s || strlen(s) >= cap)
        return false;
    memcpy(dst, s, strlen(s) + 1);
    return true;
}

/* A problem document (RFC 7807, RFC 8555 §6.7), logged as "WHAT: TYPE:
 * DETAIL"; notes a rate limit. Returns true for badNonce. */
static bool problem(struct acme_client *c, const char *what, const struct acme_resp *r)
{
    json_t *p = strcmp(r->type, "application/problem+json") == 0
                    ? json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, NULL)
                    : NULL;
    const char *type = json_string_value(json_object_get(p, "type"));
    const char *detail = json_string_value(json_object_get(p, "detail"));
    const char *tail = type && strrchr(type, ':') ? strrchr(type, ':') + 1 : "";
    bool bad_nonce = strcmp(tail, "badNonce") == 0;
    snprintf(c->problem, sizeof c->problem, "%s", tail);
    if (r->status == 429 || strcmp(tail, "rateLimited") == 0)
        c->rate_limited = true;
    if (r->retry_after >= 0)
        c->retry_after = r->retry_after;
    if (!bad_nonce)
        acme_log("%s: the CA answered %ld%s%s%s%s", what, r->status,
                 type ? ": " : " (no problem document)", type ? type : "", detail ? ": " : "",
                 detail ? detail : "");
    json_decref(p);
    return bad_nonce;
}

/* The JSON object of a successful answer, or NULL after logging what was
 * wrong with it (its type, its syntax, its shape). */
static json_t *document(const char *url, const struct acme_resp *r)
{
    if (strcmp(r->type, "application/json") != 0) {
        acme_log("%s: the CA answered with Content-Type '%s', not application/json", url, r->type);
        return NULL;
    }
    json_error_t e;
    json_t *j = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &e);
    if (!j || !json_is_object(j)) {
        acme_log("%s: the CA's answer is not a JSON object: %s", url, j ? "another value" : e.text);
        json_decref(j);
        return NULL;
    }
    return j;
}

/* ---- requests --------------------------------------------------------------------- */

static int fetch_directory(struct acme_client *c)
{
    const char *url = c->set->acme_ca;
    if (c->have_dir)
        return 0;
    if (acme_http_do(c->http, url, NULL, NULL, &c->resp) < 0) {
        acme_log("the CA's directory: %s", c->resp.err);
        return -1;
    }
    if (c->resp.status != 200) {
        problem(c, "the CA's directory", &c->resp);
        return -1;
    }
    json_t *d = document(url, &c->resp);
    bool ok = d && member(d, "newNonce", c->new_nonce, URL_MAX) &&
              member(d, "newAccount", c->new_account, URL_MAX) &&
              member(d, "newOrder", c->new_order, URL_MAX);
    if (d && !ok)
        acme_log("%s: the directory lacks newNonce, newAccount or newOrder", url);
    if (ok && !member(d, "renewalInfo", c->renewal_info, URL_MAX))
        c->renewal_info[0] = '\0'; /* no ARI at this CA */
    json_decref(d);
    c->have_dir = ok;
    return ok ? 0 : -1;
}

static int fresh_nonce(struct acme_client *c)
{
    if (c->nonce[0])
        return 0;
    if (acme_http_do(c->http, c->new_nonce, NULL, NULL, &c->resp) < 0 || !c->resp.nonce[0]) {
        acme_log("a nonce from %s: %s", c->new_nonce,
                 c->resp.err[0] ? c->resp.err : "no Replay-Nonce in the answer");
        return -1;
    }
    memcpy(c->nonce, c->resp.nonce, sizeof c->nonce);
    return 0;
}

/* A signed POST of payload (NULL: POST-as-GET) to url; the answer in
 * c->resp. 0 when the CA answered with a 2xx, else -1 after logging why
 * (what names the step). badNonce is retried at once (RFC 8555 §6.5). */
static int post(struct acme_client *c, const char *what, const char *url, const char *payload,
                const char *accept)
{
    for (int tries = 0; tries < NONCE_TRIES; tries++) {
        if (fresh_nonce(c) < 0)
            return -1;
        char *jws = acme_jws(c->account, c->kid[0] ? c->kid : NULL, c->nonce, url, payload);
        c->nonce[0] = '\0'; /* used: the answer brings the next */
        if (!jws) {
            acme_log("%s: cannot sign the request", what);
            return -1;
        }
        int r = acme_http_do(c->http, url, jws, accept, &c->resp);
        free(jws);
        if (r < 0) {
            acme_log("%s: %s", what, c->resp.err);
            return -1;
        }
        if (c->resp.nonce[0])
            memcpy(c->nonce, c->resp.nonce, sizeof c->nonce);
        if (c->resp.status >= 200 && c->resp.status < 300)
            return 0;
        if (!problem(c, what, &c->resp))
            return -1;
    }
    acme_log("%s: the CA refused %d nonces in a row (badNonce)", what, NONCE_TRIES);
    return -1;
}

/* post() whose answer must be a JSON object: returned, or NULL. */
static json_t *post_json(struct acme_client *c, const char *what, const char *url,
                         const char *payload)
{
    if (post(c, what, url, payload, NULL) < 0)
        return NULL;
    return document(url, &c->resp);
}

static int account(struct acme_client *c)
{
    if (c->kid[0])
        return 0;
    char contact[300];
    snprintf(contact, sizeof contact, "mailto:%s", c->set->acme_email);
    json_t *p = json_pack("{s:b, s:[s]}", "termsOfServiceAgreed", 1, "contact", contact);
    char *text = p ? json_dumps(p, JSON_COMPACT) : NULL;
    json_decref(p);
    if (!text)
        return -1;
    char what[400];
    snprintf(what, sizeof what, "the account for %s", c->set->acme_email);
    int r = post(c, what, c->new_account, text, NULL);
    free(text);
    if (r < 0)
        return -1;
    if (!c->resp.location[0]) {
        acme_log("%s: no Location (the account's URL) in the CA's answer", what);
        return -1;
    }
    memcpy(c->kid, c->resp.location, sizeof c->kid);
    return 0;
}

/* Polls url (an authorization or order) until its status leaves the
 * waiting ones; the last document, or NULL. */
static json_t *poll_until(struct acme_client *c, const char *what, const char *url,
                          const char *wait1, const char *wait2)
{
    for (int i = 0; i < POLLS_MAX; i++) {
        json_t *j = post_json(c, what, url, NULL);
        const char *st = json_string_value(json_object_get(j, "status"));
        if (!j || !st || (strcmp(st, wait1) != 0 && strcmp(st, wait2) != 0))
            return j;
        json_decref(j);
        long s = c->resp.retry_after > 0 && c->resp.retry_after < 10 ? c->resp.retry_after : 1;
        acme_peers_sleep(c->peers, (unsigned)s); /* the others' challenges meanwhile */
    }
    acme_log("%s: still waiting after %d polls", what, POLLS_MAX);
    return NULL;
}

/* The challenge of type in authz's list, or NULL. */
static json_t *challenge_of(json_t *authz, const char *type)
{
    json_t *list = json_object_get(authz, "challenges"), *ch;
    size_t i;
    json_array_foreach(list, i, ch)
    {
        const char *t = json_string_value(json_object_get(ch, "type"));
        if (t && strcmp(t, type) == 0)
            return ch;
    }
    return NULL;
}

/* Publishes the chosen challenge for the workers, tells the CA to check
 * it, and waits for the verdict. 0 when the authorization is valid. */
static int validate(struct acme_client *c, unsigned slot, const char *name, const char *url,
                    json_t *ch, bool alpn)
{
    static struct acme_challenge pub;
    memset(&pub, 0, sizeof pub);
    char chal_url[URL_MAX], what[400];
    snprintf(what, sizeof what, "%s: the %s challenge", name, alpn ? "tls-alpn-01" : "http-01");
    if (!member(ch, "url", chal_url, URL_MAX) ||
        !member(ch, "token", pub.token, sizeof pub.token)) {
        acme_log("%s: no url or token (or one too long)", what);
        return -1;
    }
    snprintf(pub.name, sizeof pub.name, "%s", name);
    int k = snprintf(pub.keyauth, sizeof pub.keyauth, "%s.%s", pub.token, c->thumb);
    if (k < 0 || (size_t)k >= sizeof pub.keyauth) {
        acme_log("%s: the key authorization is too long", what);
        return -1;
    }
    if (alpn && acme_alpn_cert(name, pub.keyauth, &pub) < 0) {
        acme_log("%s: cannot make the challenge certificate", what);
        return -1;
    }
    acme_peers_publish(c->peers, slot, &pub); /* every instance answers it */
    json_t *j = post_json(c, what, chal_url, "{}");
    json_decref(j);
    json_t *authz = j ? poll_until(c, what, url, "pending", "processing") : NULL;
    acme_peers_withdraw(c->peers, slot);
    const char *st = json_string_value(json_object_get(authz, "status"));
    int r = st && strcmp(st, "valid") == 0 ? 0 : -1;
    if (r == 0)
        acme_log("%s: validated over %s", name, alpn ? "tls-alpn-01" : "http-01");
    if (authz && r < 0) {
        /* The challenge's error (RFC 8555 §8): the CA's reason, for the log. */
        json_t *ours = challenge_of(authz, alpn ? "tls-alpn-01" : "http-01");
        json_t *err = json_object_get(ours, "error");
        char *text = err ? json_dumps(err, JSON_COMPACT) : NULL;
        acme_log("%s failed (authorization %s): %s", what, st ? st : "?",
                 text ? text : "the CA gave no reason");
        free(text);
        c->alpn_failed[slot] = alpn;
    }
    json_decref(authz);
    return r;
}

static int authorize(struct acme_client *c, unsigned slot, const char *name, const char *url)
{
    char what[400];
    snprintf(what, sizeof what, "%s: the authorization", name);
    json_t *a = post_json(c, what, url, NULL);
    const char *st = json_string_value(json_object_get(a, "status"));
    int r = -1;
    if (st && strcmp(st, "valid") == 0) {
        r = 0; /* validated before, and still valid (RFC 8555 §7.1.4) */
    } else if (st && strcmp(st, "pending") == 0) {
        json_t *alpn = challenge_of(a, "tls-alpn-01");
        json_t *http = c->set->tls_only ? NULL : challenge_of(a, "http-01");
        /* PITH_ACME_PREFER=http-01: tests reach the other challenge. */
        const char *prefer = getenv("PITH_ACME_PREFER");
        bool want_http = prefer && strcmp(prefer, "http-01") == 0;
        bool use_alpn = alpn && (!http || (!c->alpn_failed[slot] && !want_http));
        if (!alpn && !http)
            acme_log("%s: the CA offers neither tls-alpn-01 nor http-01", what);
        else
            r = validate(c, slot, name, url, use_alpn ? alpn : http, use_alpn);
    } else if (a) {
        acme_log("%s: its status is '%s'", what, st ? st : "missing");
    }
    json_decref(a);
    return r;
}

/* Finalizes the order with a CSR for key and downloads the chain into a
 * malloc'd text. */
static char *finalize(struct acme_client *c, const char *name, const char *order_url,
                      const char *fin_url, EVP_PKEY *key)
{
    char csr[2048], payload[2100], what[400], cert_url[URL_MAX];
    snprintf(what, sizeof what, "%s: finalizing the order", name);
    if (acme_csr(key, name, csr, sizeof csr) < 0) {
        acme_log("%s: cannot make the CSR", what);
        return NULL;
    }
    snprintf(payload, sizeof payload, "{\"csr\":\"%s\"}", csr);
    json_t *o = post_json(c, what, fin_url, payload);
    const char *st = json_string_value(json_object_get(o, "status"));
    if (o && st && strcmp(st, "valid") != 0) {
        json_decref(o);
        o = poll_until(c, what, order_url, "processing", "ready");
        st = json_string_value(json_object_get(o, "status"));
    }
    bool ok = st && strcmp(st, "valid") == 0 && member(o, "certificate", cert_url, URL_MAX);
    if (o && !ok)
        acme_log("%s: the order is '%s', without a certificate", what, st ? st : "?");
    json_decref(o);
    snprintf(what, sizeof what, "%s: the certificate", name);
    if (!ok || post(c, what, cert_url, NULL, "application/pem-certificate-chain") < 0)
        return NULL;
    if (strcmp(c->resp.type, "application/pem-certificate-chain") != 0) {
        acme_log("%s: Content-Type '%s', not application/pem-certificate-chain", what,
                 c->resp.type);
        return NULL;
    }
    return strdup(c->resp.body);
}

/* The new key's PEM, then the chain: the file's text. */
static char *pair_text(EVP_PKEY *key, const char *chain, size_t *n)
{
    BIO *b = BIO_new(BIO_s_mem());
    char *p = NULL, *out = NULL;
    if (b && PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL) == 1 &&
        BIO_write(b, chain, (int)strlen(chain)) == (int)strlen(chain)) {
        long len = BIO_get_mem_data(b, &p);
        if (len > 0 && (out = malloc((size_t)len + 1))) {
            memcpy(out, p, (size_t)len);
            out[len] = '\0';
            *n = (size_t)len;
        }
    }
    BIO_free(b);
    return out;
}

/* newOrder for name: its URL, authorizations and finalize URL. replaces:
 * the ARI identifier of the certificate it replaces (RFC 9773 §5), or
 * NULL; a CA that refuses the order with it (409 alreadyReplaced, or any
 * other client error: the old certificate came from another account or
 * CA) is asked once more without it. */
static json_t *new_order(struct acme_client *c, const char *name, const char *replaces,
                         char *order_url)
{
    json_t *p = json_pack("{s:[{s:s, s:s}]}", "identifiers", "type", "dns", "value", name);
    if (p && replaces)
        json_object_set_new(p, "replaces", json_string(replaces));
    char *text = p ? json_dumps(p, JSON_COMPACT) : NULL;
    json_decref(p);
    char what[400];
    snprintf(what, sizeof what, "%s: a new order", name);
    c->problem[0] = '\0';
    json_t *o = text ? post_json(c, what, c->new_order, text) : NULL;
    free(text);
    if (!o && replaces && c->resp.status >= 400 && c->resp.status < 500 && c->resp.status != 429 &&
        strcmp(c->problem, "rateLimited") != 0) {
        acme_log("%s: asking again without naming the certificate it replaces", what);
        return new_order(c, name, NULL, order_url);
    }
    if (o && !c->resp.location[0]) {
        acme_log("%s: no Location (the order's URL) in the answer", what);
        json_decref(o);
        return NULL;
    }
    if (o)
        memcpy(order_url, c->resp.location, URL_MAX);
    return o;
}

int acme_obtain(struct acme_client *c, unsigned slot, const char *name, X509 *old, char **pem,
                size_t *n, long *retry_after, bool *rate_limited)
{
    c->retry_after = -1;
    c->rate_limited = false;
    char order_url[URL_MAX], fin_url[URL_MAX];
    int r = -1;
    json_t *o = NULL;
    EVP_PKEY *key = NULL;
    char *chain = NULL, id[200];
    if (fetch_directory(c) == 0 && account(c) == 0 &&
        (o = new_order(
             c, name, old && c->renewal_info[0] && acme_ari_id(old, id, sizeof id) == 0 ? id : NULL,
             order_url))) {
        json_t *list = json_object_get(o, "authorizations"), *a;
        size_t i;
        bool ok = json_is_array(list) && json_array_size(list) > 0 &&
                  member(o, "finalize", fin_url, URL_MAX);
        json_array_foreach(list, i, a) ok =
            ok && json_is_string(a) && authorize(c, slot, name, json_string_value(a)) == 0;
        if (ok && (key = acme_key_new()))
            chain = finalize(c, name, order_url, fin_url, key);
    }
    if (chain) {
        struct acme_pair pair;
        char why[200];
        *pem = pair_text(key, chain, n);
        if (*pem &&
            acme_pair_check(*pem, *n, name, (int64_t)time(NULL), &pair, why, sizeof why) < 0) {
            acme_log("%s: the CA's certificate is not usable: %s", name, why);
            free(*pem);
            *pem = NULL;
        }
        acme_pair_free(&pair);
        r = *pem ? 0 : -1;
    }
    if (r < 0)
        c->have_dir = false; /* fetched again next time: the CA may have moved things */
    free(chain);
    EVP_PKEY_free(key);
    json_decref(o);
    *retry_after = c->retry_after;
    *rate_limited = c->rate_limited;
    return r;
}

/* Two decimal digits at p, or -1. */
static int two(const char *p)
{
    return p[0] >= '0' && p[0] <= '9' && p[1] >= '0' && p[1] <= '9' ? (p[0] - '0') * 10 + p[1] - '0'
                                                                    : -1;
}

/* An RFC 3339 date-time ("2025-01-02T03:04:05Z", with fractions of a
 * second and a numeric offset allowed) as seconds since the epoch; 0 when
 * s is anything else. */
static int64_t rfc3339(const char *s)
{
    struct tm tm = {0};
    const char *p = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (!p || s[4] != '-' || (s[10] != 'T' && s[10] != 't'))
        return 0;
    if (*p == '.') {
        const char *f = ++p;
        while (*p >= '0' && *p <= '9')
            p++;
        if (p == f)
            return 0;
    }
    int64_t off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if ((*p == '+' || *p == '-') && two(p + 1) >= 0 && p[3] == ':' && two(p + 4) >= 0) {
        off = (int64_t)(two(p + 1) * 3600 + two(p + 4) * 60) * (*p == '-' ? -1 : 1);
        p += 6;
    } else {
        return 0;
    }
    int64_t t = *p ? 0 : (int64_t)timegm(&tm) - off;
    return t > 0 ? t : 0;
}

int acme_ari(struct acme_client *c, X509 *leaf, struct acme_window *w, char *why, size_t cap)
{
    char id[200], url[URL_MAX + 200];
    memset(w, 0, sizeof *w);
    if (fetch_directory(c) < 0) {
        snprintf(why, cap, "the CA's directory cannot be read");
        return -1;
    }
    if (!c->renewal_info[0])
        return ACME_ARI_NONE;
    if (acme_ari_id(leaf, id, sizeof id) < 0) {
        snprintf(why, cap, "the certificate has no Authority Key Identifier to name it by");
        return -1;
    }
    /* GET, unauthenticated (RFC 9773 §4.2): the base URL, '/', the id. */
    snprintf(url, sizeof url, "%s%s%s", c->renewal_info,
             c->renewal_info[strlen(c->renewal_info) - 1] == '/' ? "" : "/", id);
    if (acme_http_do(c->http, url, NULL, NULL, &c->resp) < 0) {
        snprintf(why, cap, "%s", c->resp.err);
        return -1;
    }
    if (c->resp.status != 200 || strcmp(c->resp.type, "application/json") != 0) {
        snprintf(why, cap, "%s answered %ld with Content-Type '%s'", url, c->resp.status,
                 c->resp.type);
        return -1;
    }
    json_error_t e;
    json_t *j = json_loadb(c->resp.body, c->resp.body_len, JSON_REJECT_DUPLICATES, &e);
    json_t *win = json_object_get(j, "suggestedWindow");
    w->start = rfc3339(json_string_value(json_object_get(win, "start")));
    w->end = rfc3339(json_string_value(json_object_get(win, "end")));
    const char *ex = json_string_value(json_object_get(j, "explanationURL"));
    snprintf(w->explain, sizeof w->explain, "%s", ex ? ex : "");
    json_decref(j);
    if (!j) {
        snprintf(why, cap, "%s: the answer is not JSON: %s", url, e.text);
        return -1;
    }
    /* RFC 9773 §4.2: an end that does not follow its start is no window. */
    if (!w->start || !w->end || w->end <= w->start) {
        snprintf(why, cap, "%s: no suggestedWindow with a start before its end", url);
        return -1;
    }
    w->retry_after = c->resp.retry_after;
    return 0;
}

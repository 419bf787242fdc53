/* SPDX-License-Identifier: MIT */
/*
 * acme_http.c - HTTPS to the CA (RFC 8555 §6.1) through libcurl's easy
 * interface: one handle, reused, so its connection to the CA is kept
 * between the requests of an order. Every answer is bounded: the body and
 * the header section are capped (a larger one ends the transfer and is an
 * error), the whole exchange has a deadline and a stall (under a byte a
 * second for 10 s) ends it sooner. Only HTTPS, no redirects (ACME never
 * sends any), no proxy from the environment unless the operator set one,
 * no cookies, no compression bombs (no Accept-Encoding).
 */
#include "acme/acme_internal.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HEADER_MAX (16 * 1024) /* the whole header section */

struct acme_http {
    CURL *curl;
    long timeout_s;
    const char *ca_root;
    char *body;
    size_t header_bytes;
    bool too_big;
    struct acme_resp *r;
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    struct acme_http *h = arg;
    struct acme_resp *r = h->r;
    size_t len = size * n;
    if (r->body_len + len > ACME_BODY_MAX) {
        h->too_big = true;
        return 0; /* libcurl ends the transfer (CURLE_WRITE_ERROR) */
    }
    memcpy(h->body + r->body_len, p, len);
    r->body_len += len;
    h->body[r->body_len] = '\0';
    return len;
}

/* Copies a header's value (trimmed) into dst[cap], cut at cap. */
static void keep_value(const char *v, size_t n, char *dst, size_t cap)
{
    while (n && (*v == ' ' || *v == '\t'))
        v++, n--;
    while (n && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' '))
        n--;
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = '\0';
}

/* Link: <URL>;rel="up" (RFC 8555 §7.4.2); one field may carry several. */
static void keep_link_up(const char *v, size_t n, struct acme_resp *r)
{
    char line[1024];
    keep_value(v, n, line, sizeof line);
    char *lt = strchr(line, '<'), *gt = lt ? strchr(lt, '>') : NULL;
    if (gt && strstr(gt, "rel=\"up\""))
        keep_value(lt + 1, (size_t)(gt - lt - 1), r->link_up, sizeof r->link_up);
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    struct acme_http *h = arg;
    struct acme_resp *r = h->r;
    size_t len = size * n;
    h->header_bytes += len;
    if (h->header_bytes > HEADER_MAX) {
        h->too_big = true;
        return 0;
    }
    if (len > 5 && strncmp(p, "HTTP/", 5) == 0) {
        /* A new response (a 100 Continue, or after a proxy's CONNECT). */
        r->nonce[0] = r->location[0] = r->type[0] = r->link_up[0] = '\0';
        r->retry_after = -1;
        return len;
    }
    const char *colon = memchr(p, ':', len);
    if (!colon)
        return len;
    size_t name = (size_t)(colon - p), vn = len - name - 1;
    const char *v = colon + 1;
    if (name == 12 && strncasecmp(p, "Replay-Nonce", 12) == 0) {
        keep_value(v, vn, r->nonce, sizeof r->nonce);
    } else if (name == 8 && strncasecmp(p, "Location", 8) == 0) {
        keep_value(v, vn, r->location, sizeof r->location);
    } else if (name == 4 && strncasecmp(p, "Link", 4) == 0) {
        keep_link_up(v, vn, r);
    } else if (name == 12 && strncasecmp(p, "Content-Type", 12) == 0) {
        keep_value(v, vn, r->type, sizeof r->type);
        r->type[strcspn(r->type, "; ")] = '\0';
        for (char *t = r->type; *t; t++)
            *t = (char)(*t >= 'A' && *t <= 'Z' ? *t + 32 : *t);
    } else if (name == 11 && strncasecmp(p, "Retry-After", 11) == 0) {
        char t[64];
        keep_value(v, vn, t, sizeof t);
        char *end;
        long s = strtol(t, &end, 10);
        if (end != t && *end == '\0' && s >= 0)
            r->retry_after = s > 86400 * 7 ? 86400 * 7 : s;
        else {
            time_t at = curl_getdate(t, NULL); /* an HTTP date */
            time_t now = time(NULL);
            if (at > 0)
                r->retry_after = at > now ? (long)(at - now) : 0;
        }
    }
    return len;
}

struct acme_http *acme_http_new(const char *ca_root, long timeout_s)
{
    struct acme_http *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->body = malloc(ACME_BODY_MAX + 1);
    h->curl = curl_easy_init();
    if (!h->body || !h->curl) {
        acme_http_free(h);
        return NULL;
    }
    h->timeout_s = timeout_s;
    h->ca_root = ca_root;
    return h;
}

/* The options set before each transfer (curl_easy_reset keeps the
 * connection cache, so the CA's connection is reused). */
static bool setup(struct acme_http *h, const char *url, const char *body, struct curl_slist *hdr)
{
    CURL *c = h->curl;
    curl_easy_reset(c);
    bool ok = curl_easy_setopt(c, CURLOPT_URL, url) == CURLE_OK &&
              curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https") == CURLE_OK &&
              curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L) == CURLE_OK &&
              curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L) == CURLE_OK &&
              curl_easy_setopt(c, CURLOPT_TIMEOUT, h->timeout_s) == CURLE_OK &&
              curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, h->timeout_s < 10 ? h->timeout_s : 10L) ==
                  CURLE_OK &&
              /* A CA that stalls: under a byte a second for 10 s ends it. */
              curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L) == CURLE_OK &&
              curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, h->timeout_s < 10 ? h->timeout_s : 10L) ==
                  CURLE_OK &&
              curl_easy_setopt(c, CURLOPT_MAXFILESIZE, (long)ACME_BODY_MAX) == CURLE_OK &&
              curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L) == CURLE_OK &&
              curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L) == CURLE_OK &&
              curl_easy_setopt(c, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2) == CURLE_OK &&
              curl_easy_setopt(c, CURLOPT_USERAGENT, "pith/" PITH_VERSION) == CURLE_OK &&
              curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body) == CURLE_OK &&
              curl_easy_setopt(c, CURLOPT_WRITEDATA, h) == CURLE_OK &&
              curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header) == CURLE_OK &&
              curl_easy_setopt(c, CURLOPT_HEADERDATA, h) == CURLE_OK &&
              curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr) == CURLE_OK;
    if (ok && h->ca_root)
        ok = curl_easy_setopt(c, CURLOPT_CAINFO, h->ca_root) == CURLE_OK;
    if (ok && body)
        ok = curl_easy_setopt(c, CURLOPT_POSTFIELDS, body) == CURLE_OK;
    return ok;
}

int acme_http_do(struct acme_http *h, const char *url, const char *body, const char *accept,
                 struct acme_resp *r)
{
    memset(r, 0, sizeof *r);
    r->retry_after = -1;
    r->body = h->body;
    h->body[0] = '\0';
    h->r = r;
    h->header_bytes = 0;
    h->too_big = false;
    struct curl_slist *hdr = NULL, *t;
    char acc[128];
    snprintf(acc, sizeof acc, "Accept: %s", accept ? accept : "application/json");
    t = curl_slist_append(hdr, acc);
    hdr = t ? t : hdr;
    if (body && (t = curl_slist_append(hdr, "Content-Type: application/jose+json")))
        hdr = t;
    CURLcode e = CURLE_OUT_OF_MEMORY;
    if (hdr && setup(h, url, body, hdr))
        e = curl_easy_perform(h->curl);
    curl_slist_free_all(hdr);
    if (h->too_big || e == CURLE_FILESIZE_EXCEEDED) {
        snprintf(r->err, sizeof r->err, "the answer from %s is larger than %d KiB", url,
                 ACME_BODY_MAX / 1024);
        return -1;
    }
    if (e != CURLE_OK) {
        snprintf(r->err, sizeof r->err, "%s: %s", url,
                 e == CURLE_OPERATION_TIMEDOUT ? "no whole answer in time (the CA stalls)"
                                               : curl_easy_strerror(e));
        return -1;
    }
    curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &r->status);
    return 0;
}

void acme_http_free(struct acme_http *h)
{
    if (!h)
        return;
    if (h->curl)
        curl_easy_cleanup(h->curl);
    free(h->body);
    free(h);
}

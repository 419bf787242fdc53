/* SPDX-License-Identifier: MIT */
/*
 * h1_response_ref.c - see h1_response_ref.h. Written from the ABNF in the
 * plainest way: split the head into CRLF lines first, then check each line
 * character by character; framing per RFC 9112 §6.3 for a response.
 */
#include "h1_response_ref.h"

#include <string.h>
#include <strings.h>

static bool is_tchar(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool is_vchar_or_obs(unsigned char c)
{
    return (c >= 0x21 && c <= 0x7e) || c >= 0x80;
}

static bool name_is(const struct ref_field *f, const char *name)
{
    return f->name_len == strlen(name) && strncasecmp(f->name, name, f->name_len) == 0;
}

/* Whether a comma-separated value holds token t (case-insensitive). */
static bool has_token(const char *v, size_t n, const char *t)
{
    size_t i = 0, tn = strlen(t);
    while (i < n) {
        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        size_t s = i;
        while (i < n && v[i] != ',')
            i++;
        size_t e = i;
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
            e--;
        if (e - s == tn && strncasecmp(v + s, t, tn) == 0)
            return true;
    }
    return false;
}

static bool parse_status_line(const char *l, size_t n, struct ref_response *out)
{
    /* HTTP-version SP 3DIGIT SP [ reason-phrase ] */
    if (n < 13 || memcmp(l, "HTTP/1.", 7) != 0 || l[7] < '0' || l[7] > '9' || l[8] != ' ')
        return false;
    out->version_minor = l[7] - '0';
    for (int i = 9; i < 12; i++)
        if (l[i] < '0' || l[i] > '9')
            return false;
    out->status = (l[9] - '0') * 100 + (l[10] - '0') * 10 + (l[11] - '0');
    if (l[12] != ' ')
        return false;
    for (size_t i = 13; i < n; i++)
        if (!(l[i] == ' ' || l[i] == '\t' || is_vchar_or_obs((unsigned char)l[i])))
            return false;
    return true;
}

static bool parse_field_line(const char *l, size_t n, struct ref_field *f)
{
    size_t i = 0;
    while (i < n && is_tchar(l[i]))
        i++;
    if (i == 0 || i == n || l[i] != ':')
        return false;
    f->name = l;
    f->name_len = i;
    i++;
    while (i < n && (l[i] == ' ' || l[i] == '\t'))
        i++;
    size_t e = n;
    while (e > i && (l[e - 1] == ' ' || l[e - 1] == '\t'))
        e--;
    for (size_t k = i; k < e; k++)
        if (!(l[k] == ' ' || l[k] == '\t' || is_vchar_or_obs((unsigned char)l[k])))
            return false;
    f->value = l + i;
    f->value_len = e - i;
    return true;
}

static bool parse_decimal(const char *v, size_t n, uint64_t *out)
{
    if (n == 0 || n > 20)
        return false;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9')
            return false;
        uint64_t d = (uint64_t)(v[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return false; /* more than 2^64 - 1 */
        x = x * 10 + d;
    }
    *out = x;
    return true;
}

/* §6.3: the framing a client derives from the fields. */
static bool framing(struct ref_response *out)
{
    const struct ref_field *cl = NULL, *te = NULL;
    for (size_t i = 0; i < out->nfields; i++) {
        const struct ref_field *f = &out->f[i];
        if (name_is(f, "content-length")) {
            if (cl)
                return false;
            cl = f;
        } else if (name_is(f, "transfer-encoding")) {
            if (te)
                return false;
            te = f;
        } else if (name_is(f, "connection")) {
            out->conn_close |= has_token(f->value, f->value_len, "close");
            out->conn_keep_alive |= has_token(f->value, f->value_len, "keep-alive");
        }
    }
    bool no_content = out->status < 200 || out->status == 204 || out->status == 304;
    if (no_content) {
        out->framing = REF_NO_BODY;
        return !cl && !te;
    }
    if (te) {
        if (cl || te->value_len != 7 || strncasecmp(te->value, "chunked", 7) != 0)
            return false;
        out->framing = REF_CHUNKED;
        return true;
    }
    if (cl) {
        out->framing = REF_CONTENT_LENGTH;
        return parse_decimal(cl->value, cl->value_len, &out->content_length);
    }
    out->framing = REF_CLOSE_DELIMITED;
    return true;
}

bool ref_parse_response(const char *p, size_t n, struct ref_response *out)
{
    memset(out, 0, sizeof *out);
    size_t at = 0;
    bool first = true;
    for (;;) {
        size_t e = at;
        while (e < n && p[e] != '\r' && p[e] != '\n')
            e++;
        if (e + 1 >= n || p[e] != '\r' || p[e + 1] != '\n')
            return false; /* bare CR/LF, or no end of line */
        const char *l = p + at;
        size_t len = e - at;
        at = e + 2;
        if (first) {
            if (!parse_status_line(l, len, out))
                return false;
            first = false;
            continue;
        }
        if (len == 0)
            break;
        if (out->nfields == REF_FIELDS_MAX || !parse_field_line(l, len, &out->f[out->nfields]))
            return false;
        out->nfields++;
    }
    out->head_len = at;
    return framing(out);
}

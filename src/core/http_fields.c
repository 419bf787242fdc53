/* SPDX-License-Identifier: MIT */
/*
 * http_fields.c - the meaning of the fields an origin server without request
 * content must act on: framing (RFC 9112 §6.1-6.3: Transfer-Encoding and
 * Content-Length), Host (RFC 9112 §3.2, RFC 9110 §7.2), Connection (RFC 9110
 * §7.6.1, RFC 9112 §9.3), and the spans later stages read. It must never let
 * a request through whose end could be read two ways: a body is recognised
 * only in its two unambiguous forms (one valid Content-Length, or
 * Transfer-Encoding: chunked alone on HTTP/1.1), anything else is refused,
 * and a request with a body is never kept alive, so no byte of a body can
 * be taken for the next request.
 */
#include "http_fields.h"

#include "bytes.h"
#include "target.h"

enum field_id {
    F_OTHER,
    F_HOST,
    F_CONTENT_LENGTH,
    F_TRANSFER_ENCODING,
    F_CONNECTION,
    F_IF_MATCH,
    F_IF_NONE_MATCH,
    F_ACCEPT_ENCODING,
    F_IF_MODIFIED_SINCE,
    F_IF_UNMODIFIED_SINCE,
    F_IF_RANGE,
    F_RANGE,
    F_ACCEPT,
    F_REFERER,
    F_USER_AGENT,
};

static const struct {
    const char *name;
    unsigned char len;
    unsigned char id;
} known[] = {
    {"host", 4, F_HOST},
    {"content-length", 14, F_CONTENT_LENGTH},
    {"transfer-encoding", 17, F_TRANSFER_ENCODING},
    {"connection", 10, F_CONNECTION},
    {"if-match", 8, F_IF_MATCH},
    {"if-none-match", 13, F_IF_NONE_MATCH},
    {"accept-encoding", 15, F_ACCEPT_ENCODING},
    {"if-modified-since", 17, F_IF_MODIFIED_SINCE},
    {"if-unmodified-since", 19, F_IF_UNMODIFIED_SINCE},
    {"if-range", 8, F_IF_RANGE},
    {"range", 5, F_RANGE},
    {"accept", 6, F_ACCEPT},
    {"referer", 7, F_REFERER},
    {"user-agent", 10, F_USER_AGENT},
};

/* True when name equals the lower-case constant lower[0..name.n). */
static bool name_is(struct span name, const char *lower)
{
    for (size_t i = 0; i < name.n; i++)
        if (ascii_lower(name.p[i]) != lower[i])
            return false;
    return true;
}

/* Field names are case-insensitive (RFC 9110 §5.1). The length and first
 * byte rule out nearly every entry before a full comparison. */
static enum field_id field_lookup(struct span name)
{
    char first = name.n ? ascii_lower(name.p[0]) : 0;
    for (size_t i = 0; i < ARRAY_LEN(known); i++)
        if (name.n == known[i].len && first == known[i].name[0] && name_is(name, known[i].name))
            return (enum field_id)known[i].id;
    return F_OTHER;
}

/* The next non-empty element of a comma-separated list at *i, OWS trimmed
 * (RFC 9110 §5.6.1: empty elements are allowed and ignored). Returns false
 * at the end. Tokens only: a quoted-string holding a comma is not kept whole. */
static bool list_next(struct span v, size_t *i, struct span *e)
{
    while (*i < v.n) {
        size_t c = mem_find(v.p + *i, v.n - *i, ',');
        *e = span_trim_ows(span_make(v.p + *i, c));
        *i += c + 1;
        if (e->n)
            return true;
    }
    return false;
}

bool http_list_has_token(const struct span_list *l, const char *token)
{
    for (unsigned k = 0; k < l->n; k++) {
        struct span e;
        size_t i = 0;
        while (list_next(l->v[k], &i, &e))
            if (span_eq_nocase_cstr(e, token))
                return true;
    }
    return false;
}

/* A field that may appear once: a second one is ambiguous (RFC 9110 §5.3
 * allows repeating only list-valued fields), so it is refused rather than
 * one of them picked. */
static int set_once(struct span *slot, struct span v)
{
    if (slot->p)
        return -400;
    *slot = v;
    return 0;
}

static void set_first(struct span *slot, struct span v)
{
    if (!slot->p)
        *slot = v;
}

static int list_add(struct span_list *l, struct span v)
{
    if (l->n == HTTP_LIST_MAX)
        return -400;
    l->v[l->n++] = v;
    return 0;
}

/* Content-Length = 1*DIGIT (RFC 9110 §8.6). A repeat is refused even when
 * equal, as it could only come from a proxy that merged two messages. */
static int content_length(struct span v, struct http_framing *fr)
{
    uint64_t len;
    if (fr->cl_seen || !u64_parse(v, &len))
        return -400;
    fr->cl_seen = true;
    fr->cl = len;
    return 0;
}

/* Transfer codings in the IANA registry (RFC 9112 §7), "identity" among
 * them as the reserved name it is there: anything else is a coding this
 * server does not know. */
static bool coding_known(struct span c)
{
    static const char *const known_codings[] = {"chunked", "compress", "deflate",   "gzip",
                                                "x-gzip",  "identity", "x-compress"};
    size_t semi = mem_find(c.p, c.n, ';'); /* transfer-parameters */
    c = span_trim_ows(span_make(c.p, semi));
    for (size_t i = 0; i < ARRAY_LEN(known_codings); i++)
        if (span_eq_nocase_cstr(c, known_codings[i]))
            return true;
    return false;
}

/* Transfer-Encoding = #transfer-coding (RFC 9112 §6.1), possibly on several
 * lines: counts the codings, notes an unknown one and whether the only one
 * is "chunked". */
static int transfer_encoding(struct span v, struct http_framing *fr)
{
    struct span e;
    size_t i = 0;
    fr->te_seen = true;
    while (list_next(v, &i, &e)) {
        fr->te_count++;
        if (!coding_known(e))
            fr->te_unknown = true;
        fr->te_chunked = span_eq_nocase_lit(e, "chunked");
    }
    return 0;
}

/* The verdict on a request's framing (RFC 9112 §6.1, §6.3): 0 and
 * *has_body, or the status to refuse it with. */
static int framing_verdict(const struct http_framing *fr, int minor, bool *has_body)
{
    *has_body = false;
    if (fr->te_seen) {
        /* CL+TE may be a smuggling attempt (§6.3 rule 3); 1.0 has no
         * chunked coding, so its TE cannot be trusted (§6.1). */
        if (fr->cl_seen || minor == 0)
            return -400;
        if (fr->te_unknown)
            return -501; /* §6.1: a coding not understood */
        if (fr->te_count != 1 || !fr->te_chunked)
            return -400; /* chunked not alone: the length is unknowable */
        *has_body = true;
        return 0;
    }
    *has_body = fr->cl_seen && fr->cl > 0;
    return 0;
}

/* Host = uri-host [ ":" port ] (RFC 9110 §7.2). */
static int host(struct span v, struct http_info *out)
{
    if (out->has_host || !target_host_valid(v))
        return -400;
    out->has_host = true;
    out->host = v;
    return 0;
}

/* Connection = #connection-option, tokens compared case-insensitively
 * (RFC 9110 §7.6.1); options other than these two are ignored. */
static void connection(struct span v, struct http_framing *t)
{
    struct span e;
    size_t i = 0;
    while (list_next(v, &i, &e)) {
        if (span_eq_nocase_lit(e, "close"))
            t->close = true;
        else if (span_eq_nocase_lit(e, "keep-alive"))
            t->keep_alive = true;
    }
}

static int field_apply(enum field_id id, struct span v, struct http_info *out)
{
    struct http_framing *fr = &out->framing;
    switch (id) {
    case F_HOST: return host(v, out);
    case F_CONTENT_LENGTH: return content_length(v, fr);
    case F_TRANSFER_ENCODING: return transfer_encoding(v, fr);
    case F_CONNECTION: connection(v, fr); return 0;
    case F_IF_MATCH: return list_add(&out->if_match, v);
    case F_IF_NONE_MATCH: return list_add(&out->if_none_match, v);
    case F_ACCEPT_ENCODING: return list_add(&out->accept_encoding, v);
    case F_IF_MODIFIED_SINCE: return set_once(&out->if_modified_since, v);
    case F_IF_UNMODIFIED_SINCE: return set_once(&out->if_unmodified_since, v);
    case F_IF_RANGE: return set_once(&out->if_range, v);
    case F_RANGE: return set_once(&out->range, v);
    case F_ACCEPT: set_first(&out->accept, v); return 0;
    case F_REFERER: set_first(&out->referer, v); return 0;
    case F_USER_AGENT: set_first(&out->user_agent, v); return 0;
    case F_OTHER: break;
    }
    return 0;
}

/* Methods whose requests carry no content here: a body on them can only be
 * a mistake or an attempt to smuggle the next request (RFC 9110 §9.3.1). */
static bool method_takes_no_body(enum http_method m)
{
    return m == HTTP_METHOD_GET || m == HTTP_METHOD_HEAD || m == HTTP_METHOD_OPTIONS;
}

void http_fields_begin(struct http_info *out)
{
    *out = (struct http_info){0};
}

int http_fields_add(struct http_info *out, struct span name, struct span value)
{
    return field_apply(field_lookup(name), value, out);
}

int http_fields_end(struct http_info *out, enum http_method method, int minor)
{
    const struct http_framing *fr = &out->framing;
    int r = framing_verdict(fr, minor, &out->has_body);
    if (r < 0)
        return r;
    if (out->has_body && method_takes_no_body(method))
        return -400;
    /* RFC 9112 §3.2: a server MUST respond 400 to an HTTP/1.1 request
     * without Host; more than one is refused for every version. */
    if (minor == 1 && !out->has_host)
        return -400;
    /* RFC 9112 §9.3: 1.1 persists unless "close"; 1.0 only when asked to.
     * A body is never read, so its connection cannot persist. */
    out->keep_alive = !fr->close && (minor == 1 || fr->keep_alive) && !out->has_body;
    return 0;
}

int http_fields_analyze(const struct http_request *req, struct http_info *out)
{
    http_fields_begin(out);
    for (size_t i = 0; i < req->nfields; i++) {
        int r = http_fields_add(out, req->fields[i].name, req->fields[i].value);
        if (r < 0)
            return r;
    }
    return http_fields_end(out, req->method_id, req->minor);
}

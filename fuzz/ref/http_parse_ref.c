/* SPDX-License-Identifier: MIT */
/*
 * http_parse_ref.c - the reference request-head parser of http_parse_ref.h.
 * Written for reading, not speed: phase 1 builds the complete list of lines
 * before phase 2 looks at any of them, and phase 2 collects every verdict
 * the bytes propose before choosing one. It must stay independent of
 * src/core/http_parse.c (no shared helpers, no class table), or a shared bug
 * would agree with itself.
 *
 * The ABNF (RFC 9112 §2.1, §2.3, §3, §5; RFC 9110 §5.5, §5.6.2):
 *   HTTP-message   = start-line CRLF *( field-line CRLF ) CRLF [ message-body ]
 *   request-line   = method SP request-target SP HTTP-version
 *   method         = token
 *   HTTP-version   = HTTP-name "/" DIGIT "." DIGIT
 *   HTTP-name      = %s"HTTP"
 *   field-line     = field-name ":" OWS field-value OWS
 *   field-name     = token
 *   field-value    = *field-content     (with the OWS: any SP, HTAB, VCHAR
 *                                        or obs-text, in any order)
 *   token          = 1*tchar
 * plus http_parse.h's narrowing: request-target = 1*VCHAR (its form is
 * target.c's business), single SPs only, no bare CR or LF, no obs-fold, at
 * most HTTP_MAX_LEADING_CRLF empty lines before the request line.
 *
 * Where each verdict is decided (the position the earliest-wins rule
 * compares), from http_parse.h:
 *   - a byte not allowed where it stands: 400 at that byte; a line that ends
 *     (its CR or LF arrived) before its rule is complete: 400 at that CR/LF;
 *     a bare CR: 400 at the byte after it; a bare LF: 400 at the LF;
 *   - HTTP-version is one token judged whole at the end of its line ("-505
 *     ... reported at the end of the request line"; a malformed version is
 *     judged at the same place): until the LF arrives its bytes need only be
 *     VCHAR. 400 or 505 at the LF;
 *   - 414: the request line's content may hold HTTP_MAX_REQUEST_LINE bytes;
 *     a byte at index HTTP_MAX_REQUEST_LINE that is not its CR proposes 414
 *     there ("as soon as more than that many bytes arrived without its
 *     end");
 *   - 431 (size): the field section, its final CRLF included, may hold
 *     HTTP_MAX_FIELD_SECTION bytes; when its last allowed byte arrived and is
 *     not the section's final LF, 431 there;
 *   - 431 (count): the first byte of field line HTTP_MAX_FIELDS + 1, unless it
 *     is the CR of the empty line ("reported at the first byte of the extra
 *     line").
 * Two proposals at one byte: the field count outranks 400 (the count is
 * reached before the line's syntax), 400 outranks the size limits (a byte
 * that cannot be valid is refused as such; only a valid byte can make a line
 * too long).
 */
#include "ref/http_parse_ref.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The fuzzer is steered by the coverage of the code under test; the
 * reference's own branches would only add noise, and their comparison
 * callbacks cost most of a run. */
#pragma clang attribute push(__attribute__((no_sanitize("coverage"))), apply_to = function)

/* ---- character classes, from the RFC text ----------------------------------- */

static bool is_alpha(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
 *         "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA      (RFC 9110 §5.6.2) */
static bool is_tchar(unsigned char c)
{
    return is_alpha(c) || is_digit(c) || (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* VCHAR = %x21-7E (RFC 5234 B.1) */
static bool is_vchar(unsigned char c)
{
    return c >= 0x21 && c <= 0x7e;
}

/* obs-text = %x80-FF (RFC 9110 §5.6.4) */
static bool is_obs_text(unsigned char c)
{
    return c >= 0x80;
}

/* OWS = *( SP / HTAB ) (RFC 9110 §5.6.3) */
static bool is_ows(unsigned char c)
{
    return c == ' ' || c == '\t';
}

/* ---- phase 1: the bytes as lines ---------------------------------------------- */

enum line_end {
    END_NONE,    /* the bytes ran out inside the line */
    END_CR,      /* a CR is the last byte received: CRLF or bare CR, not known yet */
    END_CRLF,    /* CR LF */
    END_BARE_CR, /* CR and then a byte other than LF */
    END_BARE_LF, /* LF without a CR before it */
};

struct line {
    size_t start, len; /* the content p[start .. start+len), without its end */
    enum line_end end;
};

/* Cuts p[0..n) into lines at CR and LF. Stops after the first line that does
 * not end in CRLF, and after the empty line that ends the head (the first
 * empty line after a line with content); *count lines are returned. */
static struct line *split_lines(const char *p, size_t n, size_t *count)
{
    size_t room = 16, k = 0, at = 0;
    struct line *v = malloc(room * sizeof *v);
    bool seen_content = false;
    for (;;) {
        struct line l = {at, 0, END_NONE};
        while (at < n && p[at] != '\r' && p[at] != '\n')
            at++;
        l.len = at - l.start;
        if (at == n)
            l.end = END_NONE;
        else if (p[at] == '\n')
            l.end = END_BARE_LF;
        else if (at + 1 == n)
            l.end = END_CR;
        else if (p[at + 1] == '\n')
            l.end = END_CRLF;
        else
            l.end = END_BARE_CR;
        if (k == room)
            v = realloc(v, (room *= 2) * sizeof *v);
        v[k++] = l;
        if (l.end != END_CRLF || (l.len == 0 && seen_content))
            break;
        seen_content = seen_content || l.len > 0;
        at += 2;
    }
    *count = k;
    return v;
}

/* ---- phase 2: verdicts proposed at positions ---------------------------------- */

enum rank { RANK_LIMIT = 1, RANK_SYNTAX = 2, RANK_COUNT = 3 };

struct verdicts {
    size_t pos; /* SIZE_MAX: none proposed */
    long code;
    enum rank rank;
};

static void propose(struct verdicts *v, size_t pos, long code, enum rank rank)
{
    if (pos < v->pos || (pos == v->pos && rank > v->rank)) {
        v->pos = pos;
        v->code = code;
        v->rank = rank;
    }
}

/* A line's content as the rules see it. */
struct cursor {
    const char *p;
    size_t at, end; /* the content not yet consumed: p[at..end) */
    bool closed;    /* the line's CR or LF is present at p[end] */
};

enum rule { RULE_OK, RULE_SHORT, RULE_FAIL };

/* The content ran out where a rule needs a byte: a failure at the line's end
 * when it has one, else more bytes may still complete the rule. */
static enum rule ran_out(const struct cursor *c, size_t *fail)
{
    if (!c->closed)
        return RULE_SHORT;
    *fail = c->end;
    return RULE_FAIL;
}

/* 1*( byte with property ok ): stops at the first byte without it. */
static enum rule one_or_more(struct cursor *c, bool (*ok)(unsigned char), size_t *fail)
{
    if (c->at == c->end)
        return ran_out(c, fail);
    if (!ok((unsigned char)c->p[c->at])) {
        *fail = c->at;
        return RULE_FAIL;
    }
    while (c->at < c->end && ok((unsigned char)c->p[c->at]))
        c->at++;
    return RULE_OK;
}

/* *( byte with property ok ) up to the end of the content, which must end
 * the rule. */
static enum rule rest_of_line(struct cursor *c, bool (*ok)(unsigned char), size_t *fail)
{
    for (; c->at < c->end; c->at++) {
        if (!ok((unsigned char)c->p[c->at])) {
            *fail = c->at;
            return RULE_FAIL;
        }
    }
    return c->closed ? RULE_OK : RULE_SHORT;
}

static enum rule literal_char(struct cursor *c, char want, size_t *fail)
{
    if (c->at == c->end)
        return ran_out(c, fail);
    if (c->p[c->at] != want) {
        *fail = c->at;
        return RULE_FAIL;
    }
    c->at++;
    return RULE_OK;
}

/* token = 1*tchar */
static enum rule token(struct cursor *c, struct span *out, size_t *fail)
{
    size_t from = c->at;
    enum rule r = one_or_more(c, is_tchar, fail);
    *out = span_make(c->p + from, c->at - from);
    return r;
}

/* request-target, as http_parse.h narrows it: 1*VCHAR */
static enum rule request_target(struct cursor *c, struct span *out, size_t *fail)
{
    size_t from = c->at;
    enum rule r = one_or_more(c, is_vchar, fail);
    *out = span_make(c->p + from, c->at - from);
    return r;
}

/* HTTP-version's bytes before the line ends: only VCHAR can be part of it. */
static enum rule version_bytes(struct cursor *c, struct span *out, size_t *fail)
{
    size_t from = c->at;
    enum rule r = rest_of_line(c, is_vchar, fail);
    *out = span_make(c->p + from, c->at - from);
    return r;
}

/* request-line = method SP request-target SP HTTP-version */
static enum rule request_line(struct cursor *c, struct span *method, struct span *target,
                              struct span *version, size_t *fail)
{
    enum rule r;
    if ((r = token(c, method, fail)) != RULE_OK)
        return r;
    if ((r = literal_char(c, ' ', fail)) != RULE_OK)
        return r;
    if ((r = request_target(c, target, fail)) != RULE_OK)
        return r;
    if ((r = literal_char(c, ' ', fail)) != RULE_OK)
        return r;
    return version_bytes(c, version, fail);
}

/* HTTP-version = HTTP-name "/" DIGIT "." DIGIT, judged whole. Returns the
 * minor version to record, -400 when malformed, -505 when not served. */
static int http_version(struct span v, bool http1_minor_any)
{
    if (v.n != 8 || memcmp(v.p, "HTTP/", 5) != 0 || !is_digit((unsigned char)v.p[5]) ||
        v.p[6] != '.' || !is_digit((unsigned char)v.p[7]))
        return -400;
    int major = v.p[5] - '0', minor = v.p[7] - '0';
    if (major != 1)
        return -505;
    if (minor <= 1)
        return minor;
    return http1_minor_any ? 1 : -505;
}

static bool is_value_byte(unsigned char c)
{
    return is_vchar(c) || is_obs_text(c) || is_ows(c);
}

/* field-line = field-name ":" OWS field-value OWS; the value is stored
 * without the OWS around it. */
static enum rule field_line(struct cursor *c, struct http_field *f, size_t *fail)
{
    enum rule r;
    if ((r = token(c, &f->name, fail)) != RULE_OK)
        return r;
    if ((r = literal_char(c, ':', fail)) != RULE_OK)
        return r;
    size_t from = c->at;
    if ((r = rest_of_line(c, is_value_byte, fail)) != RULE_OK)
        return r;
    size_t a = from, b = c->at;
    while (a < b && is_ows((unsigned char)c->p[a]))
        a++;
    while (b > a && is_ows((unsigned char)c->p[b - 1]))
        b--;
    f->value = span_make(c->p + a, b - a);
    return RULE_OK;
}

static struct cursor line_cursor(const char *p, const struct line *l)
{
    return (struct cursor){p, l->start, l->start + l->len, l->end != END_NONE};
}

/* Framing: a bare CR is refused at the byte after it, a bare LF at itself. */
static void judge_framing(const struct line *v, size_t count, struct verdicts *out)
{
    for (size_t i = 0; i < count; i++) {
        if (v[i].end == END_BARE_CR)
            propose(out, v[i].start + v[i].len + 1, -400, RANK_SYNTAX);
        if (v[i].end == END_BARE_LF)
            propose(out, v[i].start + v[i].len, -400, RANK_SYNTAX);
    }
}

/* An empty line as the head knows it: its first byte is a CR. */
static bool is_empty_line(const struct line *l)
{
    return l->len == 0 && (l->end == END_CR || l->end == END_CRLF || l->end == END_BARE_CR);
}

static const char *const method_names[] = {"",    "GET",    "HEAD",  "OPTIONS", "POST",
                                           "PUT", "DELETE", "PATCH", "CONNECT", "TRACE"};

static enum http_method method_of(struct span m)
{
    for (size_t i = 1; i < sizeof method_names / sizeof method_names[0]; i++)
        if (m.n == strlen(method_names[i]) && memcmp(m.p, method_names[i], m.n) == 0)
            return (enum http_method)i;
    return HTTP_METHOD_OTHER;
}

/* The field lines from v[i]; returns the head's length when its empty line
 * is complete, else 0. */
static size_t judge_fields(const char *p, size_t n, const struct line *v, size_t count, size_t i,
                           struct http_request *req, struct verdicts *out)
{
    size_t section = v[i].start;
    size_t last_allowed = section + HTTP_MAX_FIELD_SECTION - 1;
    size_t head = 0;
    req->nfields = 0;
    for (; i < count; i++) {
        const struct line *l = &v[i];
        if (is_empty_line(l)) {
            if (l->end == END_CRLF)
                head = l->start + 2;
            break;
        }
        if (l->len == 0 && l->end == END_NONE)
            break; /* the line's first byte has not arrived */
        if (req->nfields == HTTP_MAX_FIELDS) {
            propose(out, l->start, -431, RANK_COUNT);
            break;
        }
        struct cursor c = line_cursor(p, l);
        size_t fail;
        struct http_field f;
        enum rule r = field_line(&c, &f, &fail);
        if (r == RULE_FAIL)
            propose(out, fail, -400, RANK_SYNTAX);
        if (r != RULE_OK || l->end != END_CRLF)
            break;
        req->fields[req->nfields++] = f;
    }
    /* The section's last allowed byte arrived and was not its final LF. */
    if (n > last_allowed && (head == 0 || head - 1 > last_allowed))
        propose(out, last_allowed, -431, RANK_LIMIT);
    return head;
}

long ref_http_parse(const char *p, size_t n, bool http1_minor_any, struct http_request *req)
{
    size_t count;
    struct line *v = split_lines(p, n, &count);
    struct verdicts out = {SIZE_MAX, 0, RANK_LIMIT};
    size_t head = 0;
    judge_framing(v, count, &out);

    /* Empty lines before the request line (RFC 9112 §2.2). */
    size_t i = 0;
    while (i < count && is_empty_line(&v[i]) && i < HTTP_MAX_LEADING_CRLF && v[i].end == END_CRLF)
        i++;
    if (i == HTTP_MAX_LEADING_CRLF && i < count && is_empty_line(&v[i]))
        propose(&out, v[i].start, -400, RANK_SYNTAX);
    const struct line *rl = i < count ? &v[i] : NULL;

    /* The request line: a line whose first byte arrived and is not a CR. */
    if (rl && !is_empty_line(rl) && !(rl->len == 0 && rl->end == END_NONE)) {
        if (rl->len > HTTP_MAX_REQUEST_LINE)
            propose(&out, rl->start + HTTP_MAX_REQUEST_LINE, -414, RANK_LIMIT);
        struct cursor c = line_cursor(p, rl);
        struct span version;
        size_t fail;
        enum rule r = request_line(&c, &req->method, &req->target, &version, &fail);
        if (r == RULE_FAIL)
            propose(&out, fail, -400, RANK_SYNTAX);
        if (r == RULE_OK && rl->end == END_CRLF) {
            int minor = http_version(version, http1_minor_any);
            if (minor < 0) {
                propose(&out, rl->start + rl->len + 1, minor, RANK_SYNTAX);
            } else {
                req->minor = minor;
                req->method_id = method_of(req->method);
                head = judge_fields(p, n, v, count, i + 1, req, &out);
            }
        }
    }
    free(v);
    if (out.pos != SIZE_MAX)
        return out.code;
    return head > 0 ? (long)head : HTTP_PARSE_AGAIN;
}

#pragma clang attribute pop

/* SPDX-License-Identifier: MIT */
/*
 * cond.c - precondition evaluation. Entity-tags are parsed strictly
 * (RFC 9110 §8.8.3: [W/] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E /
 * obs-text); a list element that does not parse makes the list match
 * nothing, so a garbled If-None-Match never produces a 304 and a garbled
 * If-Match always fails (412) rather than guess.
 */
#include "cond.h"

#include "bytes.h"
#include "date.h"

struct tag {
    struct span opaque; /* with its quotes */
    bool weak;
};

static bool is_etagc(unsigned char c)
{
    return c == 0x21 || (c >= 0x23 && c <= 0x7e) || c >= 0x80;
}

/* Parses one entity-tag at s[*at]; advances past it. */
static bool parse_tag(struct span s, size_t *at, struct tag *t)
{
    size_t i = *at;
    t->weak = false;
    if (s.n - i >= 2 && s.p[i] == 'W' && s.p[i + 1] == '/') {
        t->weak = true;
        i += 2;
    }
    if (i >= s.n || s.p[i] != '"')
        return false;
    size_t start = i++;
    while (i < s.n && is_etagc((unsigned char)s.p[i]))
        i++;
    if (i >= s.n || s.p[i] != '"')
        return false;
    t->opaque = span_make(s.p + start, i + 1 - start);
    *at = i + 1;
    return true;
}

static void skip_ows(struct span s, size_t *at)
{
    while (*at < s.n && (s.p[*at] == ' ' || s.p[*at] == '\t'))
        (*at)++;
}

/* One field line (etag: ours, strong, quoted): "*" or 1#entity-tag (empty elements allowed,
 * §5.6.1.2). Returns 1 on a match, 0 on none, -1 on a syntax error. */
static int line_match(struct span s, struct span etag, bool weak)
{
    struct span v = span_trim_ows(s);
    if (v.n == 1 && v.p[0] == '*')
        return 1;
    size_t at = 0;
    int found = 0;
    while (at < v.n) {
        skip_ows(v, &at);
        if (at < v.n && v.p[at] == ',') {
            at++;
            continue;
        }
        struct tag t;
        if (!parse_tag(v, &at, &t))
            return -1;
        /* Our own tags are always strong, so strong comparison only needs
         * the received tag to be strong too (§8.8.3.2). */
        bool equal = t.opaque.n == etag.n && mem_eq(t.opaque.p, etag.p, etag.n);
        if (equal && (weak || !t.weak))
            found = 1;
        skip_ows(v, &at);
        if (at < v.n && v.p[at] != ',')
            return -1;
    }
    return found;
}

bool cond_etag_list_match(const struct span_list *l, struct span etag, bool weak)
{
    bool found = false;
    for (unsigned i = 0; i < l->n; i++) {
        int r = line_match(l->v[i], etag, weak);
        if (r < 0)
            return false;
        found = found || r == 1;
    }
    return found;
}

/* A valid HTTP-date that is not in the future, or false. */
static bool usable_date(struct span v, int64_t now, int64_t *t)
{
    if (!v.p)
        return false;
    return date_parse_http(span_trim_ows(v), t) && *t <= now;
}

enum cond_verdict cond_evaluate(const struct cond_input *in)
{
    const struct http_info *f = in->info;
    int64_t date;
    if (f->if_match.n) {
        if (!cond_etag_list_match(&f->if_match, in->etag, false))
            return COND_FAILED;
    } else if (in->has_last_modified && f->if_unmodified_since.p &&
               date_parse_http(span_trim_ows(f->if_unmodified_since), &date) &&
               in->last_modified > date) {
        return COND_FAILED;
    }
    if (f->if_none_match.n) {
        if (cond_etag_list_match(&f->if_none_match, in->etag, true))
            return in->get_or_head ? COND_NOT_MODIFIED : COND_FAILED;
    } else if (in->get_or_head && in->has_last_modified &&
               usable_date(f->if_modified_since, in->now, &date) && in->last_modified <= date) {
        return COND_NOT_MODIFIED;
    }
    return COND_PROCEED;
}

bool cond_if_range(struct span value, struct span etag, int64_t last_modified,
                   bool has_last_modified, int64_t now)
{
    struct span v = span_trim_ows(value);
    /* An entity-tag starts with '"' or "W/"; a date starts with a day name
     * (and "Wed," must not be taken for a weak tag). */
    if (v.n && (v.p[0] == '"' || (v.n >= 2 && v.p[0] == 'W' && v.p[1] == '/'))) {
        size_t at = 0;
        struct tag t;
        return parse_tag(v, &at, &t) && at == v.n && !t.weak && t.opaque.n == etag.n &&
               mem_eq(t.opaque.p, etag.p, etag.n);
    }
    /* A date validates only a strong Last-Modified: one at least a second
     * before now (§8.8.2.2), since a file changed twice within its last
     * second keeps the same date. A date clamped to now is never strong. */
    int64_t date;
    return has_last_modified && last_modified <= now - 1 && date_parse_http(v, &date) &&
           date == last_modified;
}

/* SPDX-License-Identifier: MIT */
/*
 * cond.h - conditional requests (RFC 9110 §13): the four preconditions in the
 * order §13.2.2 prescribes, and If-Range (§13.1.5). Pure functions over the
 * request's field values, the representation's validators and `now`.
 */
#ifndef PITH_COND_H
#define PITH_COND_H

#include "http_fields.h"

enum cond_verdict {
    COND_PROCEED,      /* evaluate Range next, then 200/206 */
    COND_NOT_MODIFIED, /* 304 */
    COND_FAILED,       /* 412 */
};

struct cond_input {
    const struct http_info *info; /* the request's precondition fields */
    bool get_or_head;
    struct span etag;      /* the representation's strong tag, quoted */
    int64_t last_modified; /* seconds, as sent in Last-Modified */
    bool has_last_modified;
    int64_t now; /* seconds: dates after now are ignored */
};

/*
 * §13.2.2: (1) If-Match, strong comparison, "*" matches: no match -> 412;
 * (2) else If-Unmodified-Since (a valid date): modified after it -> 412;
 * (3) If-None-Match, weak comparison, "*" matches: a match -> 304 for
 * GET/HEAD, else 412; (4) else for GET/HEAD If-Modified-Since (a valid date
 * not in the future): not modified since -> 304. Invalid dates are ignored
 * (§13.1.3, §13.1.4); a malformed entity-tag list matches nothing.
 */
enum cond_verdict cond_evaluate(const struct cond_input *in);

/* If-Range (§13.1.5): true when the Range may be honoured: the value is a
 * strong tag equal to etag, or a date exactly equal to last_modified when
 * that is a strong validator, at least one second before now (§8.8.2.2;
 * last_modified is the value sent, already clamped to now). A weak tag,
 * another tag, another date, a weak date or garbage: false (send 200 full). */
bool cond_if_range(struct span value, struct span etag, int64_t last_modified,
                   bool has_last_modified, int64_t now);

/* True when the entity-tag list (If-Match / If-None-Match lines) contains
 * etag; `weak` selects weak comparison (§8.8.3.2). "*" matches. */
bool cond_etag_list_match(const struct span_list *l, struct span etag, bool weak);

#endif

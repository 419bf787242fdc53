/* SPDX-License-Identifier: MIT */
/*
 * target.c - request-target forms (RFC 9112 §3.2), authority syntax (RFC
 * 3986 §3.2.2, used for Host too, RFC 9110 §7.2), and the path normalization
 * that stands between a URL and openat(): percent-decoding exactly once (RFC
 * 3986 §2.4), dot-segment removal (§5.2.4) that refuses to climb instead of
 * clamping at the root, and the dotfile rule of DESIGN.md §2. It must never
 * emit a path that starts with '/', holds an empty, "." or ".." segment, a
 * NUL, or a '/' that was encoded, and never decodes a byte twice.
 */
#include "target.h"

#include "bytes.h"
#include "escape.h"
#include "http_parse.h"
#include "netaddr.h"

_Static_assert(TARGET_LOCATION_MAX == HTTP_MAX_REQUEST_LINE + 8, "a Location holds a request line");

/* ---- authority ---------------------------------------------------------- */

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~" (RFC 3986 §2.3) */
static bool is_unreserved(char c)
{
    return is_alpha(c) || ascii_is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* sub-delims (RFC 3986 §2.2) */
static bool is_sub_delim(char c)
{
    static const char set[] = "!$&'()*+,;=";
    return c != '\0' && mem_find(set, sizeof(set) - 1, c) < sizeof(set) - 1;
}

/* IPv6address (RFC 3986 §3.2.2): eight 1-4 hex-digit groups, the last two
 * possibly written as an IPv4 address without leading zeros, and at most one
 * "::" standing for at least one zero group. netaddr.c's parser reads
 * exactly that language, so Host and the PROXY protocol share it. */
static bool ipv6_valid(const char *p, size_t n)
{
    struct net_addr unused;
    return net_ip6_parse(span_make(p, n), &unused);
}

/* IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ) */
static bool ipvfuture_valid(const char *p, size_t n)
{
    size_t i = 1;
    if (n < 1 || (p[0] != 'v' && p[0] != 'V'))
        return false;
    while (i < n && hex_value(p[i]) >= 0)
        i++;
    if (i == 1 || i >= n || p[i] != '.' || ++i == n)
        return false;
    for (; i < n; i++)
        if (!is_unreserved(p[i]) && !is_sub_delim(p[i]) && p[i] != ':')
            return false;
    return true;
}

/* reg-name = *( unreserved / pct-encoded / sub-delims ); IPv4address is a
 * subset, so it needs no rule of its own here. Returns the length of the
 * longest valid prefix. */
static size_t reg_name_len(const char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (p[i] == '%') {
            if (n - i < 3 || hex_value(p[i + 1]) < 0 || hex_value(p[i + 2]) < 0)
                break;
            i += 3;
        } else if (is_unreserved(p[i]) || is_sub_delim(p[i])) {
            i++;
        } else {
            break;
        }
    }
    return i;
}

/* Length of the host part at the start of a syntactically valid authority
 * (IP-literal or reg-name), or -1 if the host part is malformed. */
static long host_len(struct span a)
{
    if (a.n && a.p[0] == '[') {
        size_t close = mem_find(a.p, a.n, ']');
        if (close == a.n)
            return -1;
        const char *lit = a.p + 1;
        size_t len = close - 1;
        if (!ipv6_valid(lit, len) && !ipvfuture_valid(lit, len))
            return -1;
        return (long)close + 1;
    }
    return (long)reg_name_len(a.p, a.n);
}

bool target_host_valid(struct span a)
{
    long h = host_len(a);
    if (h < 0)
        return false;
    size_t i = (size_t)h;
    if (i == a.n)
        return true;
    if (a.p[i] != ':')
        return false;
    /* port = *DIGIT (RFC 3986 §3.2.3): empty is allowed. */
    for (i++; i < a.n; i++)
        if (!ascii_is_digit(a.p[i]))
            return false;
    return true;
}

/* ---- request-target forms ---------------------------------------------- */

/* path [ "?" query ] starting at rest.p (which starts with '/' or '?' or is
 * empty for an absolute-form target without path). */
static void split_path_query(struct span rest, struct target *out)
{
    size_t q = mem_find(rest.p, rest.n, '?');
    out->path = q ? span_make(rest.p, q) : SPAN_LIT("/");
    out->has_query = q < rest.n;
    out->query = out->has_query ? span_make(rest.p + q + 1, rest.n - q - 1) : span_make(NULL, 0);
}

/* absolute-form = absolute-URI (RFC 9112 §3.2.2) restricted to the http and
 * https schemes (RFC 9110 §4.2), which require a non-empty host and forbid
 * userinfo (RFC 9110 §4.2.4: a recipient SHOULD treat it as an error). */
static int split_absolute(struct span raw, struct target *out)
{
    size_t s;
    if (raw.n >= 7 && span_eq_nocase_cstr(span_make(raw.p, 7), "http://"))
        s = 7;
    else if (raw.n >= 8 && span_eq_nocase_cstr(span_make(raw.p, 8), "https://"))
        s = 8;
    else
        return -400;
    size_t e = s;
    while (e < raw.n && raw.p[e] != '/' && raw.p[e] != '?')
        e++;
    struct span a = span_make(raw.p + s, e - s);
    if (mem_find(a.p, a.n, '@') < a.n || host_len(a) <= 0 || !target_host_valid(a))
        return -400;
    out->form = TARGET_ABSOLUTE;
    out->authority = a;
    split_path_query(span_make(raw.p + e, raw.n - e), out);
    return 0;
}

int target_split(struct span raw, struct target *out)
{
    *out = (struct target){0};
    /* A fragment is never sent (RFC 9112 §3.2); one here is an attack or a
     * broken client, and stripping it would be guessing. */
    if (raw.n == 0 || mem_find(raw.p, raw.n, '#') < raw.n)
        return -400;
    if (raw.p[0] == '/') {
        out->form = TARGET_ORIGIN;
        split_path_query(raw, out);
        return 0;
    }
    if (raw.n == 1 && raw.p[0] == '*') {
        out->form = TARGET_ASTERISK;
        out->path = raw;
        return 0;
    }
    return split_absolute(raw, out);
}

/* ---- normalization ------------------------------------------------------ */

/* The output buffer used as a stack of segments joined by '/'. Segments that
 * did not fit are counted in `over` (they sit on top of the stored ones, so
 * popping takes them first); `hidden` counts stored segments the dotfile rule
 * refuses. */
struct seg_stack {
    char *out;
    size_t cap, len, depth, over, hidden;
};

enum seg_kind { SEG_EMPTY, SEG_DOT, SEG_DOTDOT, SEG_NAME };

/* Decodes one raw segment (no '/') once: "%25" gives a '%' that is final.
 * Writes the bytes that fit in dst[0..room), the first two in head[], and
 * returns the decoded length, or -400 for a '%' without two hex digits, %00
 * or a raw NUL (a C string would end there), or %2F (an encoded '/' would
 * make a segment boundary the client said is not one, RFC 3986 §2.2). */
static long decode_segment(const char *p, size_t n, char *dst, size_t room, char head[2])
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++, k++) {
        char c = p[i];
        if (c == '%') {
            if (n - i < 3 || hex_value(p[i + 1]) < 0 || hex_value(p[i + 2]) < 0)
                return -400;
            c = (char)(hex_value(p[i + 1]) * 16 + hex_value(p[i + 2]));
            if (c == '/')
                return -400;
            i += 2;
        }
        if (c == '\0')
            return -400;
        if (k < 2)
            head[k] = c;
        if (k < room)
            dst[k] = c;
    }
    return (long)k;
}

/* The dotfile rule (DESIGN.md §2): no segment may start with '.', except a
 * first segment equal to ".well-known" (RFC 8615). */
static bool is_hidden(const char *seg, size_t n, bool first)
{
    return seg[0] == '.' && !(first && n == 11 && mem_eq(seg, ".well-known", 11));
}

static void stack_pop(struct seg_stack *st)
{
    st->depth--;
    if (st->over) {
        st->over--;
        return;
    }
    size_t s = st->len;
    while (s > 0 && st->out[s - 1] != '/')
        s--;
    if (is_hidden(st->out + s, st->len - s, s == 0))
        st->hidden--;
    st->len = s ? s - 1 : 0;
}

/* Dot-segments are recognized after decoding: "%2e%2E" is ".." (RFC 3986
 * §6.2.2.2 makes the two equivalent). */
static enum seg_kind classify(size_t k, const char head[2])
{
    if (k == 0)
        return SEG_EMPTY;
    if (k == 1 && head[0] == '.')
        return SEG_DOT;
    if (k == 2 && head[0] == '.' && head[1] == '.')
        return SEG_DOTDOT;
    return SEG_NAME;
}

/* Decodes the segment p[0..n) onto the stack; sets *kind. */
static long stack_segment(struct seg_stack *st, const char *p, size_t n, enum seg_kind *kind)
{
    /* Stored segments are non-empty, so len > 0 exactly when one is. */
    size_t at = st->len + (st->len > 0 ? 1 : 0);
    size_t room = (st->over == 0 && at <= st->cap) ? st->cap - at : 0;
    char head[2] = {0, 0};
    long k = decode_segment(p, n, room ? st->out + at : NULL, room, head);
    if (k < 0)
        return k;
    *kind = classify((size_t)k, head);
    if (*kind == SEG_EMPTY || *kind == SEG_DOT)
        return 0;
    if (*kind == SEG_DOTDOT) {
        /* RFC 3986 §5.2.4 would stop at the root; a client that tries to
         * climb is asking for something else than what it would get. */
        if (st->depth == 0)
            return -400;
        stack_pop(st);
        return 0;
    }
    st->depth++;
    if (st->over > 0 || (size_t)k > room) {
        st->over++;
        return 0;
    }
    if (at > 0)
        st->out[at - 1] = '/';
    if (is_hidden(st->out + at, (size_t)k, at == 0))
        st->hidden++;
    st->len = at + (size_t)k;
    return 0;
}

/* Verdicts come in a fixed order: any decoding error or climb (400, returned
 * where found: both are 400), then a result longer than cap (414), then a
 * hidden segment (403). 414 goes before 403 because segments that did not
 * fit were not kept to be checked; neither answer reveals anything. */
static long normalize(struct span path, char *out, size_t cap, unsigned *flags, bool hidden_ok);

long target_normalize(struct span path, char *out, size_t cap, unsigned *flags)
{
    return normalize(path, out, cap, flags, false);
}

long target_normalize_all(struct span path, char *out, size_t cap, unsigned *flags)
{
    return normalize(path, out, cap, flags, true);
}

static long normalize(struct span path, char *out, size_t cap, unsigned *flags, bool hidden_ok)
{
    struct seg_stack st = {out, cap, 0, 0, 0, 0};
    enum seg_kind kind = SEG_EMPTY;
    *flags = 0;
    if (path.n == 0 || path.p[0] != '/')
        return -400;
    size_t i = 1;
    for (;;) {
        size_t e = i + mem_find(path.p + i, path.n - i, '/');
        long r = stack_segment(&st, path.p + i, e - i, &kind);
        if (r < 0)
            return r;
        if (e == path.n)
            break;
        i = e + 1;
    }
    if (st.over > 0)
        return -414;
    if (st.hidden > 0 && !hidden_ok)
        return -403;
    if (kind != SEG_NAME)
        *flags = TARGET_TRAILING_SLASH;
    if (st.hidden > 0)
        *flags |= TARGET_HIDDEN;
    return (long)st.len;
}

void target_dir_location(struct buf *b, const struct target *t, struct span normalized)
{
    if (t->path.n >= 2 && t->path.p[1] != '/' &&
        mem_find(t->path.p, t->path.n, '\\') == t->path.n) {
        buf_put_span(b, t->path);
    } else {
        buf_put_char(b, '/');
        escape_uri_path(b, normalized, false);
    }
    buf_put_char(b, '/');
    if (t->has_query) {
        buf_put_char(b, '?');
        buf_put_span(b, t->query);
    }
}

/* SPDX-License-Identifier: MIT */
/*
 * htpasswd.c - see htpasswd.h. The accepted syntaxes, from libxcrypt's
 * crypt(5): "$6$[rounds=N$]SALT$HASH" (SALT up to 16 characters, HASH 86),
 * "$2b$NN$" and 53 characters (NN the cost, 04..31), "$y$PARAMS$SALT$HASH"
 * (HASH 43); every character of SALT and HASH from crypt's alphabet
 * ./0-9A-Za-z.
 */
#include "core/htpasswd.h"

#include "core/bytes.h"

static bool crypt_char(char c)
{
    return c == '.' || c == '/' || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
           (c >= 'a' && c <= 'z');
}

static bool all_crypt(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!crypt_char(p[i]))
            return false;
    return true;
}

static bool starts(struct span s, const char *prefix)
{
    size_t n = cstr_len(prefix);
    return s.n >= n && mem_eq(s.p, prefix, n);
}

/* The '$'-separated fields after the prefix's '$': their count, the spans
 * into f[max]. */
static unsigned fields(struct span s, struct span *f, unsigned max)
{
    unsigned k = 0;
    size_t at = 1; /* past the leading '$' */
    while (at <= s.n && k < max) {
        size_t end = at + mem_find(s.p + at, s.n - at, '$');
        f[k++] = span_make(s.p + at, end - at);
        at = end + 1;
    }
    return at <= s.n ? max + 1 : k; /* more fields than max: too many */
}

static bool sha512_ok(struct span h)
{
    struct span f[5];
    unsigned k = fields(h, f, 4); /* "6", [rounds=N], salt, hash */
    unsigned salt = k == 4 ? 2 : 1;
    if (k == 4) {
        uint64_t r;
        if (!starts(f[1], "rounds=") || !u64_parse(span_make(f[1].p + 7, f[1].n - 7), &r) ||
            r < 1000 || r > 999999999)
            return false;
    } else if (k != 3) {
        return false;
    }
    return f[salt].n >= 1 && f[salt].n <= 16 && all_crypt(f[salt].p, f[salt].n) &&
           f[salt + 1].n == 86 && all_crypt(f[salt + 1].p, 86);
}

static bool bcrypt_ok(struct span h)
{
    /* "$2b$" NN "$" 22 salt + 31 hash characters */
    if (h.n != 60 || !ascii_is_digit(h.p[4]) || !ascii_is_digit(h.p[5]) || h.p[6] != '$')
        return false;
    unsigned cost = (unsigned)(h.p[4] - '0') * 10 + (unsigned)(h.p[5] - '0');
    return cost >= 4 && cost <= 31 && all_crypt(h.p + 7, 53);
}

static bool yescrypt_ok(struct span h)
{
    struct span f[5];
    if (fields(h, f, 4) != 4) /* "y", params, salt, hash */
        return false;
    return f[1].n >= 1 && all_crypt(f[1].p, f[1].n) && f[2].n >= 1 && all_crypt(f[2].p, f[2].n) &&
           f[3].n == 43 && all_crypt(f[3].p, 43);
}

#define USE " (make one with mkpasswd -m yescrypt, or htpasswd -B for bcrypt)"

/* Why hash is not one pith accepts, or NULL when it is. */
static const char *refuse(struct span h)
{
    if (starts(h, "$y$"))
        return yescrypt_ok(h) ? NULL : "a yescrypt hash ($y$) that is not well formed";
    if (starts(h, "$2b$") || starts(h, "$2y$"))
        return bcrypt_ok(h) ? NULL : "a bcrypt hash ($2b$) that is not well formed";
    if (starts(h, "$6$"))
        return sha512_ok(h) ? NULL : "a SHA-512 crypt hash ($6$) that is not well formed";
    if (starts(h, "$apr1$"))
        return "Apache's MD5 hash ($apr1$) is refused: too weak" USE;
    if (starts(h, "$1$"))
        return "an MD5 crypt hash ($1$) is refused: too weak" USE;
    if (starts(h, "{SHA}"))
        return "Apache's SHA-1 hash ({SHA}) is refused: unsalted and too weak" USE;
    if (starts(h, "$5$"))
        return "a SHA-256 crypt hash ($5$) is refused: use yescrypt, bcrypt or SHA-512" USE;
    if (starts(h, "$2a$") || starts(h, "$2x$"))
        return "an old bcrypt hash ($2a$, $2x$) is refused: make a $2b$ one" USE;
    if (h.n && h.p[0] == '$')
        return "a hash of a kind pith does not take (only yescrypt, bcrypt, SHA-512 crypt)" USE;
    if (h.n == 13 && all_crypt(h.p, 13))
        return "a DES crypt hash (or a 13-character password) is refused: too weak" USE;
    return "not a hash: a password in plain text is refused" USE;
}

int htpasswd_line(struct span line, struct htpasswd_entry *e, const char **why)
{
    e->user = e->hash = (struct span){0};
    if (line.n && line.p[line.n - 1] == '\r')
        line.n--;
    struct span t = span_trim_ows(line);
    if (t.n == 0 || t.p[0] == '#')
        return 0;
    for (size_t i = 0; i < line.n; i++) {
        unsigned char c = (unsigned char)line.p[i];
        if (c < 0x20 || c == 0x7f) {
            *why = "a control character";
            return -1;
        }
    }
    size_t colon = mem_find(line.p, line.n, ':');
    if (colon == line.n) {
        *why = "not USER:HASH (no ':')";
        return -1;
    }
    if (colon == 0 || colon > HTPASSWD_USER_MAX) {
        *why = colon ? "a user name longer than 255 bytes" : "an empty user name";
        return -1;
    }
    e->user = span_make(line.p, colon);
    e->hash = span_make(line.p + colon + 1, line.n - colon - 1);
    /* Apache's files may carry a third field (a comment): not a hash. */
    if (e->hash.n > HTPASSWD_HASH_MAX || mem_find(e->hash.p, e->hash.n, ':') < e->hash.n ||
        mem_find(e->hash.p, e->hash.n, ' ') < e->hash.n) {
        *why = "the hash holds ':' or a space (one USER:HASH per line, nothing after)";
        return -1;
    }
    *why = refuse(e->hash);
    return *why ? -1 : 1;
}

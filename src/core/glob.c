/* SPDX-License-Identifier: MIT */
/*
 * glob.c - the pattern is compiled into at most GLOB_MAX_TOKENS tokens on the
 * stack ({n} expands into n copies), then matched with the classic greedy
 * star backtracking, which needs only the position of the last '*'.
 */
#include "glob.h"

#include "bytes.h"

enum token_kind { T_LIT, T_ANY, T_SET, T_STAR };

struct token {
    enum token_kind kind;
    char lit;
    struct span set; /* between the brackets, without a leading '!' */
    bool negate;
};

/* Parses "[...]" at p[*i] (on the '['). */
static bool parse_set(struct span p, size_t *i, struct token *t)
{
    size_t j = *i + 1;
    t->kind = T_SET;
    t->negate = j < p.n && p.p[j] == '!';
    if (t->negate)
        j++;
    size_t start = j;
    if (j < p.n && p.p[j] == ']') /* a leading ']' is a member */
        j++;
    while (j < p.n && p.p[j] != ']')
        j++;
    if (j >= p.n || j == start)
        return false;
    t->set = span_make(p.p + start, j - start);
    *i = j + 1;
    return true;
}

/* Parses "{n}" at p[*i] if present; *count = 1 otherwise. */
static bool parse_repeat(struct span p, size_t *i, unsigned *count)
{
    *count = 1;
    if (*i >= p.n || p.p[*i] != '{')
        return true;
    size_t j = *i + 1;
    unsigned n = 0;
    while (j < p.n && ascii_is_digit(p.p[j]) && n <= 32)
        n = n * 10 + (unsigned)(p.p[j++] - '0');
    if (j >= p.n || p.p[j] != '}' || n < 1 || n > 32)
        return false;
    *count = n;
    *i = j + 1;
    return true;
}

static int compile(struct span p, struct token *out)
{
    int n = 0;
    for (size_t i = 0; i < p.n;) {
        struct token t = {.kind = T_LIT};
        char c = p.p[i];
        if (c == '*') {
            t.kind = T_STAR;
            i++;
        } else if (c == '?') {
            t.kind = T_ANY;
            i++;
        } else if (c == '[') {
            if (!parse_set(p, &i, &t))
                return -1;
        } else if (c == '\\' && i + 1 < p.n) {
            t.lit = p.p[i + 1];
            i += 2;
        } else {
            t.lit = c;
            i++;
        }
        unsigned count = 1;
        if (t.kind != T_STAR && !parse_repeat(p, &i, &count))
            return -1;
        if ((unsigned)n + count > GLOB_MAX_TOKENS)
            return -1;
        for (unsigned k = 0; k < count; k++)
            out[n++] = t;
    }
    return n;
}

static bool set_has(const struct token *t, unsigned char c)
{
    bool in = false;
    const char *s = t->set.p;
    for (size_t i = 0; i < t->set.n; i++) {
        unsigned char lo = (unsigned char)s[i], hi = lo;
        if (i + 2 < t->set.n && s[i + 1] == '-') {
            hi = (unsigned char)s[i + 2];
            i += 2;
        }
        if (c >= lo && c <= hi)
            in = true;
    }
    return in != t->negate;
}

static bool token_matches(const struct token *t, char c)
{
    switch (t->kind) {
    case T_LIT: return t->lit == c;
    case T_ANY: return true;
    case T_SET: return set_has(t, (unsigned char)c);
    default: return false;
    }
}

bool glob_valid(struct span pattern)
{
    struct token tokens[GLOB_MAX_TOKENS];
    return pattern.n > 0 && compile(pattern, tokens) >= 0;
}

bool glob_match(struct span pattern, struct span name)
{
    struct token tk[GLOB_MAX_TOKENS];
    int n = pattern.n ? compile(pattern, tk) : -1;
    if (n < 0)
        return false; /* invalid patterns, the empty one included, match nothing */
    size_t ti = 0, ni = 0, star_t = (size_t)-1, star_n = 0;
    while (ni < name.n) {
        if (ti < (size_t)n && tk[ti].kind == T_STAR) {
            star_t = ti++;
            star_n = ni;
        } else if (ti < (size_t)n && token_matches(&tk[ti], name.p[ni])) {
            ti++;
            ni++;
        } else if (star_t != (size_t)-1) {
            ti = star_t + 1;
            ni = ++star_n;
        } else {
            return false;
        }
    }
    while (ti < (size_t)n && tk[ti].kind == T_STAR)
        ti++;
    return ti == (size_t)n;
}

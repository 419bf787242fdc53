/* SPDX-License-Identifier: MIT */
/*
 * conf.c - see conf.h. One pass over each line: its end, its control bytes,
 * then the shape (blank, comment, brace, option, site block).
 */
#include "core/conf.h"

#include "core/bytes.h"

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

static struct span trim(struct span s)
{
    while (s.n && is_blank(s.p[0]))
        s.p++, s.n--;
    while (s.n && is_blank(s.p[s.n - 1]))
        s.n--;
    return s;
}

/* The line without a comment at its end: a '#' after a blank, outside the
 * quotes of a value that starts with one. */
static struct span strip_comment(struct span s)
{
    char quote = 0;
    for (size_t i = 0; i < s.n; i++) {
        char c = s.p[i];
        if (quote) {
            if (c == quote)
                quote = 0;
        } else if ((c == '"' || c == '\'') && (i == 0 || is_blank(s.p[i - 1]))) {
            quote = c;
        } else if (c == '#' && (i == 0 || is_blank(s.p[i - 1]))) {
            return span_make(s.p, i);
        }
    }
    return s;
}

/* One pair of quotes around the whole value goes; a quote left open is an
 * error. */
static const char *unquote(struct span *v)
{
    if (v->n == 0 || (v->p[0] != '"' && v->p[0] != '\''))
        return NULL;
    char q = v->p[0];
    size_t close = 1 + mem_find(v->p + 1, v->n - 1, q);
    if (close == v->n)
        return "a quote is not closed at the end of the value";
    if (close != v->n - 1)
        return "text after a quoted value (a value is one quoted string, or none)";
    v->p++;
    v->n -= 2;
    return NULL;
}

static bool error(struct conf_item *out, const char *why)
{
    out->kind = CONF_ERROR;
    out->error = why;
    return true;
}

/* "site NAMES {": the block's names, else an error. */
static bool site_begin(struct span rest, struct conf_item *out)
{
    if (rest.n == 0 || rest.p[rest.n - 1] != '{')
        return error(out, "a site block is 'site NAMES {' on one line");
    out->value = trim(span_make(rest.p, rest.n - 1));
    if (out->value.n == 0)
        return error(out, "a site block needs its names: 'site example.com {'");
    if (mem_find(out->value.p, out->value.n, '{') < out->value.n ||
        mem_find(out->value.p, out->value.n, '}') < out->value.n)
        return error(out, "a brace inside a site's names");
    out->kind = CONF_SITE_BEGIN;
    return true;
}

static bool parse_line(struct span line, struct conf_item *out)
{
    for (size_t i = 0; i < line.n; i++) {
        unsigned char c = (unsigned char)line.p[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return error(out, "a control character (only tab is allowed)");
    }
    struct span s = trim(strip_comment(trim(line)));
    if (s.n == 0)
        return false;
    if (s.n == 1 && s.p[0] == '}') {
        out->kind = CONF_SITE_END;
        return true;
    }
    size_t n = 0;
    while (n < s.n && is_name_char(s.p[n]))
        n++;
    if (n == 0 || (n < s.n && !is_blank(s.p[n])))
        return error(out, "expected an option name (lowercase letters, digits and '-') and "
                          "its value");
    out->name = span_make(s.p, n);
    struct span rest = trim(span_make(s.p + n, s.n - n));
    if (n == 4 && mem_eq(s.p, "site", 4) && rest.n && rest.p[rest.n - 1] == '{')
        return site_begin(rest, out);
    const char *why = unquote(&rest);
    if (why)
        return error(out, why);
    out->kind = CONF_OPTION;
    out->value = rest;
    return true;
}

bool conf_next(struct conf_reader *r, struct conf_item *out)
{
    while (r->pos < r->text.n) {
        const char *p = r->text.p + r->pos;
        size_t left = r->text.n - r->pos, end = mem_find(p, left, '\n');
        r->pos += end < left ? end + 1 : left;
        r->line++;
        struct span line = span_make(p, end);
        if (line.n && line.p[line.n - 1] == '\r')
            line.n--;
        *out = (struct conf_item){.line = r->line};
        if (line.n > CONF_LINE_MAX) {
            error(out, "a line longer than 4096 bytes");
            return true;
        }
        if (parse_line(line, out))
            return true;
    }
    return false;
}

/* SPDX-License-Identifier: MIT */
/*
 * config_file.c - `pith --config FILE` (issue 22): what the items of the
 * file (cli/conffile.c reads it and its includes) mean. Outside site blocks
 * a line is a command-line option without its dashes, applied as the
 * command line's are, unless the command line gave that option too (the
 * command line wins: its values replace the file's, a list as a whole). In
 * a `site NAMES { ... }` block only a site's own settings may stand; they
 * are kept and applied once the top level is complete, on a copy of it
 * (config_file_site), so a block's position in the file does not matter.
 * Every bad line is reported (one line of the reason each, "FILE:LINE:
 * why") and the reading goes on, so --check names them all.
 */
#include "cli/conffile.h"
#include "cli/config_internal.h"

#include "core/bytes.h"

#define PROBLEMS_MAX   32  /* lines of the reason; more are counted, not shown */
#define PATH_MAX_WHERE 320 /* "FILE:LINE" of an option, for its messages */

struct file_state {
    struct parser *ps;
    struct config_site *site; /* the open block, or NULL */
};

/* "FILE:LINE: " (or "FILE: " for a whole file) at the start of a problem;
 * returns where the reason stood before, to roll back if no problem
 * follows. */
static size_t begin(struct parser *ps, const char *file, unsigned line)
{
    size_t at = ps->reason.len;
    buf_put_cstr(&ps->reason, file);
    if (line) {
        buf_put_char(&ps->reason, ':');
        buf_put_u64(&ps->reason, line);
    }
    buf_put_cstr(&ps->reason, ": ");
    return at;
}

/* The problem begun at `at` is complete (bad) or was none (ok). */
static void end(struct parser *ps, size_t at, bool bad)
{
    if (!bad) {
        ps->reason.len = at;
        ps->reason.full = false;
        return;
    }
    if (++ps->problems > PROBLEMS_MAX) {
        ps->reason.len = at; /* counted, not shown: the reason has its limit */
        return;
    }
    buf_put_char(&ps->reason, '\n');
}

static void problem(struct parser *ps, const char *file, unsigned line, const char *a,
                    const char *b, const char *c)
{
    size_t at = begin(ps, file, line);
    config_fail(ps, a, b, c);
    end(ps, at, true);
}

/* A flag's value in a file: nothing or on/yes/true turns it on, off/no/false
 * off. -1: neither. */
static int flag_value(const char *v)
{
    static const char *const on[] = {"", "on", "yes", "true"}, *const off[] = {"off", "no",
                                                                               "false"};
    struct span s = span_make(v, cstr_len(v));
    for (size_t i = 0; i < ARRAY_LEN(on); i++)
        if (span_eq_nocase_cstr(s, on[i]))
            return 1;
    for (size_t i = 0; i < ARRAY_LEN(off); i++)
        if (span_eq_nocase_cstr(s, off[i]))
            return 0;
    return -1;
}

/* Applies o = v to ps->cur as the file says it; false after the reason
 * says why. */
static bool apply(struct parser *ps, const struct option *o, const char *v)
{
    if (!o->takes_value) {
        int on = flag_value(v);
        if (on < 0) {
            config_fail(ps, "--", o->name, ": '");
            config_fail(ps, v, "' is not on or off (a flag is on when named alone)", "");
            return false;
        }
        if (on)
            return config_apply(ps, o, NULL) == CONFIG_RUN;
        config_apply_off(ps, o);
        return true;
    }
    if (!v[0]) {
        config_fail(ps, "--", o->name, " needs a value");
        return false;
    }
    return config_apply(ps, o, v) == CONFIG_RUN;
}

/* apply(), with ps->where saying the option's file and line (an auth rule
 * keeps it for its messages). */
static bool apply_at(struct parser *ps, const struct option *o, const char *v, const char *file,
                     unsigned line)
{
    char where[PATH_MAX_WHERE];
    struct buf b = buf_make(where, sizeof where - 1);
    buf_put_cstr(&b, file);
    buf_put_char(&b, ':');
    buf_put_u64(&b, line);
    where[b.full ? 0 : b.len] = '\0';
    ps->where = where;
    bool ok = apply(ps, o, v);
    ps->where = NULL;
    return ok;
}

/* A block opens: its names, file and line; its options come next. */
static void site_begin(struct file_state *st, const char *file, const struct conf_item *it)
{
    struct parser *ps = st->ps;
    struct config *c = ps->cfg;
    if (st->site) {
        problem(ps, file, it->line, "a site block inside another (close it with '}' first)", "",
                "");
        return;
    }
    if (c->nsites == CONFIG_SITES_MAX) {
        problem(ps, file, it->line, "more than 64 sites", "", "");
        st->site = &c->sites[CONFIG_SITES_MAX - 1]; /* its lines are still read */
        return;
    }
    struct config_site *s = &c->sites[c->nsites++];
    s->names = it->value.p;
    s->file = file;
    s->line = it->line;
    s->opt_first = c->nopts;
    s->nopts = 0;
    st->site = s;
}

/* A site block's option, kept for config_file_site(). */
static bool keep(struct file_state *st, const struct option *o, const char *v, const char *file,
                 unsigned line)
{
    struct config *c = st->ps->cfg;
    c->opts[c->nopts++] = (struct config_opt){o, v, file, line};
    st->site->nopts++;
    return true;
}

static void option(struct file_state *st, const char *file, const struct conf_item *it)
{
    struct parser *ps = st->ps;
    struct config *c = ps->cfg;
    const char *v = it->value.p;
    size_t at = begin(ps, file, it->line);
    if (config_refused(ps, it->name)) {
        end(ps, at, true);
        return;
    }
    const struct option *o = config_find(it->name);
    bool bad = true;
    if (!o && it->name.p[0] == '-')
        config_fail(ps, "'", it->name.p, "': options are written without their dashes here");
    else if (!o)
        config_fail(ps, "unknown option '", it->name.p,
                    "' (the names are pith --help's, without --)");
    else if (o->scope == SCOPE_CMDLINE)
        config_fail(ps, "'", o->name, "' belongs on the command line, not in a configuration file");
    else if (st->site && o->scope == SCOPE_SERVER)
        config_fail(ps, "'", o->name,
                    "' is a setting of the whole server, not of a site (put it outside the site "
                    "blocks)");
    else if (!st->site && o->scope == SCOPE_BLOCK)
        config_fail(ps, "'", o->name, "' belongs inside a site block");
    else if (st->site && c->nopts == CONFIG_OPTS_MAX)
        config_fail(ps, "more than 2048 settings in site blocks", "", "");
    else if (st->site)
        bad = !keep(st, o, v, file, it->line);
    else if (ps->given[o->kind])
        bad = false; /* the command line's value stands */
    else
        bad = !apply_at(ps, o, v, file, it->line);
    end(ps, at, bad);
}

static void on_item(void *ctx, const char *file, const struct conf_item *it)
{
    struct file_state *st = ctx;
    struct parser *ps = st->ps;
    switch (it->kind) {
    case CONF_ERROR: {
        size_t at = begin(ps, file, it->line);
        buf_put_cstr(&ps->reason, it->error); /* bounded where it was made */
        end(ps, at, true);
        break;
    }
    case CONF_SITE_BEGIN: site_begin(st, file, it); break;
    case CONF_SITE_END:
        if (!st->site)
            problem(ps, file, it->line, "'}' without a site block to close", "", "");
        st->site = NULL;
        break;
    case CONF_OPTION: option(st, file, it); break;
    }
}

void config_file_read(struct parser *ps)
{
    struct file_state st = {ps, NULL};
    ps->cur = &ps->cfg->top;
    conffile_read(ps->cfg->config_path, on_item, &st);
    if (st.site)
        problem(ps, st.site->file, st.site->line, "the site block is not closed (a '}' is missing)",
                "", "");
}

void config_file_site(struct parser *ps, struct config_site *site)
{
    bool replaced[K_COUNT] = {false};
    ps->cur = site;
    for (unsigned i = 0; i < site->nopts; i++) {
        const struct config_opt *co = &ps->cfg->opts[site->opt_first + i];
        const struct option *o = co->option;
        /* A list a site names replaces the top level's, as nginx's
         * add_header does. */
        if (!replaced[o->kind]) {
            replaced[o->kind] = true;
            if (o->kind == K_IMMUTABLE)
                site->nimmutable = 0;
            else if (o->kind == K_HEADER)
                site->site.nheaders = 0, site->site.header_bytes = 0;
            else if (o->kind == K_ERROR_PAGE)
                site->site.npages = 0;
            else if (o->kind == K_AUTH)
                site->nauth = 0;
        }
        size_t at = begin(ps, co->file, co->line);
        end(ps, at, !apply_at(ps, o, co->value, co->file, co->line));
    }
    ps->cur = &ps->cfg->top;
    if (!site->own_root)
        problem(ps, site->file, site->line, "site '", site->names,
                "' has no root (a block needs 'root DIR')");
}

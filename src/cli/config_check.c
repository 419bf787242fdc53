/* SPDX-License-Identifier: MIT */
/*
 * config_check.c - what config_parse() checks once every option is known:
 * the sites (each made from the top level and its own options, the default
 * one first, their names in one table that no two share), then the options
 * that only make sense together (load balancers, lockdown, HTTPS).
 */
#include "cli/config_internal.h"

#include "acme/acme.h"
#include "base/server.h"
#include "core/bytes.h"
#include "core/core.h"
#include "tls/tls.h"

/* ---- sites (issue 22) ---------------------------------------------------------- */

/* Where a site was given, at the front of a message about it. */
static void site_where(struct parser *ps, const struct config_site *site)
{
    buf_put_cstr(&ps->reason, site->where);
    buf_put_cstr(&ps->reason, ": ");
}

/* Each name of site's comma list (site->names, ending at its NUL or at
 * `len`) into the table for serve index i. */
static enum config_verdict add_names(struct parser *ps, struct config_site *site, size_t len,
                                     unsigned i)
{
    struct vhost_table *t = &ps->cfg->hosts;
    const char *p = site->names;
    size_t at = 0;
    while (at <= len) {
        size_t end = at + mem_find(p + at, len - at, ',');
        struct span name = span_trim_ows(span_make(p + at, end - at));
        vhost_error e = name.n ? vhost_add(t, name, i) : "an empty name in the list";
        if (e) {
            site_where(ps, site);
            if (name.n) {
                buf_put_char(&ps->reason, '\'');
                buf_put(&ps->reason, name.p, name.n > CONFIG_PIECE_MAX ? CONFIG_PIECE_MAX : name.n);
                buf_put_cstr(&ps->reason, "' ");
            }
            buf_put_cstr(&ps->reason, e);
            return CONFIG_USAGE;
        }
        if (!site->label[0]) {
            struct span lower = vhost_name_text(t, t->n - 1);
            mem_copy(site->label, lower.p, lower.n);
            site->label[lower.n] = '\0';
        }
        at = end + 1;
    }
    return CONFIG_RUN;
}

/* Each site as the top level plus what it names itself: --site its names
 * and root, a block of the file its options (config_file_site). */
static void make_sites(struct parser *ps)
{
    static char wheres[CONFIG_SITES_MAX][320];
    struct config *c = ps->cfg;
    for (unsigned i = 0; i < c->nsites; i++) {
        struct config_site *site = &c->sites[i], own = *site;
        *site = c->top;
        site->spec = own.spec;
        site->names = own.names;
        site->file = own.file;
        site->line = own.line;
        site->opt_first = own.opt_first;
        site->nopts = own.nopts;
        site->label[0] = '\0';
        site->own_root = false;
        site->is_default = false;
        site->where = wheres[i];
        struct buf w = buf_make(wheres[i], sizeof wheres[i] - 1);
        if (site->file) {
            buf_put_cstr(&w, site->file);
            buf_put_char(&w, ':');
            buf_put_u64(&w, site->line);
            buf_put_cstr(&w, ": site ");
            buf_put(&w, site->names, cstr_len(site->names) > 128 ? 128 : cstr_len(site->names));
            config_file_site(ps, site);
        } else {
            buf_put_cstr(&w, "--site '");
            buf_put(&w, own.spec, cstr_len(own.spec) > 200 ? 200 : cstr_len(own.spec));
            buf_put_char(&w, '\'');
            site->names = own.spec; /* up to its '=' */
            site->root = own.spec + mem_find(own.spec, cstr_len(own.spec), '=') + 1;
        }
        wheres[i][w.full ? 0 : w.len] = '\0';
    }
}

/* The default site goes first: ROOT when it was given (or there are no
 * sites), else the one marked "default", else the first. */
static enum config_verdict order_sites(struct parser *ps)
{
    struct config *c = ps->cfg;
    const struct config_site *marked = NULL;
    for (unsigned i = 0; i < c->nsites; i++) {
        const struct config_site *site = &c->sites[i];
        if (!site->is_default)
            continue;
        if (marked || c->have_root) {
            site_where(ps, site);
            buf_put_cstr(&ps->reason, "'default', but ");
            buf_put_cstr(&ps->reason, marked ? marked->where : "ROOT"); /* bounded */
            return config_fail(ps, " is the default site already", "", "");
        }
        marked = site;
    }
    c->nserve = 0;
    if (c->nsites == 0 || c->have_root)
        c->serve[c->nserve++] = &c->top;
    if (c->nserve + c->nsites > SETTINGS_SITES_MAX)
        return config_fail(ps, "more than 64 sites (ROOT, when given, is one)", "", "");
    if (marked)
        c->serve[c->nserve++] = marked;
    for (unsigned i = 0; i < c->nsites; i++)
        if (&c->sites[i] != marked)
            c->serve[c->nserve++] = &c->sites[i];
    return CONFIG_RUN;
}

/* A problem line is complete; the next one starts after it. */
static void next_problem(struct parser *ps)
{
    buf_put_char(&ps->reason, '\n');
    ps->problems++;
}

/* The sites, in the order they are served, and the table of their names;
 * two sites may not share a name. Every site's problems are reported. */
enum config_verdict config_check_sites(struct parser *ps)
{
    struct config *c = ps->cfg;
    c->hosts.n = 0; /* its arrays are written as names are added */
    c->hosts.used = 0;
    make_sites(ps);
    if (order_sites(ps) != CONFIG_RUN)
        return CONFIG_USAGE;
    for (unsigned i = 0; i < c->nserve; i++) {
        struct config_site *site = (struct config_site *)c->serve[i];
        if (site == &c->top)
            continue;
        site_error e = site_check(&site->site);
        if (e) {
            site_where(ps, site);
            config_fail(ps, e, "", "");
            next_problem(ps);
        }
        size_t len =
            site->file ? cstr_len(site->names) : mem_find(site->spec, cstr_len(site->spec), '=');
        if (add_names(ps, site, len, i) != CONFIG_RUN)
            next_problem(ps);
    }
    unsigned dup, other;
    if (!ps->problems && !vhost_sort(&c->hosts, &dup, &other)) {
        struct span name = vhost_name_text(&c->hosts, dup);
        unsigned a = c->hosts.name[dup].site;
        site_where(ps, c->serve[a > other ? a : other]);
        buf_put_char(&ps->reason, '\'');
        buf_put_span(&ps->reason, name);
        buf_put_cstr(&ps->reason, "' is a name of another site already (");
        buf_put_cstr(&ps->reason, c->serve[a > other ? other : a]->where); /* bounded */
        buf_put_char(&ps->reason, ')');
        next_problem(ps);
    }
    return ps->problems ? CONFIG_USAGE : CONFIG_RUN;
}

/* ---- options that only make sense together ------------------------------------ */

/* The load balancers' options (issue 13) need a trusted proxy. */
static enum config_verdict check_opsnet(struct parser *ps)
{
    const struct config *c = ps->cfg;
    if (c->proxy_protocol && !c->ntrusted)
        return config_fail(ps, "--proxy-protocol needs at least one --trusted-proxy", "", "");
    if (c->real_ip_header && !c->ntrusted)
        return config_fail(ps, "--real-ip-header needs at least one --trusted-proxy", "", "");
    return CONFIG_RUN;
}

/* The site features and the lockdown (issue 14). */
static enum config_verdict check_site_flags(struct parser *ps)
{
    const struct config *c = ps->cfg;
    site_error e = site_check(&c->top.site);
    if (e)
        return config_fail(ps, e, "", "");
    if (c->group && !c->user)
        return config_fail(ps, "--group needs --user", "", "");
    if (c->chroot_dir && !c->user)
        return config_fail(ps, "--chroot needs --user (root can leave a chroot)", "", "");
    return CONFIG_RUN;
}

unsigned config_tls_pairs(const struct config *c)
{
    unsigned n = c->ntls_cert;
    for (unsigned i = 0; i < c->nsites; i++)
        n += c->sites[i].ntls_cert;
    return n;
}

unsigned config_acme_names(const struct config *c, void (*fn)(void *, unsigned, struct span),
                           void *arg)
{
    unsigned n = 0;
    for (unsigned k = 0; ACME_BUILT && c->acme_email && k < c->nserve; k++) {
        if (c->serve[k] == &c->top || c->serve[k]->ntls_cert)
            continue; /* no names, or a certificate of its own */
        for (unsigned i = 0; i < c->hosts.n; i++)
            if (c->hosts.name[i].site == k) {
                if (fn)
                    fn(arg, k, vhost_name_text(&c->hosts, i));
                n++;
            }
    }
    return n;
}

/* A name ACME can validate by HTTP or TLS: a DNS name, neither a wildcard
 * (DNS-01 only, RFC 8555 §8.4) nor an address literal. */
static void acme_name_check(void *arg, unsigned site, struct span name)
{
    struct parser *ps = arg;
    (void)site;
    bool v4 = true;
    for (size_t i = 0; i < name.n; i++)
        v4 = v4 && (ascii_is_digit(name.p[i]) || name.p[i] == '.');
    const char *why =
        name.n >= 2 && name.p[0] == '*' ? "' is a wildcard: wildcards need DNS validation, "
                                          "which pith does not do (give the site a tls-cert)"
        : v4 || name.p[0] == '['        ? "' is an address: pith orders certificates for "
                                          "DNS names only (give the site a tls-cert)"
        : mem_find(name.p, name.n, '.') == name.n
            ? "' has one label: a public CA will not certify it (give the site a tls-cert)"
            : NULL;
    if (!why || ps->problems)
        return;
    buf_put_cstr(&ps->reason, "--acme: '");
    buf_put(&ps->reason, name.p, name.n > CONFIG_PIECE_MAX ? CONFIG_PIECE_MAX : name.n);
    buf_put_cstr(&ps->reason, why);
    ps->problems++;
}

/* --acme (issue 35): names to obtain certificates for, each one a CA can
 * validate; the other --acme options only with it. */
static enum config_verdict check_acme(struct parser *ps)
{
    const struct config *c = ps->cfg;
    if (!ACME_BUILT || !c->acme_email) { /* pith-tiny refuses the options by name */
        if (c->acme_ca || c->acme_ca_root || c->acme_dir)
            return config_fail(ps, "--acme-ca, --acme-ca-root and --acme-dir need --acme EMAIL", "",
                               "");
        return CONFIG_RUN;
    }
    unsigned n = config_acme_names(c, acme_name_check, ps);
    if (ps->problems)
        return CONFIG_USAGE;
    if (n == 0)
        return config_fail(ps, "--acme needs site names to obtain certificates for ",
                           "(--site NAMES=ROOT, or site blocks) ",
                           "without a tls-cert of their own");
    return CONFIG_RUN;
}

static enum config_verdict check_tls(struct parser *ps)
{
    const struct config *c = ps->cfg;
    enum config_verdict v = check_acme(ps);
    if (v != CONFIG_RUN)
        return v;
    unsigned acme = config_acme_names(c, NULL, NULL);
    if (c->ntls_cert != c->ntls_key)
        return config_fail(
            ps, "--tls-cert and --tls-key must come in pairs (one key per certificate)", "", "");
    for (unsigned i = 0; i < c->nsites; i++)
        if (c->sites[i].ntls_cert != c->sites[i].ntls_key) {
            site_where(ps, &c->sites[i]);
            return config_fail(ps,
                               "tls-cert and tls-key must come in pairs (one key per "
                               "certificate)",
                               "", "");
        }
    if (config_tls_pairs(c) + acme > SETTINGS_TLS_PAIRS_MAX)
        return config_fail(ps, "more than 64 certificate/key pairs in all (--acme names count)", "",
                           "");
    if (config_tls_pairs(c) + acme == 0 && (c->tls_only || c->redirect_http || c->hsts))
        return config_fail(ps,
                           c->tls_only        ? "--tls-only"
                           : c->redirect_http ? "--redirect-http"
                                              : "--hsts",
                           " needs --tls-cert and --tls-key, or --acme", "");
    if (config_tls_pairs(c) + acme == 0 && c->http3 == 1)
        return config_fail(ps,
                           "--http3 on needs --tls-cert and --tls-key, or --acme: HTTP/3 "
                           "is always encrypted",
                           "", "");
    if (c->tls_only && c->redirect_http)
        return config_fail(ps, "--redirect-http needs the plain listener that --tls-only drops", "",
                           "");
    if (config_tls_pairs(c) + acme && !c->tls_only && c->port == c->tls_port && c->port != 0)
        return config_fail(ps, "--port and --tls-port must differ", "", "");
    return CONFIG_RUN;
}

enum config_verdict config_check_together(struct parser *ps)
{
    enum config_verdict v = check_opsnet(ps);
    if (v == CONFIG_RUN)
        v = check_site_flags(ps);
    if (v == CONFIG_RUN && TLS_BUILT) /* pith-tiny: no TLS flag got this far */
        v = check_tls(ps);
    return v;
}

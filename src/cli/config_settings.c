/* SPDX-License-Identifier: MIT */
/*
 * config_settings.c - settings_from_config(): the one place where the
 * command line's view (struct config, complete and checked) becomes the
 * server's (struct settings): each site's settings in the order they are
 * served, the names that pick them, the basic-auth rules, and HTTPS's pairs.
 */
#include "cli/config.h"

#include "base/server.h"
#include "core/bytes.h"
#include "core/core.h"
#include "core/netaddr.h"
#include "core/target.h"
#include "http/filecache.h"
#include "http3/h3.h"
#include "tls/tls.h"

_Static_assert(CONFIG_IMMUTABLE_MAX == SETTINGS_GLOBS_MAX, "--immutable's bound is the server's");
_Static_assert(CONFIG_TLS_PAIRS_MAX <= SETTINGS_TLS_PAIRS_MAX, "the pairs' bound is the server's");
_Static_assert(CONFIG_WORKERS_MAX == SETTINGS_WORKERS_MAX, "--workers' bound is the server's");
_Static_assert(CONFIG_TRUSTED_MAX == SETTINGS_TRUSTED_MAX,
               "--trusted-proxy's bound is the server's");

static void opsnet_settings(const struct config *cfg, struct settings *out)
{
    out->proxy_protocol = cfg->proxy_protocol;
    for (unsigned i = 0; i < cfg->ntrusted; i++)
        net_cidr_parse(span_make(cfg->trusted[i], cstr_len(cfg->trusted[i])), &out->trusted[i]);
    out->ntrusted = cfg->ntrusted;
    if (cfg->real_ip_header)
        out->real_ip_header = span_make(cfg->real_ip_header, cstr_len(cfg->real_ip_header));
    out->log_json = cfg->log_format && cfg->log_format[0] == 'j';
    out->status = cfg->status;
}

/* --acme (issue 35): one pair per name, its file in the state directory
 * ("DIR/certs/NAME.pem", key and chain together so that they change in
 * one rename); the texts live in a static pool (a name is at most 253
 * bytes, the directory 200). */
struct acme_pairs {
    struct settings *out;
    unsigned site, n;
};

static void acme_pair(void *arg, unsigned site, struct span name)
{
    static char pool[SETTINGS_TLS_PAIRS_MAX][2 * 256 + CONFIG_ACME_DIR_MAX + 16];
    struct acme_pairs *ap = arg;
    struct settings *out = ap->out;
    if (site != ap->site || out->ntls >= SETTINGS_TLS_PAIRS_MAX)
        return;
    char *p = pool[out->ntls];
    struct buf b = buf_make(p, sizeof pool[0] - 1);
    buf_put(&b, name.p, name.n);
    buf_put_char(&b, '\0');
    size_t path = b.len;
    buf_put_cstr(&b, out->acme_dir);
    buf_put_cstr(&b, "/certs/");
    buf_put(&b, name.p, name.n);
    buf_put_cstr(&b, ".pem");
    p[b.len] = '\0';
    out->tls_acme[out->ntls] = p;
    out->tls_cert[out->ntls] = out->tls_key[out->ntls] = p + path;
    out->tls_origin[out->ntls] = NULL;
    out->ntls++;
    out->nacme++;
    ap->n++;
}

/* HTTPS (issue 10) */
static void tls_settings(const struct config *cfg, struct settings *out)
{
    /* The top level's pairs first (the first is the default), then each
     * site's own in the order sites are served; a site without its own uses
     * the top level's, or all when the top level has none (issue 22). */
    unsigned n = 0;
    for (unsigned i = 0; i < cfg->ntls_cert; i++, n++) {
        out->tls_cert[n] = cfg->tls_cert[i];
        out->tls_key[n] = cfg->tls_key[i];
    }
    for (unsigned k = 0; k < cfg->nserve; k++) {
        const struct config_site *site = cfg->serve[k];
        struct site_conf *sc = &out->sites[k];
        sc->tls_first = site->ntls_cert ? n : 0;
        for (unsigned i = 0; i < site->ntls_cert; i++, n++) {
            out->tls_cert[n] = site->tls_cert[i];
            out->tls_key[n] = site->tls_key[i];
            out->tls_origin[n] = site->where;
        }
        sc->ntls = site->ntls_cert;
        if (!site->ntls_cert && cfg->acme_email) {
            struct acme_pairs ap = {out, k, 0};
            out->ntls = n;
            config_acme_names(cfg, acme_pair, &ap);
            sc->tls_first = ap.n ? n : 0;
            sc->ntls = ap.n;
            n += ap.n;
        }
    }
    for (unsigned k = 0; k < cfg->nserve; k++)
        if (out->sites[k].ntls == 0)
            out->sites[k].ntls = cfg->ntls_cert ? cfg->ntls_cert : n;
    out->ntls = n;
    out->tls_port = cfg->tls_port;
    out->tls_only = cfg->tls_only;
    out->redirect_http = cfg->redirect_http;
    out->hsts = cfg->hsts;
    struct buf hb = buf_make(out->hsts_value, sizeof out->hsts_value - 1);
    buf_put_cstr(&hb, "max-age=");
    buf_put_u64(&hb, cfg->hsts);
    out->hsts_value[hb.len] = '\0';
    out->timeout_handshake = cfg->timeout_handshake;
    out->http2 = cfg->http2;
    out->h2_max_streams = cfg->h2_max_streams;
    /* HTTP/3 (issue 34): on by default wherever TLS is on and the build has it. */
    /* (h3_prepare() turns it off again without HTTPS.) */
    out->http3 = H3_BUILT && cfg->http3 != 0;
    out->h3_retry = cfg->h3_retry;
    out->h3_alt_svc_max_age = cfg->h3_alt_svc_max_age;
}

/* One site's settings from its options (the top level's where it named
 * none). */
static void site_settings(const struct config_site *c, bool named, struct site_conf *out)
{
    out->root = c->root;
    out->label = named ? c->label : "default";
    out->origin = named ? c->where : NULL;
    out->named = named;
    out->index = c->index;
    out->listing = c->listing;
    out->follow_symlinks = c->follow_symlinks;
    out->nimmutable = c->nimmutable;
    for (unsigned i = 0; i < c->nimmutable; i++)
        out->immutable[i] = c->immutable[i];
    /* precompressed variants (issue 11): "off", a mirror tree, or beside. */
    bool off = c->precompressed &&
               span_eq_cstr(span_make(c->precompressed, cstr_len(c->precompressed)), "off");
    out->precompressed = !off && FILECACHE_VARIANTS; /* pith-tiny: none, not even beside */
    out->precompressed_dir = off ? NULL : c->precompressed;
    out->site = c->site;
    out->max_conns_per_client = c->max_conns_per_client;
    struct buf b = buf_make(out->cache_control, sizeof out->cache_control - 1);
    if (c->max_age == 0) {
        buf_put_cstr(&b, "no-cache");
    } else {
        buf_put_cstr(&b, "max-age=");
        buf_put_u64(&b, c->max_age);
    }
    out->cache_control[b.len] = '\0';
}

/* Each site's basic-auth rules (its own, or the top level's it copied),
 * with their prefixes normalized as a request's path is. */
static void auth_settings(const struct config *cfg, struct settings *out)
{
    for (unsigned k = 0; k < cfg->nserve; k++) {
        const struct config_site *site = cfg->serve[k];
        out->sites[k].auth_first = out->nauth;
        for (unsigned i = 0; i < site->nauth && out->nauth < SETTINGS_AUTH_MAX; i++) {
            const struct config_auth *a = &site->auth[i];
            struct auth_rule *r = &out->auth[out->nauth++];
            unsigned flags;
            long n = target_normalize(span_make(a->prefix, cstr_len(a->prefix)), r->path,
                                      sizeof r->path - 1, &flags);
            r->path_len = n > 0 ? (size_t)n : 0;
            r->path[r->path_len] = '\0';
            r->prefix = a->prefix;
            r->file = a->file;
            r->realm = a->realm;
            r->origin = a->where;
        }
        out->sites[k].nauth = out->nauth - out->sites[k].auth_first;
    }
}

void settings_from_config(const struct config *cfg, struct settings *out)
{
    /* The large tables (sites, names, auth rules) are written where used:
     * out is the server's static settings, zero already (server.h). */
    mem_zero(out, offsetof(struct settings, hosts));
    out->workers = cfg->workers;
    out->max_conns = cfg->max_conns;
    out->cache_size_mib = cfg->cache_size_mib;
    out->cache_max_file = cfg->cache_max_file;
    out->cache_entries = cfg->cache_entries;
    out->timeout_header = cfg->timeout_header;
    out->timeout_keepalive = cfg->timeout_keepalive;
    out->timeout_send = cfg->timeout_send;
    out->grace = cfg->grace;
    out->log = cfg->log;
    out->pidfile = cfg->pidfile;
    out->user = cfg->user;
    out->quiet = cfg->quiet;
    out->check = cfg->check;
    out->config_path = cfg->config_path;
    out->sandbox = !cfg->no_sandbox;
    out->group = cfg->group;
    out->chroot_dir = cfg->chroot_dir;
    opsnet_settings(cfg, out);
    out->nsites = cfg->nserve;
    for (unsigned i = 0; i < cfg->nserve; i++)
        site_settings(cfg->serve[i], cfg->serve[i] != &cfg->top, &out->sites[i]);
    out->hosts.n = cfg->hosts.n; /* the used part only: see above */
    out->hosts.used = cfg->hosts.used;
    mem_copy(out->hosts.name, cfg->hosts.name, cfg->hosts.n * sizeof cfg->hosts.name[0]);
    mem_copy(out->hosts.text, cfg->hosts.text, cfg->hosts.used);
    auth_settings(cfg, out);
    out->max_conns_per_client = cfg->top.max_conns_per_client;
    for (unsigned i = 0; i < out->nsites; i++)
        out->clients_counted = out->clients_counted || out->sites[i].max_conns_per_client;
    out->clients_counted = out->clients_counted || out->max_conns_per_client;
    if (TLS_BUILT && cfg->acme_email) { /* before the pairs: their paths are in it */
        out->acme_email = cfg->acme_email;
        out->acme_ca = cfg->acme_ca ? cfg->acme_ca : CONFIG_ACME_CA_DEFAULT;
        out->acme_ca_root = cfg->acme_ca_root;
        out->acme_dir = cfg->acme_dir ? cfg->acme_dir : CONFIG_ACME_DIR_DEFAULT;
    }
    if (TLS_BUILT) /* pith-tiny: HTTPS left out, its settings stay zero */
        tls_settings(cfg, out);
}

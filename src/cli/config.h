/* SPDX-License-Identifier: MIT */
/*
 * config.h - the command line (docs/DESIGN.md §3) turned into one struct.
 * config_parse() validates every value and never exits itself: it returns a
 * verdict and a one-line reason, so main decides the exit code (0 for
 * --help/--version, 2 for usage errors).
 */
#ifndef PITH_CONFIG_H
#define PITH_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "core/site.h"
#include "core/vhost.h"

#define CONFIG_WORKERS_MAX    64
#define CONFIG_IMMUTABLE_MAX  8
#define CONFIG_TRUSTED_MAX    32
#define CONFIG_TLS_PAIRS_MAX  8 /* the top level's */
#define CONFIG_SITE_PAIRS_MAX 4 /* a site block's own */
#define CONFIG_AUTH_MAX       8 /* basic-auth rules of one site (or the top level) */
#define CONFIG_SITES_MAX      64

enum config_io {
    CONFIG_IO_AUTO, /* io_uring when the kernel allows it, else epoll */
    CONFIG_IO_EPOLL,
    CONFIG_IO_URING,
};

/* What a site may set (issue 22). The top level's values are every site's
 * defaults; a site given by --site NAMES=ROOT sets its names and root only. */
struct config_site {
    const char *root;               /* default "." (the top level) */
    const char *names;              /* a comma list ("a.test,*.a.test"); NULL at the top level */
    const char *spec;               /* --site's value as given, for messages */
    char label[VHOST_NAME_MAX + 1]; /* its first name, lowercased (check_sites) */
    const char *index;              /* default "index.html" */
    bool listing;
    bool follow_symlinks;
    unsigned max_age;                            /* seconds; 0 -> "no-cache" */
    const char *immutable[CONFIG_IMMUTABLE_MAX]; /* globs: a year's max-age, immutable */
    unsigned nimmutable;
    /* precompressed variants (issue 11) */
    const char *precompressed;     /* NULL: beside each file; "off"; else the mirror tree */
    unsigned max_conns_per_client; /* 0: no limit (issue 22) */
    /* basic auth (issue 22): PREFIX FILE [REALM], checked when given */
    struct config_auth {
        const char *prefix, *file, *realm, *where;
    } auth[CONFIG_AUTH_MAX];
    unsigned nauth;
    /* site features (issue 22's file: a block's own options, applied once the
     * top level is complete) */
    struct site site;
    const char *file; /* a site block's file and line; NULL for --site */
    unsigned line;
    unsigned opt_first, nopts; /* its options in config.opts[] */
    bool is_default;           /* "default" in its block */
    bool own_root;             /* a root of its own was given */
    const char *where;         /* "--site 'SPEC'" or "FILE:LINE: site NAME", for messages */
    /* HTTPS: a block's own certificate/key pairs (else the top level's) */
    const char *tls_cert[CONFIG_SITE_PAIRS_MAX], *tls_key[CONFIG_SITE_PAIRS_MAX];
    unsigned ntls_cert, ntls_key;
};

/* An option of a site block, kept until the top level is complete. */
struct config_opt {
    const void *option; /* config.c's option table entry */
    const char *value;
    const char *file;
    unsigned line;
};

#define CONFIG_OPTS_MAX 2048

struct config {
    const char *addr; /* NULL: dual-stack any */
    unsigned port;    /* default 8080; 0 = any free port */
    unsigned workers; /* 1..64; default: CPUs */
    unsigned max_conns;
    unsigned cache_size_mib; /* small-file memory per worker */
    unsigned cache_max_file; /* bytes: larger files go by sendfile */
    unsigned cache_entries;  /* open-file cache entries per worker */
    unsigned timeout_header, timeout_keepalive, timeout_send, grace;
    const char *log; /* NULL: off; "-": stdout */
    const char *pidfile;
    const char *user;
    enum config_io io;
    bool daemon;
    bool quiet;
    /* Load balancers, status and log format (issue 13). */
    bool proxy_protocol;
    const char *trusted[CONFIG_TRUSTED_MAX]; /* CIDR texts, checked when parsed */
    unsigned ntrusted;
    const char *real_ip_header;
    const char *log_format; /* "combined" (default) or "json" */
    const char *status;     /* ADDR:PORT */
    /* production: systemd, Unix sockets, upgrades (issue 13, opssys) */
    unsigned unix_mode;     /* --unix-mode: the socket file's permissions (0666) */
    const char *unix_owner; /* --unix-owner USER[:GROUP]; NULL: unchanged */
    bool check;             /* --check: validate, print the plan, exit 0 or 2 */
    /* lockdown (issue 14) */
    bool no_sandbox;
    const char *group;
    const char *chroot_dir;
    /* HTTPS (issue 10): pairs by position, the first is the default */
    const char *tls_cert[CONFIG_TLS_PAIRS_MAX];
    const char *tls_key[CONFIG_TLS_PAIRS_MAX];
    unsigned ntls_cert, ntls_key;
    unsigned tls_port; /* default 8443 */
    bool tls_only, redirect_http;
    unsigned hsts;               /* seconds; 0: no header */
    unsigned timeout_handshake;  /* default 10 */
    bool http2;                  /* --http2 on|off (issue 20): default on */
    unsigned h2_max_streams;     /* SETTINGS_MAX_CONCURRENT_STREAMS, default 100 */
    int http3;                   /* --http3 on|off (issue 34): -1 until given (on where built) */
    bool h3_retry;               /* --h3-retry on: a Retry before every new QUIC connection */
    unsigned h3_alt_svc_max_age; /* --h3-alt-svc-max-age S: Alt-Svc's ma, default 86400 */
    /* automatic HTTPS (issue 35; src/acme/): NULL email: off; NULL CA and
     * directory: the defaults below (settings_from_config) */
    const char *acme_email, *acme_ca, *acme_ca_root, *acme_dir;
    /* Sites (issue 22): the top level's settings, each site's, and the
     * order they are served in (serve[0] is the default site: the top
     * level when ROOT was given or there are no sites, else the first
     * site), with the names that pick them. */
    const char *config_path; /* --config FILE */
    struct config_site top;
    bool have_root; /* ROOT or --root was given */
    unsigned nopts, nsites, nserve;
    const struct config_site *serve[CONFIG_SITES_MAX + 1];
    /* The large tables last: config_parse() writes only what is used of
     * them (the struct is a static, zero already), so that a server with one
     * site does not touch a quarter of a MiB that every worker would then
     * hold as its own memory. */
    struct vhost_table hosts; /* names -> index in serve[] */
    struct config_opt opts[CONFIG_OPTS_MAX];
    struct config_site sites[CONFIG_SITES_MAX];
};

enum config_verdict {
    CONFIG_RUN,
    CONFIG_HELP,    /* print config_usage(), exit 0 */
    CONFIG_VERSION, /* print the version, exit 0 */
    CONFIG_USAGE,   /* print the reason, exit 2 */
};

#define CONFIG_MAX_CONNS_MAX 1000000

/* Fills cfg (zeroed once, as a static is: its large tables are only written
 * where used) from argv (defaults first) and the file --config names (whose
 * top-level options the command line's replace). On CONFIG_USAGE, reason
 * (cap bytes, NUL-terminated) says what was wrong, e.g. "--port: '8080junk'
 * is not a number from 0 to 65535": one line per problem, those of a file
 * as "FILE:LINE: why". cpus is the default worker count. */
enum config_verdict config_parse(int argc, char **argv, unsigned cpus, struct config *cfg,
                                 char *reason, size_t cap);

/* The --help text. */
const char *config_usage(void);

/* Certificate/key pairs of the top level and every site together. */
unsigned config_tls_pairs(const struct config *cfg);

/* --acme (issue 35): the names pith obtains certificates for, in the order
 * sites are served: every name of a site without a tls-cert of its own.
 * Calls fn(arg, site index in serve[], name) for each; returns the count. */
unsigned config_acme_names(const struct config *cfg, void (*fn)(void *, unsigned, struct span),
                           void *arg);

#define CONFIG_ACME_CA_DEFAULT  "https://acme-v02.api.letsencrypt.org/directory"
#define CONFIG_ACME_CA_STAGING  "https://acme-staging-v02.api.letsencrypt.org/directory"
#define CONFIG_ACME_DIR_DEFAULT "/var/lib/pith/acme"
#define CONFIG_ACME_DIR_MAX     200 /* bytes: room for certs/NAME.pem in PATH_MAX and more */

struct settings;
/* The server's settings from a parsed command line: the one place where
 * the CLI's view becomes the server's. */
void settings_from_config(const struct config *cfg, struct settings *out);

#endif

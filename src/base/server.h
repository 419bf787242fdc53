/* SPDX-License-Identifier: MIT */
/*
 * server.h - what every worker reads and nobody changes after start: the
 * settings (struct settings, filled from the command line by the CLI's one
 * function, settings_from_config()), and the resources the master prepares
 * before forking (struct server: the root, the listeners, the event loop).
 * Nothing here depends on how the settings were given, so the server rooms never
 * includes src/cli.
 */
#ifndef PITH_SERVER_H
#define PITH_SERVER_H

#include "core/core.h"
#include "core/netaddr.h"
#include "core/site.h"
#include "core/vhost.h"
#include "sys/resolve.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

struct stats_shared;
struct tls_server;
struct h3_server;
struct clients;
struct auth_server;
struct acme_shared;
struct loop_ops;

/* Where and how files are looked up: one per site, read-only after start. */
struct fc_root {
    int root_fd;
    int variant_dir_fd; /* where variants' paths start: the root, or the mirror tree */
    bool follow_symlinks;
    bool precompressed; /* look for variants */
    const char *cache_control;
    const char *const *immutable; /* globs */
    unsigned nimmutable;
};

#define SERVER_NAME            "pith/" PITH_VERSION
#define SETTINGS_WORKERS_MAX   64
#define SETTINGS_GLOBS_MAX     8
#define SETTINGS_TRUSTED_MAX   32
#define SETTINGS_TLS_PAIRS_MAX 64 /* all sites' together */
#define SETTINGS_SITES_MAX     64
#define SETTINGS_AUTH_MAX      128 /* basic-auth rules of all sites together */

/* Basic auth (issue 22, src/http/auth.c): a path prefix behind a password
 * file. */
struct auth_rule {
    const char *prefix;       /* as given ("/private/") */
    char path[SITE_PATH_MAX]; /* normalized like a request's, relative ("private"; "" for /) */
    size_t path_len;
    const char *file;   /* the password file (user:hash lines) */
    const char *realm;  /* visible ASCII but '"' and '\' */
    const char *origin; /* where the rule was given, for messages */
};

/* One site (issue 22): a root and everything that is decided per root. A
 * server without --site or site blocks has one, the default site, made of
 * the command line's ROOT and options; with sites, each starts from the top
 * level's options and names its own. */
struct site_conf {
    const char *root;   /* the directory, as given */
    const char *label;  /* its first name, or "default": /metrics, --check, the start line */
    const char *origin; /* where it was defined, for messages ("--site 'SPEC'",
                         * "FILE:LINE: site NAMES"); NULL for the command line's ROOT */
    bool named;         /* some name in settings.hosts picks it */
    const char *index;  /* the index file's name */
    bool listing;
    bool follow_symlinks;
    char cache_control[48];                    /* the default Cache-Control value */
    const char *immutable[SETTINGS_GLOBS_MAX]; /* globs: a year's max-age, immutable */
    unsigned nimmutable;
    /* precompressed variants (issue 11) */
    bool precompressed;            /* false: --precompressed off */
    const char *precompressed_dir; /* NULL: F.br etc. beside F; else a mirror tree */
    struct site site;              /* --fallback, --clean-urls, --header, --cors, --error-page */
    /* HTTPS: its certificate/key pairs in settings.tls_cert[] (its own, else
     * the top level's, else all of them): SNI picks among them (tls_ctx.c) */
    unsigned tls_first, ntls;
    unsigned max_conns_per_client; /* its requests get a 503 past it; 0: none (issue 22) */
    unsigned auth_first, nauth;    /* its basic-auth rules in settings.auth[] */
};

struct settings {
    unsigned workers;   /* worker processes, one listener each */
    unsigned max_conns; /* connections per worker */
    unsigned cache_size_mib, cache_max_file, cache_entries;
    unsigned timeout_header, timeout_keepalive, timeout_send, grace; /* seconds */
    const char *log;                                                 /* NULL: off; "-": stdout */
    const char *pidfile;                                             /* NULL: none */
    const char *user; /* workers drop to this user; NULL: stay */
    bool quiet;       /* no informational lines on stderr (errors still) */
    /* Load balancers, status and log format (issue 13: "beyond one machine",
     * "observability"; src/http/client.c, stats.c, status.c, log.c). */
    bool proxy_protocol;                           /* every connection starts with a PROXY header */
    struct net_cidr trusted[SETTINGS_TRUSTED_MAX]; /* --trusted-proxy */
    unsigned ntrusted;
    struct span real_ip_header; /* e.g. X-Forwarded-For; empty: off */
    bool log_json;              /* --log-format json (else combined) */
    /* --max-conns-per-client (issue 22; src/base/clients.c): connections
     * of one client across all workers past which a new one gets a 503; 0:
     * no limit. counting: some limit is set (the top level's or a site's). */
    unsigned max_conns_per_client;
    bool clients_counted;
    const char *status; /* --status ADDR:PORT; NULL: off */
    /* production: systemd, Unix sockets, upgrades (issue 13, opssys) */
    bool check;              /* --check: validate, print the plan, exit */
    const char *config_path; /* --config FILE: SIGHUP reads it again (issue 22); NULL */

    /* ---- site features and lockdown (issue 14; src/core/site.c, src/process/lockdown.c) ---- */
    bool sandbox;           /* Landlock + seccomp in every worker (--no-sandbox: false) */
    const char *group;      /* --group: with --user, the workers' group */
    const char *chroot_dir; /* --chroot: workers chroot here before dropping to --user */
    /* HTTPS (issue 10; src/tls/tls_ctx.c, tls.c) */
    const char *tls_cert[SETTINGS_TLS_PAIRS_MAX]; /* full-chain PEM; [0] is the default */
    const char *tls_key[SETTINGS_TLS_PAIRS_MAX];
    const char *tls_origin[SETTINGS_TLS_PAIRS_MAX]; /* a site's own pair: where (messages) */
    unsigned ntls;                                  /* certificate/key pairs; 0: no HTTPS */
    unsigned tls_port;                              /* default 8443; 0 = any free port */
    bool tls_only;                                  /* no plain HTTP listener */
    bool redirect_http;                             /* the plain port answers 308 to https:// */
    unsigned hsts;                                  /* Strict-Transport-Security max-age; 0: none */
    char hsts_value[32];                            /* "max-age=N" */
    unsigned timeout_handshake;                     /* seconds for a whole TLS handshake */
    /* automatic HTTPS (issue 35; src/acme/): a pair whose tls_acme[] names a
     * host is pith's own, kept in --acme-dir as one file holding the key and
     * the chain (tls_cert and tls_key name it both), missing until obtained */
    const char *tls_acme[SETTINGS_TLS_PAIRS_MAX]; /* NULL: a --tls-cert pair */
    unsigned nacme;
    const char *acme_email; /* NULL: off */
    const char *acme_ca, *acme_ca_root, *acme_dir;
    bool http2;              /* HTTP/2 (issue 20): ALPN h2, h2c by prior knowledge */
    unsigned h2_max_streams; /* SETTINGS_MAX_CONCURRENT_STREAMS [1..1000] */
    /* HTTP/3 (issue 34; src/http3/): UDP on the TLS port */
    bool http3;                  /* on: --http3 (default on where TLS is on and the build has it) */
    bool h3_retry;               /* --h3-retry on: every new connection validated by a Retry */
    unsigned h3_alt_svc_max_age; /* Alt-Svc's ma */
    char alt_svc[48]; /* the Alt-Svc value TCP responses carry, h3=":PORT"; ma=S (h3_prepare) */

    /* ---- sites (issue 22; src/http/sites.c) ---- */
    unsigned nsites; /* at least 1 */
    unsigned nauth;
    /* The large tables last: settings_from_config() writes only what is
     * used (a static settings is zero already), so one site does not cost
     * every worker a quarter of a MiB of pages. */
    struct vhost_table hosts;                   /* site names -> index in sites[] (sorted) */
    struct site_conf sites[SETTINGS_SITES_MAX]; /* [0] is the default site */
    struct auth_rule auth[SETTINGS_AUTH_MAX];   /* every site's, in site order */
};

/* A site at run time: its root (and mirror tree) opened once at start, and
 * what the file cache needs to look files up beneath it. */
struct vsite {
    const struct site_conf *conf;
    unsigned index; /* in settings.sites[] and the per-site counters */
    int root_fd;
    int precomp_fd; /* --precompressed DIR, opened at start; else -1 */
    char root_path[PATH_MAX];
    struct fc_root fc;
};

/* Read-only after start; shared (copied by fork) by every worker, except
 * the listeners, which the master replaces when a worker dies. */
struct server {
    struct settings set;
    enum resolve_method resolve;
    int listen_fds[SETTINGS_WORKERS_MAX]; /* one SO_REUSEPORT socket per worker */
    unsigned nlisten;
    struct sockaddr_storage listen_addr; /* to open a fresh listener */
    socklen_t listen_len;
    bool log_chown;              /* the master gives a new log file to log_uid/gid */
    unsigned log_uid, log_gid;   /* --user's ids */
    int master_pid;              /* a worker whose parent is not this one exits */
    char url[128];               /* "http://[::]:8080/" for the start line */
    const struct loop_ops *loop; /* epoll or io_uring, chosen at start */
    /* --status (issue 13, src/process/status.c): its listener (-1: off) and
     * the counters every worker adds to, shared with the master. */
    int status_fd;
    char status_url[128];
    struct stats_shared *stats;
    struct clients *clients;  /* the per-client counts (clients.h); NULL: none kept */
    struct auth_server *auth; /* the password files, read at start (auth.c); NULL: none */
    /* production: systemd, Unix sockets, upgrades (issue 13, opssys) */
    bool listen_shared;      /* listen_fds name a few sockets that workers share
                              * (inherited, or a Unix socket): never reopened */
    bool listen_inherited;   /* from socket activation or an upgrade */
    bool tls_listen_shared;  /* tls_listen_fds name inherited sockets workers share */
    char unix_path[108];     /* the Unix socket pith bound (removed at a stop); "" */
    char exe_path[PATH_MAX]; /* what SIGUSR2 executes (this binary's path at start) */
    char *const *argv;       /* ... with these arguments */
    int upgrade_from;        /* the master this one replaces (told when ready); 0 */
    bool reloading;          /* ... because of a SIGHUP with --config (issue 22) */
    bool listeners_own;      /* pith bound its listeners (else systemd did): a reload
                              * may close and open them as the file says */
    int ready_pipe[2];       /* each worker writes its pid once it serves; -1: none */
    /* lockdown (issue 14): what the kernel offers, probed at start */
    int landlock_abi; /* > 0: the ABI version; else -errno */
    int seccomp_err;  /* 0: filters with KILL_PROCESS work; else -errno */
    /* HTTPS (issue 10): one SO_REUSEPORT TLS listener per worker, beside the
     * plain ones (listen_fds[i] is -1 with --tls-only), and the TLS state the
     * master prepares before forking (certificates, keys, ticket keys). */
    int tls_listen_fds[SETTINGS_WORKERS_MAX];
    struct sockaddr_storage tls_listen_addr;
    socklen_t tls_listen_len;
    unsigned tls_port;        /* the bound TLS port (the kernel's pick for 0) */
    char tls_url[128];        /* "https://[::]:8443/" for the start line */
    struct tls_server *tls;   /* NULL without HTTPS */
    struct acme_shared *acme; /* --acme (issue 35): the challenges every worker answers */
    /* HTTP/3 (issue 34): one UDP socket per worker on the TLS port, all in
     * one SO_REUSEPORT group that the master holds open for the whole run
     * (so the steering program's indices never shift), and the secrets
     * every worker shares (src/http3/) */
    int udp_fds[SETTINGS_WORKERS_MAX];
    struct h3_server *h3;
    /* The eBPF map that steers the group by connection ID (h3_bpf.c), the
     * master's alone, passed on by an upgrade (upgrade.c); -1: none. Our
     * IDs start at h3_cid_base: 0, or 128 where the old master's were 0. */
    int h3_map_fd;
    uint8_t h3_cid_base;
    /* Last, as settings' tables are: only the sites in use are written. */
    struct vsite sites[SETTINGS_SITES_MAX]; /* one per settings.sites[]; [0] the default */
};

#endif

/* SPDX-License-Identifier: MIT */
/*
 * config_internal.h - what the command line's parser (config.c, with
 * config_apply.c and config_check.c) shares with the configuration file's
 * (config_file.c) and with nothing else: the options table's types, the
 * parser's state and its reason buffer, how an option is applied, and the
 * checks once all are known. config.h is the interface.
 */
#ifndef PITH_CONFIG_INTERNAL_H
#define PITH_CONFIG_INTERNAL_H

#include "cli/config.h"
#include "core/core.h"

enum kind {
    K_PORT,
    K_ADDR,
    K_WORKERS,
    K_MAX_CONNS,
    K_ROOT,
    K_INDEX,
    K_NO_LISTING,
    K_FOLLOW,
    K_MAX_AGE,
    K_IMMUTABLE,
    K_CACHE_SIZE,
    K_CACHE_MAX_FILE,
    K_CACHE_ENTRIES,
    K_T_HEADER,
    K_T_KEEPALIVE,
    K_T_SEND,
    K_GRACE,
    K_IO,
    K_LOG,
    K_PIDFILE,
    K_DAEMON,
    K_USER,
    K_QUIET,
    K_FALLBACK,
    K_CLEAN_URLS,
    K_HEADER,
    K_CORS,
    K_NO_SERVER_HEADER,
    K_ERROR_PAGE,
    K_NO_SANDBOX,
    K_GROUP,
    K_CHROOT,
    K_HELP,
    K_VERSION,
    K_PRECOMPRESSED,
    K_PROXY_PROTOCOL, /* issue 13: load balancers, status, log format */
    K_TRUSTED_PROXY,
    K_REAL_IP_HEADER,
    K_LOG_FORMAT,
    K_STATUS,
    K_UNIX_MODE, /* production (issue 13, opssys) */
    K_UNIX_OWNER,
    K_CHECK,
    K_TLS_CERT, /* HTTPS (issue 10) */
    K_TLS_KEY,
    K_TLS_PORT,
    K_TLS_ONLY,
    K_REDIRECT_HTTP,
    K_HSTS,
    K_T_HANDSHAKE,
    K_HTTP2, /* HTTP/2 (issue 20) */
    K_H2_MAX_STREAMS,
    K_HTTP3, /* HTTP/3 (issue 34) */
    K_H3_RETRY,
    K_H3_ALT_SVC_MAX_AGE,
    K_SITE, /* sites (issue 22) */
    K_CONFIG,
    K_DEFAULT,
    K_MAX_CONNS_PER_CLIENT,
    K_AUTH,
    K_ACME, /* automatic HTTPS (issue 35) */
    K_ACME_CA,
    K_ACME_CA_ROOT,
    K_ACME_DIR,
    K_COUNT,
};

/* Where an option may be given (issue 22's configuration file). */
enum scope {
    SCOPE_SERVER,  /* the command line, or the file outside site blocks */
    SCOPE_SITE,    /* that, or inside a site block: a site's own setting */
    SCOPE_CMDLINE, /* the command line only (--help, --check, --config) */
    SCOPE_BLOCK,   /* a site block only ("default") */
};

struct option {
    const char *name;
    char short_name;
    bool takes_value;
    enum kind kind;
    enum scope scope;
};

struct parser {
    struct config *cfg;
    struct config_site *cur; /* where a site option goes: the top level, or a site */
    struct buf reason;       /* problems, one line each ("\n" between them) */
    unsigned problems;
    bool given[K_COUNT]; /* on the command line: the file's top-level lines of it are skipped */
    const char *where;   /* the option being applied: "FILE:LINE" of a file's, else NULL */
};

/* A piece of the reason, cut to CONFIG_PIECE_MAX bytes (then "..."), a
 * length that keeps the whole line within the caller's buffer (a
 * 300-character value must not crowd out the rest). */
#define CONFIG_PIECE_MAX 96
void config_put_piece(struct parser *ps, const char *s);

/* Appends a, b and c (each cut to a bound) to the reason; CONFIG_USAGE. */
enum config_verdict config_fail(struct parser *ps, const char *a, const char *b, const char *c);

/* pith-tiny: true, after the reason says why, for an option of the full
 * build whose feature needs a library (always false in the full build). */
bool config_refused(struct parser *ps, struct span name);

/* The option named name (a long flag without its dashes), or NULL. */
const struct option *config_find(struct span name);
/* The option a short name ('p' for -p) names, or NULL. */
const struct option *config_find_short(char c);

/* Applies o with value v (NULL for a flag) to ps->cur (a site option) or
 * the configuration; on failure the reason says why. */
enum config_verdict config_apply(struct parser *ps, const struct option *o, const char *v);

/* A flag turned off, as "cors off" in a file does (a site undoing the top
 * level's). */
void config_apply_off(struct parser *ps, const struct option *o);

/* The sites (config_check.c), once the top level is complete: each made
 * from it and its own options, put in the order they are served (the
 * default first), and their names in cfg->hosts. Every site's problems are
 * lines of the reason. */
enum config_verdict config_check_sites(struct parser *ps);

/* The options that only make sense together (config_check.c): the first
 * conflict found is the reason. */
enum config_verdict config_check_together(struct parser *ps);

/* Reads the configuration file cfg->config_path (config_file.c): its
 * top-level options are applied (except those given on the command line),
 * its site blocks recorded in cfg->sites; each problem is a line of the
 * reason. */
void config_file_read(struct parser *ps);

/* Applies the options recorded for site (a block of the file) to it, a copy
 * of the top level: a list the site names replaces the top level's. */
void config_file_site(struct parser *ps, struct config_site *site);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * log.h - the error log (stderr, one timestamped line per event, naming the
 * failed call and the path) and the access log (combined format, buffered per
 * worker, flushed when full and at least once a second). A failed write never
 * stops serving: the bytes are dropped and the failure reported once.
 */
#ifndef PITH_LOG_H
#define PITH_LOG_H

#include "core/core.h"

#include <stdint.h>
#include <sys/socket.h>

/* ---- error log ------------------------------------------------------------------- */

/* "2026-11-30T02:13:18Z pith[123]: <msg>\n" to stderr, in one write. */
void log_error(const char *msg);
/* "... <what> failed: <strerror(-err)>" */
void log_error_errno(const char *what, const char *path, int err);
/* Three pieces joined, for messages with a value in the middle. */
void log_error3(const char *a, const char *b, const char *c);

/* ---- access log ------------------------------------------------------------------ */

#define LOG_BUF_SIZE (64 * 1024)
#define LOG_LINE_MAX 8192 /* longer fields are cut, never the line structure */

struct access_log {
    const char *path; /* NULL: off; "-": stdout */
    bool json;        /* one JSON object per line instead of combined */
    int fd;
    int dir_fd;       /* the file's directory (O_PATH), for reopening; -1: none */
    const char *base; /* the file's name in it */
    size_t len;
    int64_t first_pending_ms; /* when the oldest unflushed line was added */
    bool failed_reported;
    char buf[LOG_BUF_SIZE];
};

struct access_entry {
    const struct sockaddr_storage *peer;
    int64_t now; /* seconds since the epoch */
    struct span method, target, referer, user_agent;
    struct span encoding; /* the Content-Encoding sent (a precompressed variant); empty: identity */
    int minor;            /* HTTP/1.<minor>; 2: HTTP/2.0 */
    int status;
    uint64_t bytes;
    /* Sites (issue 22): with site names configured, every line says which
     * host was asked for, as nginx's $host: the authority's host
     * (lowercased, no port, no trailing dot), else the answering site's
     * name (NULL for the default site without one: "-"). */
    bool log_host;
    struct span authority;
    const char *site_name;
    /* --log-format json only: */
    int64_t duration_us;     /* head complete -> last byte handed to the kernel; -1: unknown */
    const char *tls_version; /* "TLSv1.3" (tls_conn_version); NULL: plain TCP */
};

/* Opens the log (no-op when path is NULL), writing combined lines, or JSON
 * ones with `json`. Returns 0 or -errno. */
int access_log_open(struct access_log *l, const char *path, bool json);

/* Appends one line (combined or JSON); flushes first when the buffer is full.
 *
 * JSON: {"time":"2026-11-30T02:28:14Z","remote_addr":"192.0.2.7","method":"GET",
 * "target":"/a","protocol":"HTTP/1.1","status":200,"bytes":160,"referer":null,
 * "user_agent":"curl/8","duration_us":412,"encoding":null,"tls":null}; fields of a
 * request without a request line are null. With log_host, combined lines
 * get the host quoted after the user agent (before an encoding), and JSON
 * a "host" field after "encoding"; "tls" is the TLS version, null on plain TCP. Strings are exact
 * JSON: '"', '\\' and controls escaped, valid UTF-8 kept, each invalid byte as \u00XX. */
void access_log_add(struct access_log *l, const struct access_entry *e, int64_t now_ms);

/* Writes what is buffered. */
void access_log_flush(struct access_log *l);

/* Flushes when the oldest line is a second old: call once per loop. */
void access_log_tick(struct access_log *l, int64_t now_ms);

/* Flushes and reopens the file (SIGHUP/SIGUSR1, after logrotate). */
void access_log_reopen(struct access_log *l);

/* The peer's address as text ("192.0.2.1", "2001:db8::1"); IPv4-mapped IPv6
 * addresses are written as IPv4. Returns the length. */
size_t log_format_addr(const struct sockaddr_storage *a, char *out, size_t cap);

#endif

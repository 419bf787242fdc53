/* SPDX-License-Identifier: MIT */
/*
 * server.h - the shapes shared by the server's parts: the settings every
 * worker reads (struct server, built once before forking), one worker's state
 * (struct worker: its epoll, connections, buffers, timers and log), and one
 * connection (struct conn). No globals: everything hangs off struct worker,
 * passed down explicitly.
 */
#ifndef PITH_SERVER_H
#define PITH_SERVER_H

#include "cli/config.h"
#include "core/date.h"
#include "core/http_fields.h"
#include "core/http_parse.h"
#include "core/listing.h"
#include "server/filecache.h"
#include "server/log.h"
#include "server/loop.h"
#include "server/pool.h"
#include "server/timer.h"
#include "sys/resolve.h"

#include <limits.h>
#include <sys/socket.h>
#include <sys/uio.h>

#define SERVER_MAX_LISTENERS CONFIG_WORKERS_MAX
#define CONN_IOV_MAX         4 /* pieces of one response sent by one sendmsg */
#define SERVER_NAME          "pith/" PITH_VERSION

/* Read-only after start; shared (copied by fork) by every worker. */
struct server {
    struct config cfg;
    int root_fd;
    char root_path[PATH_MAX];
    enum resolve_method resolve;
    int listen_fds[SERVER_MAX_LISTENERS]; /* one SO_REUSEPORT socket per worker */
    unsigned nlisten;
    char url[128]; /* "http://[::]:8080/" for the start line */
    char cache_control[48];
    const struct loop_ops *loop; /* epoll or io_uring, chosen at start */
};

enum conn_state {
    CONN_FREE,
    CONN_READ,    /* waiting for or receiving a request head */
    CONN_WRITE,   /* sending a response */
    CONN_LINGER,  /* response sent, write side shut: discarding input until EOF */
    CONN_CLOSING, /* closed, waiting for the backend to let go (io_uring) */
};

enum body_kind {
    BODY_NONE,
    BODY_FILE,      /* sendfile from body_fd [body_off, body_end) */
    BODY_LISTING,   /* generated from dir_fd chunk by chunk */
    BODY_MULTIPART, /* parts of body_fd: ranges in the slot's dir region */
};

/* Why a connection ended, for the error log and tests. */
enum close_reason {
    CLOSE_PEER,     /* the client closed */
    CLOSE_ERROR,    /* a socket error or reset */
    CLOSE_DONE,     /* the response said Connection: close */
    CLOSE_TIMEOUT,  /* header, keep-alive or send timeout */
    CLOSE_SHUTDOWN, /* the worker is draining */
};

struct listing_state {
    int pass;     /* 0: directories, 1: everything else, 2: done */
    bool first;   /* no entry written yet (JSON commas) */
    bool chunked; /* HTTP/1.1 chunked framing, else close-delimited */
    bool ended;   /* the last chunk has been queued */
    enum listing_format format;
    uint32_t dir_len, dir_off; /* getdents bytes in the slot's dir region */
};

struct conn {
    int fd;
    enum conn_state state;
    uint32_t events;   /* backend state: what epoll watches, or io_uring ops in flight */
    char *slot;        /* pool slot while a request is in flight, else NULL */
    uint32_t in_len;   /* bytes received into the slot's in region */
    uint32_t head_len; /* the current request head's length */
    /* What is queued to send, in order: pieces of the slot's out region
     * and, for a cache hit, the entry's constant head and body. */
    struct iovec iov[CONN_IOV_MAX];
    uint8_t niov, iov_at;
    uint32_t out_used;      /* bytes of the out region the queued pieces use */
    uint32_t head_left;     /* bytes of the response head not sent yet (for the log) */
    struct fc_entry *entry; /* the cache entry this response reads from */
    bool body_fd_owned;     /* close body_fd when done (not the cache's) */
    bool keep_alive;        /* keep the connection after this response */
    bool head_only;         /* HEAD: the head of the GET response, no body */
    enum body_kind body;
    int body_fd;
    uint64_t body_off, body_end;
    struct listing_state listing;
    uint8_t part, nparts;  /* multipart/byteranges progress */
    struct span part_type; /* the parts' Content-Type (a constant string) */
    uint64_t part_size;    /* the representation's length, for Content-Range */
    struct timer timer;
    int64_t head_deadline_set; /* ms when the head timer started (0: not) */
    /* for the access log, spans into the slot's in region */
    struct span log_method, log_target, log_referer, log_ua;
    int log_minor;
    int status;
    uint64_t body_sent;
    struct sockaddr_storage peer;
    struct conn *next_free;
};

struct worker {
    const struct server *srv;
    const struct loop_ops *loop;
    void *loop_state; /* the io_uring backend's ring and buffers */
    unsigned index;
    int listen_fd;
    int epfd;       /* the epoll backend's set */
    int sigfd;      /* TERM, INT, HUP, USR1 */
    bool listening; /* accepting new connections */
    bool draining;
    bool exit_now; /* a second TERM/INT */
    int64_t drain_deadline_ms;
    int64_t accept_retry_ms; /* after EMFILE: when to try accepting again */
    int64_t now_ms;
    int64_t now_sec;
    char date[DATE_IMF_LEN];
    struct timer_wheel wheel;
    struct conn *conns;
    struct conn *free_conns;
    uint32_t nconns, active;
    uint32_t next_unused; /* conns[next_unused..] never used yet */
    struct pool pool;
    struct access_log log;
    struct filecache cache;
    struct fc_entry scratch_entry; /* describes an uncached file while its head is built */
    struct http_request req;       /* scratch for the request being parsed */
    struct http_info info;
    char path[PATH_MAX + 1];   /* scratch: the normalized path */
    uint64_t boundary_seed[2]; /* random at start; a counter makes each boundary unique */
};

/* worker.c */
int worker_run(const struct server *srv, unsigned index); /* returns exit code */
void worker_conn_freed(struct worker *w);
/* For the backends: a connection accepted on fd (peer may be NULL: asked
 * for lazily), an accept that failed, a signal read from the signalfd. */
void worker_accepted(struct worker *w, int fd, const struct sockaddr_storage *peer);
void worker_accept_failed(struct worker *w, int err);
bool worker_can_accept(const struct worker *w);
void worker_signal(struct worker *w, int sig);
void worker_set_listening(struct worker *w, bool on);
/* Reads the clocks into now_ms/now_sec (and the Date) after a wait. */
void worker_update_clock(struct worker *w);

/* conn.c */
void conn_accepted(struct worker *w, struct conn *c);
void conn_on_timeout(struct worker *w, struct conn *c);
void conn_close(struct worker *w, struct conn *c, enum close_reason why);
void conn_drain(struct worker *w, struct conn *c);

/* handler.c: fill the response for a parsed head (or an error). */
void handler_request(struct worker *w, struct conn *c);
void handler_error(struct worker *w, struct conn *c, int status);
/* Starts a response head in the slot's out region: the status line, Date
 * and Server (the only per-request bytes of a head); records the status. */
struct buf handler_head_begin(struct worker *w, struct conn *c, int status);
/* A response with the small fixed HTML body and one optional extra field. */
void handler_small(struct worker *w, struct conn *c, int status, const char *extra_name,
                   struct span extra_value, bool cacheable);

/* file.c: the response for a regular file found by filecache_lookup(). */
void file_respond(struct worker *w, struct conn *c, struct fc_result *res, struct span name);
char *conn_in(const struct conn *c);
char *conn_out(const struct conn *c);
char *conn_dir(const struct conn *c);
/* Queues n bytes at p to send after what is queued (at most CONN_IOV_MAX
 * pieces per batch). Pieces in the out region must also advance out_used. */
void conn_push(struct conn *c, const void *p, size_t n);
/* Queues out[out_used .. out_used + n) and advances out_used. */
void conn_push_out(struct conn *c, size_t n);

/* handler.c: queue the next multipart part head (or the end) */
void handler_multipart_next(struct worker *w, struct conn *c);

/* dirlist.c: the next chunk of a streaming listing into the out region. */
/* Returns 0, or -errno when the directory cannot be read (close). When the
 * listing is complete it sets c->body = BODY_NONE. */
int dirlist_fill(struct worker *w, struct conn *c);
/* Queues the head of a listing of dirfd (owned from now on) after the
 * response head, or an error response. */
void dirlist_start(struct worker *w, struct conn *c, int dirfd, enum listing_format f);

/* master.c */
int master_run(struct server *srv);

#endif

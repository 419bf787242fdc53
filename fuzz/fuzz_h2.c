/* SPDX-License-Identifier: MIT */
/*
 * fuzz_h2.c - the HTTP/2 glue (src/http2/h2_conn.c, h2_worker.c,
 * h2_send.c, h2_stream.c) driven by a hostile client: the input is the
 * client's side of one h2c connection to a real worker, which answers
 * from a real document root.
 *
 * Why a fake event loop rather than a socketpair and the epoll backend:
 * the seam (loop.h) is the one place where the code below meets the
 * kernel, so a loop_ops of our own sees every send and receive without a
 * system call, can make the "socket" take a few bytes a send, give -EAGAIN
 * and call writable() later (epoll's way) or complete sends later through
 * sent() (io_uring's way), and can run the clock, so the deadlines fire
 * within one input. Everything above the seam is pith's own: settings
 * parsed from an argv by the CLI's parser, worker_accepted() and
 * transport_plain, conn.c's entry points, nghttp2's session with pith's
 * callbacks, h2_stream.c's request checks, the handler, the file cache and
 * the output buffer with its limits. The connection's descriptor is one end
 * of a socketpair, so shutdown and close are the real ones.
 *
 * The input: four control bytes, then the client's bytes (after the
 * 24-byte preface and an empty SETTINGS frame unless the flags say not):
 *   [0] flags: NO_PREFACE, NO_SETTINGS, COMPLETIONS (sends finish later
 *       through sent()), DRAIN (SIGTERM once the input is read), NO_EOF
 *       (the client falls silent instead of closing), STOP_READING (the
 *       client stops reading once it has sent everything)
 *   [1] read sizes: 0 all at once (up to the room offered), else 1..4*k
 *       bytes a read from a generator, so frames are cut at any offset
 *   [2] socket room a step: 0 plenty, else 64*k bytes
 *   [3] the clock: 8*k ms a step
 *
 * It traps (beside ASan, UBSan and pith's assertions) unless, after each
 * input: what pith wrote is a sequence of well-formed frames of types a
 * server sends (lengths within the peer's SETTINGS_MAX_FRAME_SIZE, ids and
 * lengths as each type needs, header blocks that HPACK-decode, each
 * response's :status first), ending on a frame boundary when nothing was
 * pending at the close; the connection ended (at the latest by its
 * deadlines); every connection and stream slot went back; and no
 * descriptor is left open beyond those the file cache accounts for.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/server.h"
#include "base/stats.h"
#include "base/worker.h"
#include "cli/config.h"
#include "event/conn.h"
#include "event/loop.h"
#include "event/transport.h"
#include "http/filecache.h"
#include "http1/h1_conn.h"
#include "http2/h2_conn.h"
#include "http2/h2_internal.h"
#include "sys/sys.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_h2: %s\n", what);
        __builtin_trap();
    }
}

/* ---- the fake event loop (loop.h) -------------------------------------------------------- */

enum {
    F_NO_PREFACE = 1,
    F_NO_SETTINGS = 2,
    F_COMPLETIONS = 4,
    F_DRAIN = 8,
    F_NO_EOF = 16,
    F_STOP_READING = 32,
};

#define OUT_CAP (2u << 20) /* what pith writes to one connection, kept for the checks */

static struct fake {
    struct conn *c;
    uint32_t interest; /* 1 read, 2 write, 0 none: epoll's one watch */
    uint64_t room;     /* what the "socket" takes now */
    bool completions;  /* io_uring's way: a send completes later, via sent() */
    bool in_flight;
    struct iovec flight;
    uint8_t *out;
    size_t out_len;
    bool out_truncated;
    bool h2_out; /* the first send was HTTP/2's: the output is frames */
    bool sent_any;
    bool pending_at_close; /* output waited for the socket when the connection closed */
} fk;

static size_t take_out(const struct iovec *iov, unsigned n)
{
    size_t took = 0;
    for (unsigned i = 0; i < n && fk.room; i++) {
        size_t k = iov[i].iov_len < fk.room ? iov[i].iov_len : (size_t)fk.room;
        if (fk.out_len + k <= OUT_CAP) {
            memcpy(fk.out + fk.out_len, iov[i].iov_base, k);
            fk.out_len += k;
        } else {
            fk.out_truncated = true;
        }
        fk.room -= k;
        took += k;
        if (k < iov[i].iov_len)
            break;
    }
    return took;
}

static int fk_init(struct worker *w)
{
    (void)w;
    return 0;
}
static void fk_wait(struct worker *w, int timeout_ms)
{
    (void)w, (void)timeout_ms;
}
static void fk_listen(struct worker *w, bool on)
{
    (void)w, (void)on;
}
static int fk_conn_start(struct worker *w, struct conn *c)
{
    (void)w;
    fk.c = c;
    fk.interest = 1;
    return 0;
}
static void fk_want_read(struct worker *w, struct conn *c)
{
    (void)w, (void)c;
    fk.interest = 1;
}
static void fk_want_write(struct worker *w, struct conn *c)
{
    (void)w, (void)c;
    fk.interest = 2;
}
static ssize_t fk_send(struct worker *w, struct conn *c, const struct iovec *iov, unsigned n,
                       bool more)
{
    (void)w, (void)more;
    require(!fk.in_flight, "a send while one is in flight");
    if (!fk.sent_any)
        fk.h2_out = c->h2 != NULL;
    fk.sent_any = true;
    if (c->h2) {
        /* HTTP/2 sends from the one output buffer: the part of the
         * connection's pool slot after its input, never past it. */
        const char *from = iov[0].iov_base, *buf = c->slot + POOL_IN_SIZE;
        require(n == 1 && c->slot && from >= buf && iov[0].iov_len > 0 &&
                    iov[0].iov_len <= (size_t)(buf + H2_OUT_CAP - from),
                "an HTTP/2 send outside the output buffer");
        require(c->h2->out_len <= H2_OUT_CAP, "the output buffer holds more than its bound");
    }
    if (fk.completions && c->h2) {
        fk.in_flight = true;
        fk.flight = iov[0];
        return -EAGAIN;
    }
    size_t took = take_out(iov, n);
    if (took == 0) {
        fk.interest = 2;
        return -EAGAIN;
    }
    return (ssize_t)took;
}
static ssize_t fk_sendfile(struct worker *w, struct conn *c, int fd, uint64_t *off, size_t n)
{
    (void)w;
    require(c->h2 == NULL, "sendfile on an HTTP/2 connection (its DATA is pread)");
    fk.sent_any = true;
    if (fk.room == 0) {
        fk.interest = 2;
        return -EAGAIN;
    }
    char buf[16384];
    size_t k = n < sizeof buf ? n : sizeof buf;
    if (k > fk.room)
        k = (size_t)fk.room;
    ssize_t got = pread(fd, buf, k, (off_t)*off);
    if (got <= 0)
        return got < 0 ? -errno : 0;
    struct iovec v = {buf, (size_t)got};
    size_t took = take_out(&v, 1);
    *off += took;
    return (ssize_t)took;
}
static void fk_close(struct worker *w, struct conn *c)
{
    (void)w;
    fk.pending_at_close =
        fk.in_flight || (c->h2 && (c->h2->sending || c->h2->out_sent < c->h2->out_len));
    sys_close(c->fd);
    fk.interest = 0;
}
static bool fk_busy(struct worker *w, const struct conn *c)
{
    (void)w, (void)c;
    return fk.in_flight; /* io_uring's: a send in flight still reads the buffer */
}
static bool fk_sending(struct worker *w, const struct conn *c)
{
    (void)w, (void)c;
    return fk.in_flight; /* as io_uring's: -EAGAIN then meant "sent() comes later" */
}
static bool fk_accept_busy(struct worker *w)
{
    (void)w;
    return false;
}

static const struct loop_ops loop_fake = {
    .name = "fake",
    .init = fk_init,
    .wait = fk_wait,
    .listen = fk_listen,
    .conn_start = fk_conn_start,
    .want_read = fk_want_read,
    .want_write = fk_want_write,
    .send = fk_send,
    .sendfile = fk_sendfile,
    .close = fk_close,
    .busy = fk_busy,
    .sending = fk_sending,
    .accept_busy = fk_accept_busy,
};

/* ---- the worker, set up once --------------------------------------------------------------- */

static bool dump; /* FUZZ_H2_DUMP=1: each frame and field on stderr, to read a run */
static struct config cfg;
static struct server srv;
static struct worker *w;

static void put_file(const char *dir, const char *name, size_t size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    require(fd >= 0, "cannot create the document root");
    char block[4096];
    for (size_t i = 0; i < sizeof block; i++)
        block[i] = (char)('a' + i % 26);
    for (size_t left = size; left;) {
        size_t k = left < sizeof block ? left : sizeof block;
        require(write(fd, block, k) == (ssize_t)k, "cannot write the document root");
        left -= k;
    }
    close(fd);
}

/* A small root: an index, a few sizes (in the cache's memory, held by
 * descriptor, past the output buffer and the flow-control window), a
 * subdirectory without an index (a listing), a dotfile. */
static void make_root(char *root)
{
    require(mkdtemp(root) != NULL, "mkdtemp");
    char sub[512];
    put_file(root, "index.html", 300);
    put_file(root, "a.txt", 1000);
    put_file(root, "mid.css", 20000);
    put_file(root, "big.bin", 150000);
    put_file(root, ".secret", 10);
    snprintf(sub, sizeof sub, "%s/sub", root);
    require(mkdir(sub, 0755) == 0, "mkdir");
    put_file(sub, "b.js", 5000);
    put_file(sub, "c.html", 100);
}

static void open_root(struct server *s)
{
    struct vsite *vs = &s->sites[0];
    vs->conf = &s->set.sites[0];
    vs->index = 0;
    vs->precomp_fd = -1;
    vs->root_fd = sys_open_dir(vs->conf->root);
    require(vs->root_fd >= 0, "open the root");
    require(sys_realpath(vs->conf->root, vs->root_path, sizeof vs->root_path) == 0, "realpath");
    vs->fc = (struct fc_root){
        .root_fd = vs->root_fd,
        .variant_dir_fd = vs->root_fd,
        .follow_symlinks = vs->conf->follow_symlinks,
        .precompressed = vs->conf->precompressed,
        .cache_control = vs->conf->cache_control,
        .immutable = vs->conf->immutable,
        .nimmutable = vs->conf->nimmutable,
    };
    s->resolve = resolve_probe(vs->root_fd);
}

/* What worker.c keeps of its own (struct worker_proc) and reports up
 * (struct loop_events), for the one connection a run has. */
static struct filecache fuzz_cache;
static struct fc_entry fuzz_scratch;
static uint32_t fuzz_active;

static void fuzz_closed(struct worker *wk, struct conn *c)
{
    (void)wk, (void)c; /* reap() frees the one connection after the run */
}

static const struct loop_events fuzz_events = {.closed = fuzz_closed};

/* worker.c's accepted(), for the one connection slot. */
static void accept_one(int fd)
{
    struct conn *c = &w->conns[0];
    c->fd = fd;
    c->tp = &transport_plain;
    c->peer.ss_family = AF_UNSPEC;
    require(w->loop->conn_start(w, c) == 0, "the fake loop takes the connection");
    fuzz_active++;
    stats_set(&w->stats->open_conns, fuzz_active);
    conn_accepted(w, c, &h1_proto);
}

/* worker.c's worker_init without the listener, signals and lockdown. */
static void make_worker(void)
{
    w = sys_map(sizeof *w);
    require(w != NULL, "map the worker");
    w->srv = &srv;
    w->set = &srv.set;
    w->events = &fuzz_events;
    w->cache = &fuzz_cache;
    w->scratch_entry = &fuzz_scratch;
    w->listen_fd = w->tls_listen_fd = w->epfd = w->sigfd = -1;
    w->nconns = srv.set.max_conns;
    w->conns = sys_map((size_t)w->nconns * sizeof *w->conns);
    require(w->conns && pool_init(&w->pool, w->nconns) == 0 && h2_worker_init(w) == 0 && w->h2,
            "reserve the worker");
    require(access_log_open(&w->log, NULL, false) == 0, "the access log");
    struct fc_settings fcs = {
        .resolve = srv.resolve,
        .entries = srv.set.cache_entries,
        .mem_bytes = (uint64_t)srv.set.cache_size_mib << 20,
        .max_file = srv.set.cache_max_file,
    };
    require(filecache_init(w->cache, &fcs) == 0, "the file cache");
    /* The worker lives in sys_map()'s memory, which LeakSanitizer does
     * not scan: what nghttp2 allocated for it is named here. */
    static void *keep[2];
    keep[0] = w->h2->callbacks, keep[1] = w->h2->option;
    w->loop = &loop_fake;
    w->now_ms = 1000000;
    w->now_sec = 1700000000;
    date_format_imf(w->now_sec, w->date);
    timer_wheel_init(&w->wheel, w->now_ms);
    w->stats = &srv.stats->w[0];
    stats_set(&w->stats->up, 1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    static char root[] = "/tmp/fuzz_h2.XXXXXX";
    make_root(root);
    /* Small limits, so that they are reached: two streams at a time, a
     * cache of a few entries (the big file by descriptor), short deadlines. */
    char *args[] = {"pith",
                    "--quiet",
                    "--no-sandbox",
                    "--workers",
                    "1",
                    "--max-conns",
                    "4",
                    "--h2-max-streams",
                    "2",
                    "--cache-entries",
                    "4",
                    "--cache-size",
                    "1",
                    "--cache-max-file",
                    "4096",
                    "--timeout-header",
                    "2",
                    "--timeout-keepalive",
                    "3",
                    "--timeout-send",
                    "2",
                    "--header",
                    "X-Fuzz: yes",
                    "--cors",
                    root};
    char reason[1024];
    require(config_parse((int)(sizeof args / sizeof args[0]), args, 1, &cfg, reason,
                         sizeof reason) == CONFIG_RUN,
            reason);
    settings_from_config(&cfg, &srv.set);
    require(srv.set.http2, "HTTP/2 is on by default");
    open_root(&srv);
    srv.loop = &loop_fake;
    srv.stats = stats_create(1700000000);
    require(srv.stats != NULL, "the counters");
    srv.status_fd = -1;
    srv.h3_map_fd = -1; /* no steering map handed over */
    srv.ready_pipe[0] = srv.ready_pipe[1] = -1;
    for (unsigned i = 0; i < SETTINGS_WORKERS_MAX; i++)
        srv.listen_fds[i] = srv.tls_listen_fds[i] = -1;
    make_worker();
    dump = getenv("FUZZ_H2_DUMP") != NULL;
    fk.out = malloc(OUT_CAP);
    require(fk.out != NULL, "malloc");
    return 0;
}

/* ---- one connection -------------------------------------------------------------------- */

static const uint8_t client_start[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
                                      "\x00\x00\x00\x04\x00\x00\x00\x00\x00";
#define PREFACE_LEN  24
#define SETTINGS_LEN 9

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    require(d != NULL, "/proc/self/fd");
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static void fire_timer(struct timer *t, void *ctx)
{
    struct conn *c = (struct conn *)((char *)t - offsetof(struct conn, timer));
    conn_on_timeout(ctx, c);
}

struct feed {
    const uint8_t *pre, *p;
    size_t pre_n, n;
    uint8_t sizes;
    uint32_t rng;
};

static size_t next_read(struct feed *f, size_t room)
{
    size_t want = room;
    if (f->sizes) {
        f->rng = f->rng * 1103515245u + 12345u;
        want = 1 + (f->rng >> 8) % (4u * f->sizes);
    }
    return want < room ? want : room;
}

/* The client's next bytes into p (the preface part first). */
static size_t pull(struct feed *f, char *p, size_t want)
{
    size_t got = 0;
    while (got < want && (f->pre_n || f->n)) {
        const uint8_t **src = f->pre_n ? &f->pre : &f->p;
        size_t *left = f->pre_n ? &f->pre_n : &f->n;
        size_t k = want - got < *left ? want - got : *left;
        memcpy(p + got, *src, k);
        *src += k, *left -= k, got += k;
    }
    return got;
}

static uint32_t max_frame_seen;

/* The largest frame the client allowed so far (its SETTINGS). */
static void note_peer_settings(struct conn *c)
{
    if (c->h2 && c->h2->session) {
        uint32_t m =
            nghttp2_session_get_remote_settings(c->h2->session, NGHTTP2_SETTINGS_MAX_FRAME_SIZE);
        if (m > max_frame_seen)
            max_frame_seen = m;
    }
}

/* One step of the loop: a send completes, the socket takes bytes, or bytes
 * (or the end) arrive. False when there was nothing to do. */
static bool step(struct conn *c, struct feed *f, bool eof_ok)
{
    if (fk.in_flight && fk.room) {
        size_t n = take_out(&fk.flight, 1);
        fk.in_flight = false;
        c->tp->sent(w, c, (ssize_t)n);
        return true;
    }
    if (fk.interest == 2 && fk.room && c->state != CONN_LINGER) {
        fk.interest = 0;
        c->tp->writable(w, c);
        return true;
    }
    if (fk.interest != 1)
        return false;
    bool more = f->pre_n || f->n;
    if (!more && !eof_ok)
        return false;
    if (c->state == CONN_LINGER) {
        char sink[4096];
        size_t n = pull(f, sink, sizeof sink);
        c->tp->received(w, c, (ssize_t)n);
        return true;
    }
    size_t room;
    char *p = c->tp->recv_room(w, c, &room);
    if (room == 0) {
        fk.interest = 0;
        return true;
    }
    size_t n = more ? pull(f, p, next_read(f, room)) : 0;
    c->tp->received(w, c, (ssize_t)n);
    return true;
}

static void tick(int64_t ms)
{
    w->now_ms += ms;
    w->now_sec = w->now_ms / 1000;
    timer_expire(&w->wheel, w->now_ms, fire_timer, w);
}

/* worker.c's reap_closed, for the one connection. */
static void reap(struct conn *c)
{
    if (c->tp && c->tp->release)
        c->tp->release(w, c);
    conn_free(w, c);
    fuzz_active--;
    stats_set(&w->stats->open_conns, fuzz_active);
}

/* ---- the checks on what pith wrote ---------------------------------------------------------- */

static uint32_t be24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static bool connection_field(const uint8_t *name, size_t n)
{
    static const char *const bad[] = {"connection", "keep-alive", "transfer-encoding",
                                      "proxy-connection", "upgrade"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (strlen(bad[i]) == n && memcmp(bad[i], name, n) == 0)
            return true;
    return false;
}

/* A response's header block: HPACK-decodes, :status first (three digits),
 * then lowercase names, none connection-specific. */
static void check_block(nghttp2_hd_inflater *in, const uint8_t *p, size_t n)
{
    bool first = true;
    for (;;) {
        nghttp2_nv nv;
        int fl = 0;
        ssize_t r = nghttp2_hd_inflate_hd2(in, &nv, &fl, p, n, 1);
        require(r >= 0, "a header block that does not decode");
        p += r, n -= (size_t)r;
        if (fl & NGHTTP2_HD_INFLATE_EMIT) {
            if (dump)
                fprintf(stderr, "    %.*s: %.*s\n", (int)nv.namelen, nv.name, (int)nv.valuelen,
                        nv.value);
            if (first)
                require(nv.namelen == 7 && memcmp(nv.name, ":status", 7) == 0 && nv.valuelen == 3 &&
                            nv.value[0] >= '1' && nv.value[0] <= '9',
                        ":status is not the first field");
            else
                require(nv.namelen && nv.name[0] != ':', "a pseudo-header after :status");
            for (size_t i = 0; i < nv.namelen; i++)
                require(!(nv.name[i] >= 'A' && nv.name[i] <= 'Z'), "an uppercase field name");
            require(!connection_field(nv.name, nv.namelen), "a connection-specific field");
            first = false;
        }
        if (fl & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(in);
            break;
        }
        if (r == 0 && n == 0)
            require(0, "a header block that ends in the middle of a field");
    }
    require(!first, "an empty header block");
}

static uint8_t block[1 << 17];

static void check_frames(bool pending_at_close)
{
    if (fk.out_truncated)
        return;
    const uint8_t *p = fk.out, *end = fk.out + fk.out_len;
    nghttp2_hd_inflater *in;
    require(nghttp2_hd_inflate_new(&in) == 0, "an inflater");
    size_t block_len = 0;
    int32_t block_stream = 0; /* a header block is open on it (CONTINUATION follows) */
    bool first = true;
    while (end - p >= 9) {
        uint32_t len = be24(p);
        uint8_t type = p[3], flags = p[4];
        int32_t id =
            (int32_t)((uint32_t)p[5] << 24 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 8 | p[8]) &
            0x7fffffff;
        if ((size_t)(end - p) < 9 + len)
            break;
        const uint8_t *pl = p + 9;
        if (dump)
            fprintf(stderr, "frame type %u flags 0x%x stream %d length %u\n", type, flags, id, len);
        require(len <= (max_frame_seen > 16384 ? max_frame_seen : 16384),
                "a frame longer than the peer allows");
        require(len + 9 <= H2_OUT_CAP, "a frame larger than the output buffer");
        require(!first || (type == NGHTTP2_SETTINGS && !(flags & NGHTTP2_FLAG_ACK)),
                "the server's preface is not SETTINGS");
        first = false;
        require(!block_stream || (type == NGHTTP2_CONTINUATION && id == block_stream),
                "a frame inside a header block");
        switch (type) {
        case NGHTTP2_DATA:
            require(id && (id & 1), "DATA on a stream the client cannot open");
            break;
        case NGHTTP2_HEADERS:
        case NGHTTP2_CONTINUATION: {
            require(id && (id & 1), "HEADERS on a stream the client cannot open");
            require(type == NGHTTP2_HEADERS || block_stream == id, "a CONTINUATION out of place");
            size_t skip = 0, pad = 0;
            if (type == NGHTTP2_HEADERS && (flags & NGHTTP2_FLAG_PADDED)) {
                require(len >= 1, "a PADDED HEADERS without its length");
                pad = pl[0], skip = 1;
            }
            if (type == NGHTTP2_HEADERS && (flags & NGHTTP2_FLAG_PRIORITY))
                skip += 5;
            require(skip + pad <= len, "HEADERS padding past the frame");
            require(block_len + len <= sizeof block, "a header block past 128 KiB");
            memcpy(block + block_len, pl + skip, len - skip - pad);
            block_len += len - skip - pad;
            block_stream = id;
            if (flags & NGHTTP2_FLAG_END_HEADERS) {
                check_block(in, block, block_len);
                block_len = 0;
                block_stream = 0;
            }
            break;
        }
        case NGHTTP2_RST_STREAM: require(id && len == 4, "a malformed RST_STREAM"); break;
        case NGHTTP2_SETTINGS:
            require(id == 0 && len % 6 == 0 && (!(flags & NGHTTP2_FLAG_ACK) || len == 0),
                    "a malformed SETTINGS");
            break;
        case NGHTTP2_PING: require(id == 0 && len == 8, "a malformed PING"); break;
        case NGHTTP2_GOAWAY: require(id == 0 && len >= 8, "a malformed GOAWAY"); break;
        case NGHTTP2_WINDOW_UPDATE: require(len == 4, "a malformed WINDOW_UPDATE"); break;
        default: require(0, "a frame type a server does not send"); break;
        }
        p += 9 + len;
    }
    if (!pending_at_close) {
        require(p == end, "the output ends inside a frame");
        require(!block_stream, "the output ends inside a header block");
    }
    nghttp2_hd_inflate_del(in);
}

/* ---- the input ------------------------------------------------------------------------ */

#define STEPS_MAX 20000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t ctl[4] = {0};
    for (size_t i = 0; i < 4 && i < size; i++)
        ctl[i] = data[i];
    size_t skip = size < 4 ? size : 4;
    struct feed f = {.p = data + skip, .n = size - skip, .sizes = ctl[1], .rng = ctl[1]};
    f.pre = client_start + ((ctl[0] & F_NO_PREFACE) ? PREFACE_LEN : 0);
    f.pre_n =
        ((ctl[0] & F_NO_PREFACE) ? 0 : PREFACE_LEN) + ((ctl[0] & F_NO_SETTINGS) ? 0 : SETTINGS_LEN);
    uint64_t room = ctl[2] ? 64u * ctl[2] : (uint64_t)1 << 40;
    int64_t ms = 8 * (int64_t)ctl[3];

    int fds_before = open_fds();
    uint32_t cache_fds_before = w->cache->fds;
    int sv[2];
    require(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
    fk = (struct fake){.out = fk.out, .completions = (ctl[0] & F_COMPLETIONS) != 0};
    max_frame_seen = 16384;
    w->draining = false;
    accept_one(sv[0]);
    struct conn *c = fk.c;
    require(c != NULL, "the connection started");

    /* The client sends everything, reading as it goes. */
    bool eof_ok = false, drained = false;
    for (unsigned steps = 0; c->state != CONN_CLOSING; steps++) {
        fk.room = room;
        if (!(f.pre_n || f.n)) {
            if ((ctl[0] & F_DRAIN) && !drained) {
                drained = w->draining = true;
                conn_drain(w, c);
                continue;
            }
            if (ctl[0] & F_STOP_READING)
                fk.room = 0;
            eof_ok = !(ctl[0] & F_NO_EOF);
        }
        note_peer_settings(c);
        bool did = step(c, &f, eof_ok);
        if (c->state == CONN_CLOSING)
            break;
        tick(ms);
        if (!did || steps >= STEPS_MAX) {
            /* Nothing moves, or not for long enough: the deadlines end it. */
            for (int i = 0; i < 64 && c->state != CONN_CLOSING; i++)
                tick(5000);
            require(c->state == CONN_CLOSING, "a connection outlived its deadlines");
        }
    }
    /* A send still in flight ends with the close (io_uring's cancellation):
     * only then may the connection's memory go. */
    fk.in_flight = false;
    reap(c);
    close(sv[1]);

    if (dump)
        fprintf(stderr, "%zu bytes out, %s, pending at close: %d\n", fk.out_len,
                fk.h2_out ? "HTTP/2" : "HTTP/1", fk.pending_at_close);
    if (fk.h2_out)
        check_frames(fk.pending_at_close);
    require(w->pool.nfree == w->pool.next_unused, "a connection slot was not given back");
    require(w->h2->streams.nfree == w->h2->streams.next_unused, "a stream slot was not given back");
    require(fuzz_active == 0, "the worker still counts the connection");
    require(!timer_armed(&c->timer), "a freed connection's timer is armed");
    require(open_fds() - fds_before == (int)w->cache->fds - (int)cache_fds_before,
            "a descriptor leaked");
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * donothing_h2.c - the HTTP/2 benchmark's floor: one epoll thread, nghttp2
 * (framing, HPACK, flow control) and OpenSSL (TLS 1.2/1.3 with ALPN h2, or
 * h2c by prior knowledge), the files of ROOT (and ROOT/page) read into
 * memory at start, and every request answered from there with the fields
 * pith sends: :status, date, server, content-type, content-length,
 * last-modified, etag, cache-control, accept-ranges. No path checks, no
 * conditionals, no ranges, no limits: what a server built on nghttp2 costs
 * at least, as donothing.c is for HTTP/1. Usage:
 *   donothing_h2 PORT ROOT [CERT KEY]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct file {
    char path[64];
    size_t path_len;
    char *body;
    size_t len;
    char length[24], etag[48], modified[32];
};

static struct file files[128];
static int nfiles;
static char date[32];
static time_t date_at;
static SSL_CTX *ctx;
static nghttp2_session_callbacks *callbacks;
static nghttp2_option *option;

struct conn {
    int fd;
    SSL *ssl;
    nghttp2_session *session;
    char out[64 * 1024];
    size_t out_len, out_sent;
    bool want_write;
};

struct stream {
    const struct file *f;
    size_t sent;
    char path[64];
    size_t path_len;
};

static void http_date(char *to, size_t cap, time_t t)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(to, cap, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

static void load(const char *root, const char *sub)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", root, sub);
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d)) && nfiles < 128;) {
        char p[1024];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || stat(p, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        struct file *f = &files[nfiles++];
        f->path_len = (size_t)snprintf(f->path, sizeof f->path, "%s/%s", sub, e->d_name);
        if (f->path[1] == '/')
            memmove(f->path, f->path + 1, f->path_len--);
        f->body = malloc((size_t)st.st_size + 1);
        int fd = open(p, O_RDONLY);
        f->len = (size_t)read(fd, f->body, (size_t)st.st_size);
        close(fd);
        snprintf(f->length, sizeof f->length, "%zu", f->len);
        snprintf(f->etag, sizeof f->etag, "\"%lx-%zx-%lx\"", (unsigned long)st.st_ino, f->len,
                 (unsigned long)st.st_mtime);
        http_date(f->modified, sizeof f->modified, st.st_mtime);
    }
    closedir(d);
}

#define NV(n, v, vl)                                                                               \
    {                                                                                              \
        (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, (vl),                                       \
            NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE                           \
    }

static ssize_t read_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *source, void *ud)
{
    (void)s, (void)id, (void)ud;
    struct stream *st = source->ptr;
    size_t n = st->f->len - st->sent;
    if (n > length)
        n = length;
    memcpy(buf, st->f->body + st->sent, n);
    st->sent += n;
    if (st->sent == st->f->len)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    (void)ud;
    if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST)
        nghttp2_session_set_stream_user_data(s, f->hd.stream_id, calloc(1, sizeof(struct stream)));
    return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
                     const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
    (void)flags, (void)ud;
    struct stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
    if (st && nlen == 5 && memcmp(name, ":path", 5) == 0 && vlen < sizeof st->path) {
        memcpy(st->path, value, vlen);
        st->path_len = vlen;
    }
    return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *ud)
{
    (void)ud;
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    struct stream *st = nghttp2_session_get_stream_user_data(s, f->hd.stream_id);
    if (!st)
        return 0;
    for (int i = 0; i < nfiles && !st->f; i++)
        if (files[i].path_len == st->path_len && !memcmp(files[i].path, st->path, st->path_len))
            st->f = &files[i];
    if (!st->f) {
        nghttp2_nv nv[] = {NV(":status", "404", 3), NV("content-length", "0", 1)};
        nghttp2_submit_response(s, f->hd.stream_id, nv, 2, NULL);
        return 0;
    }
    time_t now = time(NULL);
    if (now != date_at) {
        date_at = now;
        http_date(date, sizeof date, now);
    }
    const struct file *fl = st->f;
    nghttp2_nv nv[] = {
        NV(":status", "200", 3),
        NV("date", date, strlen(date)),
        NV("server", "donothing", 9),
        NV("content-length", fl->length, strlen(fl->length)),
        NV("content-type", "application/octet-stream", 24),
        NV("last-modified", fl->modified, strlen(fl->modified)),
        NV("etag", fl->etag, strlen(fl->etag)),
        NV("cache-control", "max-age=60", 10),
        NV("accept-ranges", "bytes", 5),
    };
    nghttp2_data_provider body = {.source.ptr = st, .read_callback = read_body};
    nghttp2_submit_response(s, f->hd.stream_id, nv, sizeof nv / sizeof nv[0],
                            fl->len ? &body : NULL);
    return 0;
}

static int on_close(nghttp2_session *s, int32_t id, uint32_t code, void *ud)
{
    (void)code, (void)ud;
    free(nghttp2_session_get_stream_user_data(s, id));
    return 0;
}

static void conn_close(int ep, struct conn *c)
{
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    if (c->ssl)
        SSL_free(c->ssl);
    nghttp2_session_del(c->session);
    free(c);
}

/* Sends what is buffered, then asks nghttp2 for more; 0, or -1 to close. */
static int flush(int ep, struct conn *c)
{
    for (;;) {
        while (c->out_sent < c->out_len) {
            int n;
            if (c->ssl) {
                n = SSL_write(c->ssl, c->out + c->out_sent, (int)(c->out_len - c->out_sent));
                if (n <= 0) {
                    int e = SSL_get_error(c->ssl, n);
                    if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ)
                        goto wait;
                    return -1;
                }
            } else {
                n = (int)send(c->fd, c->out + c->out_sent, c->out_len - c->out_sent, MSG_NOSIGNAL);
                if (n < 0)
                    goto wait;
            }
            c->out_sent += (size_t)n;
        }
        c->out_len = c->out_sent = 0;
        for (;;) {
            const uint8_t *data;
            ssize_t n = nghttp2_session_mem_send(c->session, &data);
            if (n < 0)
                return -1;
            if (n == 0)
                break;
            if ((size_t)n > sizeof c->out - c->out_len)
                return -1; /* a frame past 16 KiB + 64: not sent by this server */
            memcpy(c->out + c->out_len, data, (size_t)n);
            c->out_len += (size_t)n;
            if (c->out_len > sizeof c->out - 16 * 1024 - 64)
                break; /* room for the largest frame before asking again */
        }
        if (c->out_len == 0)
            break;
    }
    if (c->want_write) {
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
        c->want_write = false;
    }
    if (!nghttp2_session_want_read(c->session) && !nghttp2_session_want_write(c->session))
        return -1;
    return 0;
wait:
    if (!c->want_write) {
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
        epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
        c->want_write = true;
    }
    return 0;
}

static int on_readable(struct conn *c)
{
    static char buf[64 * 1024];
    for (;;) {
        int n;
        if (c->ssl) {
            n = SSL_read(c->ssl, buf, sizeof buf);
            if (n <= 0) {
                int e = SSL_get_error(c->ssl, n);
                return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? 0 : -1;
            }
        } else {
            n = (int)recv(c->fd, buf, sizeof buf, 0);
            if (n == 0)
                return -1;
            if (n < 0)
                return 0;
        }
        if (nghttp2_session_mem_recv(c->session, (const uint8_t *)buf, (size_t)n) < 0)
            return -1;
    }
}

static int alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
                unsigned int inlen, void *arg)
{
    (void)ssl, (void)arg;
    for (unsigned i = 0; i + 3 <= inlen; i += 1u + in[i])
        if (in[i] == 2 && in[i + 1] == 'h' && in[i + 2] == '2') {
            *out = in + i + 1;
            *outlen = 2;
            return SSL_TLSEXT_ERR_OK;
        }
    return SSL_TLSEXT_ERR_ALERT_FATAL;
}

static ssize_t no_send(nghttp2_session *s, const uint8_t *d, size_t n, int fl, void *ud)
{
    (void)s, (void)d, (void)n, (void)fl, (void)ud;
    return NGHTTP2_ERR_WOULDBLOCK; /* mem_send is used */
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 5) {
        fprintf(stderr, "usage: donothing_h2 PORT ROOT [CERT KEY]\n");
        return 2;
    }
    load(argv[2], "");
    load(argv[2], "page");
    if (argc == 5) {
        ctx = SSL_CTX_new(TLS_server_method());
        if (SSL_CTX_use_certificate_chain_file(ctx, argv[3]) != 1 ||
            SSL_CTX_use_PrivateKey_file(ctx, argv[4], SSL_FILETYPE_PEM) != 1) {
            ERR_print_errors_fp(stderr);
            return 1;
        }
        SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
        SSL_CTX_set_alpn_select_cb(ctx, alpn, NULL);
    }
    nghttp2_session_callbacks_new(&callbacks);
    nghttp2_session_callbacks_set_send_callback(callbacks, no_send);
    nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_close);
    nghttp2_option_new(&option);

    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)atoi(argv[1])),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 4096) != 0) {
        perror("donothing_h2: bind");
        return 1;
    }
    int ep = epoll_create1(0);
    struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &lev);
    struct epoll_event evs[256];
    for (;;) {
        int n = epoll_wait(ep, evs, 256, -1);
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            if (!c) {
                int fd;
                while ((fd = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    c = calloc(1, sizeof *c);
                    c->fd = fd;
                    if (ctx) {
                        c->ssl = SSL_new(ctx);
                        SSL_set_fd(c->ssl, fd);
                        SSL_set_accept_state(c->ssl);
                    }
                    nghttp2_session_server_new2(&c->session, callbacks, c, option);
                    nghttp2_settings_entry iv[] = {
                        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100},
                        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
                    };
                    nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, iv, 2);
                    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
                    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
                }
                continue;
            }
            if (on_readable(c) < 0 || flush(ep, c) < 0)
                conn_close(ep, c);
        }
    }
}

/* SPDX-License-Identifier: MIT */
/*
 * fuzz_h3.c - the HTTP/3 glue (src/http3/) driven by a hostile peer: the
 * input is a sequence of datagrams sent to a real worker's QUIC socket,
 * which answers from a real document root. ngtcp2, nghttp3 and GnuTLS are
 * pith's libraries with pith's callbacks: h3_accept.c's admission, Retry,
 * reset and Version Negotiation paths, h3_conn.c's connection, h3_http.c
 * and h3_stream.c's request checks, the handler, the file cache, the send
 * ring.
 *
 * Random bytes rarely make a packet the server can decrypt, so an input
 * may first have an in-process client (ngtcp2 and nghttp3, as
 * tests/h3client.c) finish a real handshake, and ask for a file; its
 * records are then either datagrams sent as they are or frames sealed
 * here as 1-RTT packets with the keys the client's ngtcp2 used (the
 * client is no longer driven after the first: its packet numbers and
 * acknowledgements would disagree with ours), so the fuzzer reaches the
 * stream, flow control, connection ID and close logic behind the AEAD.
 * The clock is the target's (h3_clock), so deadlines pass within an input.
 * Real UDP sockets on 127.0.0.1 carry the datagrams both ways (the
 * server's sendmsg with GSO and recvmmsg are its own).
 *
 * The input: three control bytes, then records.
 *   [0] flags: HANDSHAKE (a client handshake first), REQUEST (then a GET
 *       of the file data[1] & 7 picks, its answer read through nghttp3,
 *       which must decode it), DRAIN (SIGTERM once the records are sent),
 *       RETRY (--h3-retry on for this input)
 *   [1] which file the request asks for
 *   [2] the clock: ms a record
 *   records: two bytes (type: the top two bits; length: the other 14), then
 *   the payload: 0 a datagram from the client's socket, 1 frames sealed as
 *   a 1-RTT packet (sent as a datagram before a handshake), 2 a datagram
 *   from a second socket (another address: a migration, or a stranger),
 *   3 the clock jumps by payload[0] * 100 ms.
 *
 * FUZZ_H3_DUMP=1 says on stderr what each input did (handshake, answer,
 * bytes each way, the worker's counts), to read a run.
 *
 * It traps (beside ASan, UBSan and pith's assertions) unless: every
 * datagram the server sends decodes as a QUIC packet header (or a Version
 * Negotiation) and fits H3_MAX_UDP_PAYLOAD; without a handshake (no
 * address validated) the server sent at most three times what it received
 * (RFC 9000 §8.1); the client's request, when asked, got an answer nghttp3
 * decodes; every connection ended by the deadlines at the latest; and then
 * every stream slot, connection ID mapping and timer went back and no
 * descriptor stayed open beyond those the file cache counts.
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

#include "base/log.h"
#include "base/pool.h"
#include "base/server.h"
#include "base/stats.h"
#include "base/worker.h"
#include "cli/config.h"
#include "event/loop.h"
#include "http/filecache.h"
#include "http3/h3.h"
#include "http3/h3_internal.h"
#include "sys/sys.h"
#include "tls/tls.h"

#include <ngtcp2/ngtcp2_crypto_gnutls.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

_Noreturn void pith_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: assertion failed: %s\n", file, line, expr);
    abort();
}

static void require(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_h3: %s\n", what);
        __builtin_trap();
    }
}

enum { F_HANDSHAKE = 1, F_REQUEST = 2, F_DRAIN = 4, F_RETRY = 8 };

/* ---- the clock ------------------------------------------------------------------------------ */

static uint64_t now_ns = 1000000000000ull;

static uint64_t fake_clock(void)
{
    return now_ns;
}

static struct worker *w;

static void advance(uint64_t ns)
{
    now_ns += ns;
    w->now_ms = (int64_t)(now_ns / 1000000);
    w->now_sec = w->now_ms / 1000;
}

/* ---- the worker, set up once ---------------------------------------------------------------- */

/* A self-signed ECDSA P-256 certificate for localhost (the client does not
 * verify it), written beside the root at start. */
static const char cert_pem[] = "-----BEGIN CERTIFICATE-----\n"
                               "MIIBlDCCATugAwIBAgIUcoB5kc4ptKzSLP43h0OdjPXvtKowCgYIKoZIzj0EAwIw\n"
                               "FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTIwNjA1NTg1OFoYDzIxMjYxMTEy\n"
                               "MDU1ODU4WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO\n"
                               "PQMBBwNCAAR5d/SSb/zl+eh2V9lkTHcmgwmzW8GbXMj1r/dWpdfOJjwGEXmwnMCd\n"
                               "iw9Ij9+bp7r23FE4/mtcSDRph3Y7EG6Wo2kwZzAdBgNVHQ4EFgQUkqeHi24mqqt5\n"
                               "aGAKbVVEDMk0LIwwHwYDVR0jBBgwFoAUkqeHi24mqqt5aGAKbVVEDMk0LIwwDwYD\n"
                               "VR0TAQH/BAUwAwEB/zAUBgNVHREEDTALgglsb2NhbGhvc3QwCgYIKoZIzj0EAwID\n"
                               "RwAwRAIgI6K7w/NE646GkDg+BN0q0dqmNy+msDax/Sc0ZdRhL3ECIC6Wz8uI4auW\n"
                               "qqZOQdiXOwOJdVK+2j0RA4Kxi2ioxlyK\n"
                               "-----END CERTIFICATE-----\n";
static const char key_pem[] = "-----BEGIN PRIVATE KEY-----\n"
                              "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgS4YACn6QTNbO8HE1\n"
                              "YwKQbVa1KZPZg4GwkMKrAgW0GluhRANCAAR5d/SSb/zl+eh2V9lkTHcmgwmzW8Gb\n"
                              "XMj1r/dWpdfOJjwGEXmwnMCdiw9Ij9+bp7r23FE4/mtcSDRph3Y7EG6W\n"
                              "-----END PRIVATE KEY-----\n";

static void put(const char *dir, const char *name, const char *text, size_t size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    require(fd >= 0, "cannot create the document root");
    char block[4096];
    for (size_t i = 0; i < sizeof block; i++)
        block[i] = (char)('a' + i % 26);
    for (size_t left = size; left;) {
        size_t k = left < sizeof block ? left : sizeof block;
        require(write(fd, text ? text : block, k) == (ssize_t)k, "cannot write");
        left -= k;
    }
    close(fd);
}

static const char *const paths[8] = {"/",        "/a.txt",   "/big.bin", "/sub/",
                                     "/.secret", "/mid.css", "/nope",    "/sub/b.js"};

static void make_root(char *root, char *tls_dir)
{
    require(mkdtemp(root) != NULL && mkdtemp(tls_dir) != NULL, "mkdtemp");
    put(root, "index.html", NULL, 300);
    put(root, "a.txt", NULL, 1000);
    put(root, "mid.css", NULL, 20000);
    put(root, "big.bin", NULL, 150000);
    put(root, ".secret", NULL, 10);
    char sub[512];
    snprintf(sub, sizeof sub, "%s/sub", root);
    require(mkdir(sub, 0755) == 0, "mkdir");
    put(sub, "b.js", NULL, 5000);
    put(tls_dir, "cert.pem", cert_pem, sizeof cert_pem - 1);
    put(tls_dir, "key.pem", key_pem, sizeof key_pem - 1);
}

static struct config cfg;
static struct server srv;
static struct filecache fuzz_cache;
static struct fc_entry fuzz_scratch;
static const struct loop_events fuzz_events = {0};

static void open_root(struct server *s)
{
    struct vsite *vs = &s->sites[0];
    vs->conf = &s->set.sites[0];
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

/* What lives in sys_map()'s memory, which LeakSanitizer does not scan:
 * GnuTLS's credentials (the worker's), OpenSSL's contexts (the master's). */
static void fuzz_exit(void)
{
    h3_worker_exit(w);
    tls_server_free(srv.tls);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    static char root[] = "/tmp/fuzz_h3.XXXXXX", tls_dir[] = "/tmp/fuzz_h3_tls.XXXXXX";
    make_root(root, tls_dir);
    static char cert[600], key[600];
    snprintf(cert, sizeof cert, "%s/cert.pem", tls_dir);
    snprintf(key, sizeof key, "%s/key.pem", tls_dir);
    /* Small limits, so that they are reached; short deadlines. */
    char *args[] = {"pith",
                    "--quiet",
                    "--no-sandbox",
                    "--workers",
                    "1",
                    "--max-conns",
                    "4",
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
                    "--timeout-handshake",
                    "3",
                    "--tls-cert",
                    cert,
                    "--tls-key",
                    key,
                    "--tls-port",
                    "0",
                    "--header",
                    "X-Fuzz: yes",
                    root};
    char reason[1024];
    require(config_parse((int)(sizeof args / sizeof args[0]), args, 1, &cfg, reason,
                         sizeof reason) == CONFIG_RUN,
            reason);
    settings_from_config(&cfg, &srv.set);
    require(srv.set.http3, "HTTP/3 is on by default with TLS");
    open_root(&srv);
    srv.stats = stats_create(1700000000);
    srv.status_fd = -1;
    srv.h3_map_fd = -1; /* no steering map handed over */
    srv.ready_pipe[0] = srv.ready_pipe[1] = -1;
    for (unsigned i = 0; i < SETTINGS_WORKERS_MAX; i++)
        srv.listen_fds[i] = srv.tls_listen_fds[i] = srv.udp_fds[i] = -1;
    srv.nlisten = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
    memcpy(&srv.tls_listen_addr, &a, sizeof a);
    srv.tls_listen_len = sizeof a;
    char err[512];
    srv.tls = tls_server_new(&srv.set, err, sizeof err);
    require(srv.tls != NULL, err);
    require(h3_prepare(&srv) == 0 && srv.udp_fds[0] >= 0, "h3_prepare");

    w = sys_map(sizeof *w);
    require(w != NULL, "map the worker");
    w->srv = &srv;
    w->set = &srv.set;
    w->events = &fuzz_events;
    w->cache = &fuzz_cache;
    w->scratch_entry = &fuzz_scratch;
    w->listen_fd = w->tls_listen_fd = w->epfd = w->sigfd = -1;
    w->udp_fd = srv.udp_fds[0];
    w->nconns = srv.set.max_conns;
    w->stats = &srv.stats->w[0];
    h3_clock = fake_clock;
    advance(0);
    date_format_imf(w->now_sec, w->date);
    require(access_log_open(&w->log, NULL, false) == 0, "the access log");
    struct fc_settings fcs = {
        .resolve = srv.resolve,
        .entries = srv.set.cache_entries,
        .mem_bytes = (uint64_t)srv.set.cache_size_mib << 20,
        .max_file = srv.set.cache_max_file,
    };
    require(filecache_init(w->cache, &fcs) == 0, "the file cache");
    require(h3_worker_init(w) == 0 && w->h3, "h3_worker_init");
    atexit(fuzz_exit);
    return 0;
}

/* ---- the client ---------------------------------------------------------------------------- */

static struct client {
    int fd, fd2; /* the client's socket, and a second address */
    struct sockaddr_storage local, remote;
    socklen_t local_len, remote_len;
    ngtcp2_conn *qc;
    nghttp3_conn *h3;
    gnutls_session_t tls;
    gnutls_certificate_credentials_t cred;
    ngtcp2_crypto_conn_ref ref;
    bool ready, driven, answered, failed;
    int64_t req;
    /* the keys of ngtcp2's last 1-RTT packet, to seal ours (tests/h3client.c) */
    ngtcp2_crypto_aead aead;
    ngtcp2_crypto_aead_ctx aead_ctx;
    ngtcp2_crypto_cipher hp;
    ngtcp2_crypto_cipher_ctx hp_ctx;
    uint8_t iv[32], hdr[32];
    size_t ivlen, hdrlen;
    uint64_t pn;
    bool short_pending, have_keys;
    uint64_t sent, got; /* datagram bytes each way */
} cl;

static void rand_cb(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx)
{
    (void)ctx;
    for (size_t i = 0; i < len; i++)
        dest[i] = (uint8_t)rand(); /* reproducible runs */
}

static int new_cid(ngtcp2_conn *qc, ngtcp2_cid *cid, uint8_t *token, size_t len, void *ud)
{
    (void)qc, (void)ud;
    cid->datalen = 8;
    rand_cb(cid->data, 8, NULL);
    rand_cb(token, len, NULL);
    return 0;
}

static int h3_setup(void);

static int handshake_completed(ngtcp2_conn *qc, void *ud)
{
    (void)qc, (void)ud;
    cl.ready = true;
    return h3_setup() == 0 ? 0 : NGTCP2_ERR_CALLBACK_FAILURE;
}

static int recv_stream_data(ngtcp2_conn *qc, uint32_t flags, int64_t id, uint64_t off,
                            const uint8_t *data, size_t len, void *ud, void *sud)
{
    (void)off, (void)ud, (void)sud;
    nghttp3_ssize n =
        nghttp3_conn_read_stream(cl.h3, id, data, len, flags & NGTCP2_STREAM_DATA_FLAG_FIN);
    if (n < 0) {
        cl.failed = true; /* the server's HTTP/3 did not decode */
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    ngtcp2_conn_extend_max_stream_offset(qc, id, (uint64_t)n);
    ngtcp2_conn_extend_max_offset(qc, (uint64_t)n);
    return 0;
}

static int acked(ngtcp2_conn *qc, int64_t id, uint64_t off, uint64_t n, void *ud, void *sud)
{
    (void)qc, (void)off, (void)ud, (void)sud;
    return nghttp3_conn_add_ack_offset(cl.h3, id, n) ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static int stream_close(ngtcp2_conn *qc, uint32_t flags, int64_t id, uint64_t code, void *ud,
                        void *sud)
{
    (void)qc, (void)ud, (void)sud;
    if (!(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET))
        code = NGHTTP3_H3_NO_ERROR;
    int rv = cl.h3 ? nghttp3_conn_close_stream(cl.h3, id, code) : 0;
    return rv && rv != NGHTTP3_ERR_STREAM_NOT_FOUND ? NGTCP2_ERR_CALLBACK_FAILURE : 0;
}

static int seal_encrypt(uint8_t *dest, const ngtcp2_crypto_aead *aead,
                        const ngtcp2_crypto_aead_ctx *aead_ctx, const uint8_t *plaintext,
                        size_t plaintextlen, const uint8_t *nonce, size_t noncelen,
                        const uint8_t *aad, size_t aadlen)
{
    if (aadlen && !(aad[0] & 0x80) && noncelen <= sizeof cl.iv && aadlen <= sizeof cl.hdr) {
        size_t pnlen = (size_t)(aad[0] & 3) + 1;
        uint64_t pn = 0;
        for (size_t i = aadlen - pnlen; i < aadlen; i++)
            pn = pn << 8 | aad[i];
        cl.aead = *aead;
        cl.aead_ctx = *aead_ctx;
        cl.ivlen = noncelen;
        memcpy(cl.iv, nonce, noncelen);
        for (size_t i = 0; i < 8; i++)
            cl.iv[noncelen - 1 - i] ^= (uint8_t)(pn >> (8 * i));
        cl.hdrlen = aadlen - pnlen;
        memcpy(cl.hdr, aad, cl.hdrlen);
        cl.pn = pn > cl.pn ? pn : cl.pn;
        cl.short_pending = true;
    }
    return ngtcp2_crypto_encrypt_cb(dest, aead, aead_ctx, plaintext, plaintextlen, nonce, noncelen,
                                    aad, aadlen);
}

static int seal_hp(uint8_t *dest, const ngtcp2_crypto_cipher *hp,
                   const ngtcp2_crypto_cipher_ctx *hp_ctx, const uint8_t *sample)
{
    if (cl.short_pending) {
        cl.hp = *hp;
        cl.hp_ctx = *hp_ctx;
        cl.short_pending = false;
        cl.have_keys = true;
    }
    return ngtcp2_crypto_hp_mask_cb(dest, hp, hp_ctx, sample);
}

static int h_stream_close(nghttp3_conn *c, int64_t id, uint64_t code, void *ud, void *sud)
{
    (void)c, (void)code, (void)ud, (void)sud;
    if (id == cl.req)
        cl.answered = true;
    return 0;
}

static int h_recv_data(nghttp3_conn *c, int64_t id, const uint8_t *d, size_t n, void *ud, void *sud)
{
    (void)c, (void)d, (void)ud, (void)sud;
    ngtcp2_conn_extend_max_stream_offset(cl.qc, id, n);
    ngtcp2_conn_extend_max_offset(cl.qc, n);
    return 0;
}

static int h_deferred(nghttp3_conn *c, int64_t id, size_t n, void *ud, void *sud)
{
    return h_recv_data(c, id, NULL, n, ud, sud);
}

static int h3_setup(void)
{
    static const nghttp3_callbacks cb = {
        .stream_close = h_stream_close,
        .recv_data = h_recv_data,
        .deferred_consume = h_deferred,
    };
    nghttp3_settings s;
    nghttp3_settings_default(&s);
    int64_t a, b, c;
    if (nghttp3_conn_client_new(&cl.h3, &cb, &s, NULL, NULL) != 0 ||
        ngtcp2_conn_open_uni_stream(cl.qc, &a, NULL) != 0 ||
        nghttp3_conn_bind_control_stream(cl.h3, a) != 0 ||
        ngtcp2_conn_open_uni_stream(cl.qc, &b, NULL) != 0 ||
        ngtcp2_conn_open_uni_stream(cl.qc, &c, NULL) != 0 ||
        nghttp3_conn_bind_qpack_streams(cl.h3, b, c) != 0)
        return -1;
    return 0;
}

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref)
{
    (void)ref;
    return cl.qc;
}

static int udp_socket(struct sockaddr_storage *local, socklen_t *local_len)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    require(fd >= 0, "a client socket");
    require(connect(fd, (struct sockaddr *)&cl.remote, cl.remote_len) == 0, "connect");
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    getsockname(fd, (struct sockaddr *)(local ? local : &ss), local_len ? local_len : &len);
    return fd;
}

static void client_new(void)
{
    cl.remote_len = sizeof cl.remote;
    require(getsockname(w->udp_fd, (struct sockaddr *)&cl.remote, &cl.remote_len) == 0,
            "the server's address");
    cl.local_len = sizeof cl.local;
    cl.fd = udp_socket(&cl.local, &cl.local_len);
    cl.fd2 = udp_socket(NULL, NULL);
    cl.req = -1;
}

static void client_handshake_start(void)
{
    ngtcp2_cid dcid = {.datalen = 18}, scid = {.datalen = 8};
    rand_cb(dcid.data, 18, NULL);
    rand_cb(scid.data, 8, NULL);
    ngtcp2_settings s;
    ngtcp2_settings_default(&s);
    s.initial_ts = now_ns;
    ngtcp2_transport_params p;
    ngtcp2_transport_params_default(&p);
    p.initial_max_stream_data_bidi_local = 1 << 20;
    p.initial_max_stream_data_uni = 1 << 20;
    p.initial_max_data = 4 << 20;
    p.initial_max_streams_uni = 3;
    p.max_idle_timeout = 30 * NGTCP2_SECONDS;
    ngtcp2_callbacks cb = {
        .client_initial = ngtcp2_crypto_client_initial_cb,
        .recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb,
        .handshake_completed = handshake_completed,
        .encrypt = seal_encrypt,
        .decrypt = ngtcp2_crypto_decrypt_cb,
        .hp_mask = seal_hp,
        .recv_stream_data = recv_stream_data,
        .acked_stream_data_offset = acked,
        .stream_close = stream_close,
        .recv_retry = ngtcp2_crypto_recv_retry_cb,
        .rand = rand_cb,
        .get_new_connection_id = new_cid,
        .update_key = ngtcp2_crypto_update_key_cb,
        .delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb,
        .delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb,
        .get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb,
        .version_negotiation = ngtcp2_crypto_version_negotiation_cb,
    };
    ngtcp2_path path = {{(ngtcp2_sockaddr *)&cl.local, cl.local_len},
                        {(ngtcp2_sockaddr *)&cl.remote, cl.remote_len},
                        NULL};
    require(ngtcp2_conn_client_new(&cl.qc, &dcid, &scid, &path, NGTCP2_PROTO_VER_V1, &cb, &s, &p,
                                   NULL, NULL) == 0,
            "the client's connection");
    static const gnutls_datum_t alpn = {(unsigned char *)"h3", 2};
    cl.ref = (ngtcp2_crypto_conn_ref){get_conn, NULL};
    require(gnutls_certificate_allocate_credentials(&cl.cred) == 0 &&
                gnutls_init(&cl.tls, GNUTLS_CLIENT) == 0 &&
                gnutls_priority_set_direct(
                    cl.tls, "NORMAL:-VERS-ALL:+VERS-TLS1.3:%DISABLE_TLS13_COMPAT_MODE", NULL) ==
                    0 &&
                ngtcp2_crypto_gnutls_configure_client_session(cl.tls) == 0 &&
                gnutls_credentials_set(cl.tls, GNUTLS_CRD_CERTIFICATE, cl.cred) == 0 &&
                gnutls_alpn_set_protocols(cl.tls, &alpn, 1, GNUTLS_ALPN_MANDATORY) == 0 &&
                gnutls_server_name_set(cl.tls, GNUTLS_NAME_DNS, "localhost", 9) == 0,
            "the client's TLS");
    gnutls_session_set_ptr(cl.tls, &cl.ref);
    ngtcp2_conn_set_tls_native_handle(cl.qc, cl.tls);
    cl.driven = true;
}

static void client_free(void)
{
    if (cl.h3)
        nghttp3_conn_del(cl.h3);
    if (cl.qc)
        ngtcp2_conn_del(cl.qc);
    if (cl.tls)
        gnutls_deinit(cl.tls);
    if (cl.cred)
        gnutls_certificate_free_credentials(cl.cred);
    close(cl.fd);
    close(cl.fd2);
    cl = (struct client){0};
}

/* ---- the wire -------------------------------------------------------------------------------- */

static void send_from(int fd, const uint8_t *p, size_t n)
{
    if (n == 0)
        return;
    if (send(fd, p, n, 0) == (ssize_t)n)
        cl.sent += n;
}

/* The client's ngtcp2 writes what it has (while it is driven). */
static void client_write(void)
{
    if (!cl.driven)
        return;
    uint8_t buf[1500];
    for (int i = 0; i < 32; i++) {
        int64_t sid = -1;
        int fin = 0;
        nghttp3_vec vec[8];
        nghttp3_ssize cnt = 0;
        if (cl.h3) {
            cnt = nghttp3_conn_writev_stream(cl.h3, &sid, &fin, vec, 8);
            if (cnt < 0) {
                cl.driven = false;
                return;
            }
        }
        ngtcp2_ssize ndata = -1;
        ngtcp2_ssize n = ngtcp2_conn_writev_stream(
            cl.qc, NULL, NULL, buf, sizeof buf, &ndata,
            NGTCP2_WRITE_STREAM_FLAG_MORE | (fin ? NGTCP2_WRITE_STREAM_FLAG_FIN : 0), sid,
            (const ngtcp2_vec *)vec, (size_t)cnt, now_ns);
        if (n == NGTCP2_ERR_STREAM_DATA_BLOCKED) {
            nghttp3_conn_block_stream(cl.h3, sid);
            continue;
        }
        if (n == NGTCP2_ERR_STREAM_SHUT_WR) {
            nghttp3_conn_shutdown_stream_write(cl.h3, sid);
            continue;
        }
        if (ndata >= 0 && sid >= 0)
            nghttp3_conn_add_write_offset(cl.h3, sid, (size_t)ndata);
        if (n == NGTCP2_ERR_WRITE_MORE)
            continue;
        if (n <= 0) {
            if (n < 0)
                cl.driven = false;
            return;
        }
        send_from(cl.fd, buf, (size_t)n);
    }
}

/* What the server sent to either of the client's sockets: each datagram
 * must decode as a QUIC packet (a VN's header too) no larger than ours. */
static void client_read(int fd, bool feed)
{
    uint8_t buf[65536];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof buf, 0)) > 0) {
        cl.got += (uint64_t)n;
        require(n <= H3_MAX_UDP_PAYLOAD, "a datagram larger than the server's maximum");
        ngtcp2_version_cid vc;
        int rv = ngtcp2_pkt_decode_version_cid(&vc, buf, (size_t)n, 8);
        require(rv == 0 || rv == NGTCP2_ERR_VERSION_NEGOTIATION, "a datagram that is no packet");
        if (!feed || !cl.driven)
            continue;
        ngtcp2_path path = {{(ngtcp2_sockaddr *)&cl.local, cl.local_len},
                            {(ngtcp2_sockaddr *)&cl.remote, cl.remote_len},
                            NULL};
        ngtcp2_pkt_info pi = {0};
        if (ngtcp2_conn_read_pkt(cl.qc, &path, &pi, buf, (size_t)n, now_ns) != 0) {
            require(!cl.failed, "the server's answer did not decode in nghttp3");
            cl.driven = false;
        }
    }
}

/* One round: the client writes, the server reads and answers, the client
 * reads; the clock moves by ms. */
static void round_trip(uint64_t ms)
{
    client_write();
    h3_readable(w);
    client_read(cl.fd, true);
    client_read(cl.fd2, false);
    advance(ms * 1000000u);
    h3_expire(w);
    if (cl.driven && ngtcp2_conn_get_expiry(cl.qc) <= now_ns &&
        ngtcp2_conn_handle_expiry(cl.qc, now_ns) != 0)
        cl.driven = false;
}

/* Seals frames as a 1-RTT packet of the next packet number. */
static void seal_send(const uint8_t *frames, size_t n)
{
    uint8_t pkt[2048], nonce[32], mask[NGTCP2_HP_SAMPLELEN], plain[1400];
    if (n > sizeof plain)
        n = sizeof plain;
    memcpy(plain, frames, n);
    if (n < 4) {
        memset(plain + n, 0, 4 - n); /* PADDING: a sample's worth */
        n = 4;
    }
    uint64_t pn = ++cl.pn;
    memcpy(pkt, cl.hdr, cl.hdrlen);
    pkt[0] = (uint8_t)((pkt[0] & ~3u) | 3u);
    for (int i = 0; i < 4; i++)
        pkt[cl.hdrlen + (size_t)i] = (uint8_t)(pn >> (8 * (3 - i)));
    size_t hl = cl.hdrlen + 4;
    memcpy(nonce, cl.iv, cl.ivlen);
    for (size_t i = 0; i < 8; i++)
        nonce[cl.ivlen - 1 - i] ^= (uint8_t)(pn >> (8 * i));
    require(ngtcp2_crypto_encrypt(pkt + hl, &cl.aead, &cl.aead_ctx, plain, n, nonce, cl.ivlen, pkt,
                                  hl) == 0 &&
                ngtcp2_crypto_hp_mask(mask, &cl.hp, &cl.hp_ctx, pkt + hl) == 0,
            "sealing");
    pkt[0] ^= mask[0] & 0x1f;
    for (size_t i = 0; i < 4; i++)
        pkt[cl.hdrlen + i] ^= mask[1 + i];
    send_from(cl.fd, pkt, hl + n + cl.aead.max_overhead);
}

/* ---- one input ------------------------------------------------------------------------------- */

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

static uint32_t free_slots(const struct h3_worker *hw)
{
    uint32_t n = hw->nslots - hw->next_slot;
    for (char *s = hw->free_slot; s; s = *(char **)(void *)s)
        n++;
    for (char *s = hw->cold_slot; s; s = *(char **)(void *)s)
        n++;
    return n;
}

static void get(const char *path)
{
    if (ngtcp2_conn_open_bidi_stream(cl.qc, &cl.req, NULL) != 0)
        return;
    const nghttp3_nv nv[] = {
        {(uint8_t *)":method", (uint8_t *)"GET", 7, 3, 0},
        {(uint8_t *)":scheme", (uint8_t *)"https", 7, 5, 0},
        {(uint8_t *)":authority", (uint8_t *)"localhost", 10, 9, 0},
        {(uint8_t *)":path", (uint8_t *)(uintptr_t)path, 5, strlen(path), 0},
    };
    require(nghttp3_conn_submit_request(cl.h3, cl.req, nv, 4, NULL, NULL) == 0, "a request");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t ctl[3] = {0};
    for (size_t i = 0; i < 3 && i < size; i++)
        ctl[i] = data[i];
    size_t at = size < 3 ? size : 3;
    struct h3_worker *hw = w->h3;
    int fds_before = open_fds();
    uint32_t cache_fds_before = w->cache->fds;
    srand(ctl[1] | (unsigned)ctl[2] << 8);
    srv.set.h3_retry = (ctl[0] & F_RETRY) != 0;
    hw->draining = false;
    client_new();

    if (ctl[0] & F_HANDSHAKE) {
        client_handshake_start();
        for (int i = 0; i < 40 && !cl.ready && cl.driven; i++)
            round_trip(1);
        if (cl.ready && (ctl[0] & F_REQUEST)) {
            get(paths[ctl[1] & 7]);
            for (int i = 0; i < 200 && !cl.answered && cl.driven; i++)
                round_trip(1);
            require(cl.answered || !cl.driven, "the request got no answer");
        }
        for (int i = 0; i < 4 && cl.driven; i++)
            round_trip(1); /* acknowledgements, HANDSHAKE_DONE */
    }
    bool validated = cl.ready;
    uint64_t step = ctl[2];
    while (at + 2 <= size) {
        unsigned type = data[at] >> 6;
        size_t len = (size_t)(data[at] & 0x3f) << 8 | data[at + 1];
        at += 2;
        if (len > size - at)
            len = size - at;
        const uint8_t *p = data + at;
        at += len;
        if (type == 1 && cl.have_keys) {
            cl.driven = false; /* ours from now on: ngtcp2's numbers would clash */
            seal_send(p, len);
        } else if (type == 3) {
            advance((len ? p[0] : 1) * 100000000ull);
        } else {
            send_from(type == 2 ? cl.fd2 : cl.fd, p, len < 1500 ? len : 1500);
        }
        round_trip(step);
    }
    if (!validated)
        require(cl.got <= 3 * cl.sent, "the server sent more than three times what it got "
                                       "to an address it did not validate");
    if (ctl[0] & F_DRAIN) {
        h3_drain(w);
        round_trip(1);
    }
    /* Nothing more comes: the deadlines end every connection. */
    cl.driven = false;
    for (int i = 0; i < 64 && hw->active; i++) {
        advance(5ull * NGTCP2_SECONDS);
        h3_expire(w);
        h3_readable(w);
        client_read(cl.fd, false);
        client_read(cl.fd2, false);
    }
    if (getenv("FUZZ_H3_DUMP"))
        fprintf(stderr,
                "fuzz_h3: handshake %d, answered %d, %llu bytes sent, %llu received; "
                "connections %llu, streams %llu, closed idle %llu timeout %llu flood %llu "
                "protocol %llu peer %llu\n",
                cl.ready, cl.answered, (unsigned long long)cl.sent, (unsigned long long)cl.got,
                (unsigned long long)hw->n_conns, (unsigned long long)hw->n_streams,
                (unsigned long long)hw->closes[H3_CLOSE_IDLE],
                (unsigned long long)hw->closes[H3_CLOSE_TIMEOUT],
                (unsigned long long)hw->closes[H3_CLOSE_FLOOD],
                (unsigned long long)hw->closes[H3_CLOSE_PROTOCOL],
                (unsigned long long)hw->closes[H3_CLOSE_PEER]);
    require(hw->active == 0, "a connection outlived its deadlines");
    require(hw->heap_n == 0, "a timer of a freed connection is armed");
    require(h3_cidmap_count(hw->map) == 0, "a connection ID is still mapped");
    require(free_slots(hw) == hw->nslots, "a stream slot was not given back");
    client_free();
    require(open_fds() - fds_before == (int)w->cache->fds - (int)cache_fds_before,
            "a descriptor leaked");
    return 0;
}

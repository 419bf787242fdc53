# SPDX-License-Identifier: MIT
"""Regression: a TLS read that must send first waited for bytes, not for room.

SSL_read may answer SSL_ERROR_WANT_WRITE: OpenSSL has a message of its own
to send before it can read on (a post-handshake message, such as a
KeyUpdate) and the socket is full. read_plaintext() treated it like
WANT_READ and waited for the client's bytes; but the client, waiting for
its answer, may send nothing more, and the bytes already received sit in
the TLS buffer, where the ready list handed them back at once: the worker
spun on a read that could not progress, and the request was not answered
until a timeout closed the connection. The fix remembers that the read
wants writability, asks the loop for it, and reads on from writable().

No client can cause this from outside with OpenSSL 3: it answers a
client's KeyUpdate from the next SSL_write, not from SSL_read (openssl PR
#8773), and pith starts no post-handshake message of its own. So a
preloaded stand-in makes the situation real inside the worker: on the
first read after the handshake it has OpenSSL schedule a KeyUpdate of the
server's own (SSL_key_update), which OpenSSL then sends from that very
SSL_read, and it holds the socket "full" (write(2) on it fails with
EAGAIN) until the worker asks epoll for writability, as a client that
drains its side would make room only once the server waits for it. The
shim sees that request only with epoll (io_uring's polls go through the
ring), so this test runs the epoll loop; the transport code it checks is
the same on both loops.
"""

import os
import shutil
import subprocess

import pytest

from conftest import PithServer, tls_pki
from tlsutil import tls_args, tls_conn

pytestmark = pytest.mark.full_only("TLS")

KEY_UPDATE_FULL_SOCKET_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/epoll.h>
#include <unistd.h>

static int (*real_read_ex)(SSL *, void *, size_t, size_t *);
static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_epoll_ctl)(int, int, int, struct epoll_event *);
static int full_fd = -1; /* write(2) on it fails with EAGAIN */
static int done;         /* one key update per process */

__attribute__((constructor)) static void init(void)
{
    real_read_ex = (int (*)(SSL *, void *, size_t, size_t *))dlsym(RTLD_NEXT, "SSL_read_ex");
    real_write = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    real_epoll_ctl = (int (*)(int, int, int, struct epoll_event *))dlsym(RTLD_NEXT, "epoll_ctl");
}

int SSL_read_ex(SSL *s, void *buf, size_t num, size_t *readbytes)
{
    if (!done && SSL_version(s) == TLS1_3_VERSION && SSL_is_init_finished(s)) {
        ERR_set_mark();
        if (SSL_key_update(s, SSL_KEY_UPDATE_NOT_REQUESTED) == 1) {
            done = 1;
            full_fd = SSL_get_wfd(s);
        }
        ERR_pop_to_mark();
    }
    return real_read_ex(s, buf, num, readbytes);
}

ssize_t write(int fd, const void *p, size_t n)
{
    if (fd >= 0 && fd == full_fd) {
        errno = EAGAIN;
        return -1;
    }
    return real_write(fd, p, n);
}

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
    if (fd == full_fd && op != EPOLL_CTL_DEL && ev && (ev->events & EPOLLOUT))
        full_fd = -1; /* the server waits for room: now there is some */
    return real_epoll_ctl(epfd, op, fd, ev);
}
"""


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.fail("no C compiler to build the preloaded stand-in")
    d = tmp_path_factory.mktemp("keyupdate")
    src = d / "key_update_full_socket.c"
    src.write_text(KEY_UPDATE_FULL_SOCKET_C)
    so = d / "key_update_full_socket.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(so), str(src), "-ldl"], check=True,
                   capture_output=True)
    return str(so)


def test_a_read_that_must_send_first_resumes_when_the_socket_has_room(docroot, shim):
    pki = tls_pki()
    asan = os.environ.get("ASAN_OPTIONS", "")
    env = {"LD_PRELOAD": shim,
           # The ASan runtime wants to come first; a preload ahead of it is fine here.
           "ASAN_OPTIONS": (asan + ":" if asan else "") + "verify_asan_link_order=0"}
    s = PithServer(docroot.root, tls_args(pki, "--timeout-header", "30"), env=env)
    # The epoll loop, whatever the pass's PITH_IO (see the docstring).
    s.argv = [a for i, a in enumerate(s.argv)
              if a != "--io" and (i == 0 or s.argv[i - 1] != "--io")]
    s.argv[1:1] = ["--io", "epoll"]
    s.start()
    try:
        with tls_conn(s.tls_port, pki, timeout=5) as c:
            assert c.sock.version() == "TLSv1.3"
            # The first request's read sends the server's KeyUpdate first.
            for _ in range(3):
                assert c.exchange("GET", "/index.html").status == 200
    finally:
        assert s.stop() == []

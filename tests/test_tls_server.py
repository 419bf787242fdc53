# SPDX-License-Identifier: MIT
"""HTTPS through the live process (issue 10): the policy (protocols, ciphers,
ALPN, SNI), the data path (byte-exact bodies, pipelining over TLS), what a
TLS port does with plain HTTP and garbage, the handshake deadline, and the
descriptors a thousand handshakes leave behind. Clients: curl --cacert,
Python's ssl and openssl s_client. Reload, tickets, redirects and the
command line are in test_tls_ops.py."""

import hashlib
import os
import re
import signal
import socket
import ssl
import subprocess
import time

import pytest

import http_raw
from conftest import PITH_BIN, fd_count, settled_fd_count, tls_pki
from opsnet_util import status_port, wait_metric
from tlsutil import (answered_key_update_first, client_ctx, key_update_events, leaf_der,
                     plain_socket, s_client, s_client_events, served_cert, tls_args, tls_conn)

pytestmark = pytest.mark.full_only("TLS")

ASAN = "asan" in os.path.basename(PITH_BIN)


@pytest.fixture(scope="module")
def pki():
    return tls_pki()


@pytest.fixture(scope="module")
def tserver(pith_module, pki):
    return pith_module(*tls_args(pki))


# -- the data path -----------------------------------------------------------------


def test_start_line_names_both_urls_and_the_tls_path(tserver):
    line = tserver.start_line
    assert "http://127.0.0.1:%d/ and https://127.0.0.1:%d/" % (tserver.http_port,
                                                               tserver.tls_port) in line, line
    assert "kernel TLS available" in line or "userspace TLS: " in line, line


def test_curl_fetches_byte_exact_over_tls(tserver, pki, docroot):
    big = open(os.path.join(docroot.root, "big.bin"), "rb").read()
    url = "https://localhost:%d/" % tserver.tls_port
    # --http1.1: the HTTP/1 data path over TLS (HTTP/2's is tests/test_h2.py)
    p = subprocess.run(["curl", "-sS", "--http1.1", "--cacert", pki["ca"], url + "big.bin"],
                       stdout=subprocess.PIPE, timeout=30)
    assert p.returncode == 0
    assert hashlib.sha256(p.stdout).digest() == hashlib.sha256(big).digest()
    # A Range of the same file, and a HEAD: the userspace path's file records.
    p = subprocess.run(["curl", "-sS", "--http1.1", "--cacert", pki["ca"], "-r", "1000000-1100000",
                        url + "big.bin"], stdout=subprocess.PIPE, timeout=30)
    assert p.stdout == big[1000000:1100001]
    p = subprocess.run(["curl", "-sSI", "--http1.1", "--cacert", pki["ca"], url + "big.bin"],
                       stdout=subprocess.PIPE, timeout=30)
    assert b"Content-Length: %d" % len(big) in p.stdout


def test_a_slow_reader_gets_every_byte_and_others_are_served(tserver, pki, docroot):
    """A client with a small window reads a 3 MiB body slowly, with a request
    pipelined behind it: the records sealed for it wait for room (epoll) or
    for the ring's send (io_uring) without holding the worker, and the
    pipelined answer follows the last of them, in order."""
    big = open(os.path.join(docroot.root, "big.bin"), "rb").read()
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.settimeout(20)
    raw.connect(("127.0.0.1", tserver.tls_port))
    with client_ctx(pki).wrap_socket(raw, server_hostname="localhost") as t:
        t.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n"
                  b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n")
        got = t.recv(4096)
        # The worker is not held: another client is served meanwhile.
        with tls_conn(tserver.tls_port, pki, timeout=5) as other:
            assert other.exchange("GET", "/index.html").status == 200
        head_end = -1
        while head_end < 0:
            got += t.recv(4096)
            head_end = got.find(b"\r\n\r\n")
        assert got.startswith(b"HTTP/1.1 200 "), got[:100]
        body = bytearray(got[head_end + 4:])
        slow = 0
        while len(body) < len(big):
            d = t.recv(min(16384, len(big) - len(body)))
            assert d, "the stream ended after %d bytes" % len(body)
            body += d
            if slow < 40:  # the first part slowly: the socket fills
                slow += 1
                time.sleep(0.01)
        assert hashlib.sha256(body).digest() == hashlib.sha256(big).digest()
        rest = b""
        while b"\r\n\r\n" not in rest:
            rest += t.recv(4096)
        assert rest.startswith(b"HTTP/1.1 200 "), rest[:100]


def test_keepalive_and_plain_port_still_plain(tserver, pki):
    with tls_conn(tserver.tls_port, pki) as c:
        for _ in range(3):
            r = c.exchange("GET", "/index.html")
            assert r.status == 200
    with http_raw.Conn(0, sock=plain_socket(tserver.http_port)) as c:
        assert c.exchange("GET", "/index.html").status == 200


def test_pipelining_beyond_the_input_buffer_over_tls(tserver, pki):
    """400 pipelined requests in one go (more than the 32 KiB input holds):
    what OpenSSL already decrypted is handed over without a socket event."""
    n = 400
    req = b"GET /index.html HTTP/1.1\r\nHost: p\r\nX-Pad: " + b"x" * 60 + b"\r\n\r\n"
    with tls_conn(tserver.tls_port, pki) as c:
        c.send(req * n)
        for i in range(n):
            assert c.read_response().status == 200, i


@pytest.mark.parametrize("request_bytes", [
    b"GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",  # closed at once
    b"GET /index.html HTTP/1.1\r\nBad Name: x\r\n\r\n",  # a 400: lingering close
])
def test_the_end_of_the_stream_is_a_close_notify(tserver, pki, request_bytes):
    """A client that reads to the end learns the server ended the stream on
    purpose (close_notify), not that it was cut (a ragged EOF)."""
    ctx = client_ctx(pki)
    ctx.options &= ~getattr(ssl, "OP_IGNORE_UNEXPECTED_EOF", 0)  # Python may set it
    raw = socket.create_connection(("127.0.0.1", tserver.tls_port), timeout=10)
    with ctx.wrap_socket(raw, server_hostname="localhost", suppress_ragged_eofs=False) as t:
        t.sendall(request_bytes)
        got = b""
        while True:
            d = t.recv(65536)  # SSLEOFError on an EOF without close_notify
            if not d:
                break
            got += d
    assert got.startswith(b"HTTP/1.1 "), got[:100]


def test_a_clients_key_update_request_is_answered_before_the_next_response(tserver, pki):
    """RFC 8446 4.6.3 on the userspace path (this host has no kernel TLS;
    tests/test_tls_ktls_uml.py has the kernel's): OpenSSL sends our
    KeyUpdate with the next SSL_write, ahead of the response."""
    events = key_update_events(tserver.tls_port, pki["ca"], "/index.html")
    assert events.count("client KeyUpdate") == 1, events
    assert events.count("response") == 2, events
    assert answered_key_update_first(events), events


def test_renegotiation_is_refused_and_the_worker_serves_on(tserver, pki):
    """No renegotiation (SSL_OP_NO_RENEGOTIATION): a TLS 1.2 client's second
    ClientHello gets a no_renegotiation alert, never a ServerHello, and the
    worker goes on serving."""
    events = s_client_events(tserver.tls_port, pki["ca"], "/index.html", b"R\n", "-tls1_2")
    assert events[:3] == ["client ClientHello", "server ServerHello", "response"], events
    i = events.index("client ClientHello", 3)  # the renegotiation
    assert "server alert no_renegotiation" in events[i:], events
    assert "server ServerHello" not in events[i:], events
    with tls_conn(tserver.tls_port, pki) as c:
        assert c.exchange("GET", "/index.html").status == 200


# -- the policy --------------------------------------------------------------------


def test_sni_picks_the_certificate_and_unknown_names_get_the_default(tserver, pki):
    ecdsa, rsa = leaf_der(pki["ecdsa"][0]), leaf_der(pki["rsa"][0])
    assert served_cert(tserver.tls_port, "a.test") == ecdsa
    assert served_cert(tserver.tls_port, "b.test") == rsa
    assert served_cert(tserver.tls_port, "unknown.test") == ecdsa
    # And a verifying client accepts each for its name.
    with tls_conn(tserver.tls_port, pki, host="b.test") as c:
        assert c.exchange("GET", "/index.html").status == 200


@pytest.mark.parametrize("flag", ["-tls1", "-tls1_1"])
def test_old_protocols_refused(tserver, flag):
    # SECLEVEL=0 lets the client offer them at all: the refusal is the server's.
    rc, out = s_client(tserver.tls_port, flag, "-cipher", "DEFAULT:@SECLEVEL=0")
    assert rc != 0, out
    assert "alert protocol version" in out, out


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_python_client_limited_to_tls11_is_refused(tserver, pki):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    try:
        ctx.minimum_version = ssl.TLSVersion.TLSv1
        ctx.maximum_version = ssl.TLSVersion.TLSv1_1
        ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
    except (ValueError, ssl.SSLError):
        pytest.fail("this Python cannot even offer TLS 1.1")
    with pytest.raises(ssl.SSLError):
        with socket.create_connection(("127.0.0.1", tserver.tls_port), timeout=10) as raw:
            ctx.wrap_socket(raw, server_hostname="localhost")


def test_weak_cipher_refused(tserver):
    rc, out = s_client(tserver.tls_port, "-tls1_2", "-cipher", "AES128-SHA")
    assert rc != 0, out
    assert "alert handshake failure" in out, out


def test_tls13_chacha20_and_tls12_ecdhe_aead(tserver):
    rc, out = s_client(tserver.tls_port, "-tls1_3", "-ciphersuites",
                       "TLS_CHACHA20_POLY1305_SHA256", "-servername", "a.test")
    assert "TLS_CHACHA20_POLY1305_SHA256" in out, out
    rc, out = s_client(tserver.tls_port, "-tls1_2", "-servername", "b.test")
    assert "ECDHE-RSA-" in out and "GCM" in out, out


def test_alpn_answers_http11(tserver, pki):
    """h2 is preferred where offered (issue 20, tests/test_h2.py); a client
    offering http/1.1 alone gets it, and HTTP/1.1."""
    rc, out = s_client(tserver.tls_port, "-alpn", "h2,http/1.1")
    assert "ALPN protocol: h2" in out, out
    rc, out = s_client(tserver.tls_port, "-alpn", "http/1.1")
    assert "ALPN protocol: http/1.1" in out, out
    ctx = client_ctx(pki)
    ctx.set_alpn_protocols(["http/1.1"])
    with tls_conn(tserver.tls_port, pki, ctx=ctx) as c:
        assert c.sock.selected_alpn_protocol() == "http/1.1"
        assert c.exchange("GET", "/index.html").status == 200


# -- what a TLS port does with other bytes --------------------------------------------


def _read_to_eof(sock):
    got = b""
    while True:
        d = sock.recv(4096)
        if not d:
            return got
        got += d


def test_plain_http_on_the_tls_port_gets_a_plain_400(tserver):
    with socket.create_connection(("127.0.0.1", tserver.tls_port), timeout=10) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        got = _read_to_eof(s)
    assert got.startswith(b"HTTP/1.1 400 Bad Request\r\n"), got
    assert b"HTTPS" in got


def test_garbage_closes_and_the_worker_serves_on(tserver, pki):
    # (Random bytes start with a non-letter: a first byte 'A'..'Z' reads as
    # plain HTTP, which gets its own 400.)
    for junk in (b"\x00" * 100, b"\x80" + os.urandom(3000),
                 b"\x16\x03\x01\x00\x05hello" + os.urandom(500)):
        with socket.create_connection(("127.0.0.1", tserver.tls_port), timeout=10) as s:
            try:
                s.sendall(junk)
                s.shutdown(socket.SHUT_WR)
            except (BrokenPipeError, ConnectionResetError):
                pass
            got = b""
            try:
                while True:
                    d = s.recv(4096)
                    if not d:
                        break
                    got += d
            except ConnectionResetError:
                pass
            assert not got.startswith(b"HTTP/"), got
    with tls_conn(tserver.tls_port, pki) as c:
        assert c.exchange("GET", "/index.html").status == 200
    # stderr is read by a thread: wait for the line rather than race it.
    assert tserver.err.wait_for(lambda t: "TLS handshake with" in t, 5), tserver.stderr_text()


def test_failed_handshakes_are_logged_at_most_once_a_second(pith, pki):
    s = pith(*tls_args(pki))
    t0 = time.monotonic()
    for _ in range(30):
        with plain_socket(s.tls_port) as c:
            c.sendall(b"\x16\x03\x01\x00\x05hello")
            try:
                c.recv(100)
            except ConnectionResetError:
                pass
    elapsed = time.monotonic() - t0
    # Every one of them is counted, whether its line was written or not.
    deadline = time.monotonic() + 5
    while True:
        lines = [l for l in s.stderr_text().splitlines() if "TLS handshake with" in l]
        if lines or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert 1 <= len(lines) <= 2 + int(elapsed), (elapsed, lines)
    # A later failure says how many were not logged.
    deadline = time.monotonic() + 5
    while "not logged" not in s.stderr_text():
        assert time.monotonic() < deadline, s.stderr_text()
        with plain_socket(s.tls_port) as c:
            c.sendall(b"\x16\x03\x01\x00\x05hello")
            try:
                c.recv(100)
            except ConnectionResetError:
                pass
        time.sleep(0.2)


def client_hello():
    """The bytes of a real ClientHello, from Python's ssl with memory BIOs."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        obj.do_handshake()
    return out.read()


def test_byte_a_second_handshake_is_cut_and_others_are_served(pith, pki):
    s = pith(*tls_args(pki, "--timeout-handshake", "3"))
    hello = client_hello()
    slow = socket.create_connection(("127.0.0.1", s.tls_port), timeout=10)
    start = time.monotonic()
    closed_at = None
    served = []
    for i, b in enumerate(hello):
        if i == 2:
            # Another client, in the middle of the trickle: served at once.
            t0 = time.monotonic()
            with tls_conn(s.tls_port, pki) as c:
                assert c.exchange("GET", "/index.html").status == 200
            served.append(time.monotonic() - t0)
        try:
            slow.sendall(bytes([b]))
        except (BrokenPipeError, ConnectionResetError):
            closed_at = time.monotonic() - start
            break
        slow.settimeout(0.5)
        try:
            if slow.recv(100) == b"":
                closed_at = time.monotonic() - start
                break
        except socket.timeout:
            pass
        except ConnectionResetError:
            closed_at = time.monotonic() - start
            break
        if time.monotonic() - start > 10:
            break
    slow.close()
    assert closed_at is not None, "the trickling handshake was never cut"
    # Cut at the deadline (never early; the client notices within its
    # 0.5 s polls), and the other client did not wait for it.
    assert 2.7 <= closed_at <= 6.5, closed_at
    assert served and served[0] < 2.5, served


def _wait_closed(sock, timeout=6.0):
    """Seconds until the server closes sock (reset or FIN), or None."""
    start = time.monotonic()
    sock.settimeout(timeout)
    try:
        while sock.recv(4096):
            pass
    except socket.timeout:
        return None
    except ConnectionResetError:
        pass
    return time.monotonic() - start


def test_a_handshake_that_times_out_is_a_failed_one(pith, pki):
    """A client that starts a ClientHello and never finishes it is a failed
    handshake when --timeout-handshake cuts it: counted (the exit line,
    /metrics) and logged like the others. One that sent nothing at all is a
    probe (a port scan, a browser's spare connection): closed, not counted."""
    s = pith(*tls_args(pki, "--timeout-handshake", "1", "--status", "127.0.0.1:0"))
    sp = status_port(s)
    partial = socket.create_connection(("127.0.0.1", s.tls_port), timeout=10)
    silent = socket.create_connection(("127.0.0.1", s.tls_port), timeout=10)
    try:
        partial.sendall(client_hello()[:20])
        assert _wait_closed(partial) is not None, "the partial handshake was never cut"
        assert _wait_closed(silent) is not None, "the silent connection was never cut"
    finally:
        partial.close()
        silent.close()
    failed = 'pith_tls_handshakes_total{result="failed"}'
    timeouts = 'pith_connections_closed_total{reason="timeout"}'
    m = wait_metric(sp, None, lambda m: m.get(timeouts) == 2 and m.get(failed) == 1)
    assert m[failed] == 1 and m[timeouts] == 2, m
    assert m['pith_tls_handshakes_total{result="ok"}'] == 0, m
    # The line may reach the harness's reader after the counters are seen
    # (CI's clean run read stderr a moment too early once).
    text = s.err.wait_for(lambda t: "TLS handshake with" in t, 5) or s.stderr_text()
    lines = [l for l in text.splitlines() if "TLS handshake with" in l]
    assert len(lines) == 1 and "timed out" in lines[0], lines


def test_a_thousand_handshakes_leave_the_fd_count_where_it_was(pith, pki):
    s = pith(*tls_args(pki))
    worker = s.worker()
    with tls_conn(s.tls_port, pki) as c:  # warm: the cache, the log, the TLS state
        assert c.exchange("GET", "/index.html").status == 200
    before = settled_fd_count(worker)
    ctx = client_ctx(pki)
    n = 1000
    for i in range(n):
        with socket.create_connection(("127.0.0.1", s.tls_port), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost") as t:
                if i % 10 == 0:
                    t.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n")
                    assert t.recv(100).startswith(b"HTTP/1.1 200")
    # A socket the client reset is gone from /proc/net/tcp before the worker
    # has read the reset and closed it: poll for the count, to a deadline.
    deadline = time.monotonic() + 5
    while settled_fd_count(worker) != before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert settled_fd_count(worker) == before
    assert fd_count(worker) == before
    # The worker's exit summary counts them, by data path (the fallback to
    # userspace TLS is counted per connection).
    s.signal(signal.SIGTERM)
    assert s.wait_exit(15) == 0
    summary = re.compile(r"TLS: handshakes=(\d+) failed=(\d+) plain_http=(\d+) "
                         r"kernel_tls=(\d+) userspace_tls=(\d+)")
    deadline = time.monotonic() + 5  # stderr is read by a thread: wait for the line
    while not summary.search(s.stderr_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    m = summary.search(s.stderr_text())
    assert m, s.stderr_text()
    handshakes, failed, plain, ktls, user = map(int, m.groups())
    assert handshakes == n + 1 and failed == 0 and plain == 0
    assert ktls + user == handshakes
    if "userspace TLS: " in s.start_line:
        assert ktls == 0


def test_idle_tls_connections_are_small(pith, pki):
    """Memory per idle TLS connection (after a handshake and one request):
    the private memory the worker gained, divided by the connections."""
    s = pith(*tls_args(pki, "--timeout-keepalive", "60", "--max-conns", "2000"))
    worker = s.worker()

    def private_kib(pid):
        with open("/proc/%d/smaps_rollup" % pid) as f:
            return sum(int(l.split()[1]) for l in f
                       if l.startswith(("Private_Dirty:", "Private_Clean:")))

    ctx = client_ctx(pki)
    warm = []
    for _ in range(20):
        c = tls_conn(s.tls_port, pki, ctx=ctx)
        assert c.exchange("GET", "/index.html").status == 200
        warm.append(c)
    before = private_kib(worker)
    n = 400
    held = []
    try:
        for _ in range(n):
            c = tls_conn(s.tls_port, pki, ctx=ctx)
            assert c.exchange("GET", "/index.html").status == 200
            held.append(c)
        per_conn = (private_kib(worker) - before) / n
    finally:
        for c in held + warm:
            c.close()
    print("memory per idle TLS connection: %.1f KiB" % per_conn)
    if not ASAN:
        assert per_conn <= 40, per_conn


def test_plain_http_on_the_tls_port_ends_with_a_lingering_close(tserver):
    # After the 400 the server shuts its side and keeps reading (nginx's
    # lingering close): a client still sending (a body, pipelined requests)
    # gets no reset, which on a real network could destroy the 400 before
    # it is read. A plain close would answer the later bytes with a reset.
    with socket.create_connection(("127.0.0.1", tserver.tls_port), timeout=10) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        got = _read_to_eof(s)
        assert got.startswith(b"HTTP/1.1 400 Bad Request\r\n"), got
        for _ in range(5):  # a reset shows on the send after the one it answers
            s.sendall(b"X" * 1000)
            time.sleep(0.05)

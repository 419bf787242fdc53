# SPDX-License-Identifier: MIT
"""--proxy-protocol on the HTTPS port (issue 19, defect 4): a load balancer
sends the PROXY header in clear before the ClientHello, and pith reads it
there, before the handshake, by the plain port's rules: from a trusted
peer it names the client; from an untrusted peer, or malformed, the
connection closes without a byte; split across reads it is waited for
under the header timeout, whose end is a silent close; a client that
reached the port directly (no header) gets its handshake and a 400, as on
the plain port. pith used to look for the header in the decrypted stream,
so v1 got a plain-text 400 and v2 was logged as a failed handshake.
HAProxy in front, passing TLS through (mode tcp) and making TLS itself
(`ssl verify none`), both with send-proxy-v2."""

import shutil
import socket
import ssl
import subprocess
import time

import pytest

import conftest
import tlsutil
from conftest import free_port
from opsnet_util import json_lines, v1, v2

GET = b"GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n"


def proxied_tls(pith, tmp_path, *extra, trusted="127.0.0.0/8"):
    log = tmp_path / "access.log"
    pki = conftest.tls_pki()
    s = pith("--proxy-protocol", "--trusted-proxy", trusted, "--log", str(log), "--log-format",
             "json", *tlsutil.tls_args(pki, pairs=("ecdsa",)), *extra)
    s.pki = pki
    return s, log


def tls_after(s, header, chunks=None):
    """A TCP connection to the TLS port that sends header (in chunks, with a
    pause between them, when given) in clear, then speaks TLS."""
    raw = socket.create_connection(("127.0.0.1", s.tls_port), timeout=10)
    for part in chunks or [header]:
        raw.sendall(part)
        if chunks:
            time.sleep(0.15)
    return tlsutil.client_ctx(s.pki).wrap_socket(raw, server_hostname="localhost")


def read_answer(t):
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = t.recv(65536)
        assert chunk, "closed before an answer: %r" % got
        got += chunk
    head, body = got.split(b"\r\n\r\n", 1)
    length = int([l.split(b":")[1] for l in head.split(b"\r\n")
                  if l.lower().startswith(b"content-length:")][0])
    while len(body) < length:
        body += t.recv(65536)
    return head, body


def closed_silently(raw, timeout=5.0):
    """True when the server closes the TCP connection without a byte."""
    raw.settimeout(timeout)
    try:
        return raw.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


HEADERS = [
    (v1("203.0.113.7"), "203.0.113.7"),
    (v1("2001:db8::7"), "2001:db8::7"),
    (v2("198.51.100.9"), "198.51.100.9"),
    (v2("2001:db8::9"), "2001:db8::9"),
]


def test_header_before_the_client_hello_names_the_client(pith, tmp_path):
    """v1 and v2, IPv4 and IPv6, before the ClientHello: the access log names
    the client, for the request and the keep-alive one after it."""
    s, log = proxied_tls(pith, tmp_path)
    for header, _ in HEADERS:
        t = tls_after(s, header)
        for _ in range(2):
            t.sendall(GET)
            head, _ = read_answer(t)
            assert head.startswith(b"HTTP/1.1 200 OK"), head
        t.close()
    lines = json_lines(log, 2 * len(HEADERS))
    assert [l["remote_addr"] for l in lines] == [c for _, c in HEADERS for _ in (1, 2)], lines


def test_header_split_across_reads_before_the_handshake(pith, tmp_path):
    s, log = proxied_tls(pith, tmp_path)
    h = v2("198.51.100.77")
    t = tls_after(s, h, chunks=[h[:5], h[5:14], h[14:20], h[20:]])
    t.sendall(GET)
    assert read_answer(t)[0].startswith(b"HTTP/1.1 200 OK")
    t.close()
    h = v1("203.0.113.70")
    t = tls_after(s, h, chunks=[h[:9], h[9:-1], h[-1:]])
    t.sendall(GET)
    assert read_answer(t)[0].startswith(b"HTTP/1.1 200 OK")
    t.close()
    assert [l["remote_addr"] for l in json_lines(log, 2)] == ["198.51.100.77", "203.0.113.70"]


@pytest.mark.parametrize("bad", [
    b"PROXY TCP4 203.0.113.7 192.0.2.1 01 80\r\n",
    b"\r\n\r\n\x00\r\nQUIT\n\x21\x11\x00\x0b" + b"\x00" * 11,
])
def test_malformed_header_closes_without_a_byte(pith, tmp_path, bad):
    s, _ = proxied_tls(pith, tmp_path)
    raw = socket.create_connection(("127.0.0.1", s.tls_port), timeout=10)
    raw.sendall(bad)
    assert closed_silently(raw)
    raw.close()
    t = tls_after(s, v1("203.0.113.9"))  # served at once after it
    t.sendall(GET)
    assert read_answer(t)[0].startswith(b"HTTP/1.1 200 OK")
    t.close()


def test_untrusted_peers_header_closes(pith, tmp_path):
    s, log = proxied_tls(pith, tmp_path, trusted="10.0.0.0/8")
    for header in (v1("203.0.113.7"), v2("203.0.113.7")):
        raw = socket.create_connection(("127.0.0.1", s.tls_port), timeout=10)
        raw.sendall(header)
        assert closed_silently(raw), header
        raw.close()


def test_direct_client_without_a_header_gets_400_over_tls(pith, tmp_path):
    """A client that reached the TLS port directly: no header, so (as on
    the plain port) its request is answered 400 and the connection closes;
    the answer comes over TLS, since the client speaks TLS."""
    s, log = proxied_tls(pith, tmp_path)
    t = tlsutil.tls_conn(s.tls_port, s.pki).sock
    t.sendall(GET)
    head, _ = read_answer(t)
    assert head.startswith(b"HTTP/1.1 400 Bad Request"), head
    assert b"Connection: close" in head
    t.close()
    lines = json_lines(log, 1)
    assert lines[0]["status"] == 400 and lines[0]["remote_addr"] == "127.0.0.1", lines


def test_partial_header_times_out_silently_on_the_header_timeout(pith, tmp_path):
    """The header timeout (1 s), not the handshake's (10 s), bounds a PROXY
    header that never completes; the end is a silent close."""
    s, _ = proxied_tls(pith, tmp_path, "--timeout-header", "1")
    raw = socket.create_connection(("127.0.0.1", s.tls_port), timeout=10)
    raw.sendall(v1("203.0.113.7")[:20])
    t0 = time.monotonic()
    assert closed_silently(raw, timeout=6.0)
    assert time.monotonic() - t0 < 4.0
    raw.close()


HAPROXY_CFG = """
global
    maxconn 100
defaults
    timeout connect 1s
    timeout client 10s
    timeout server 10s
frontend passthrough
    mode tcp
    bind 127.0.0.1:{fe_tcp}
    default_backend tls_through
backend tls_through
    mode tcp
    source 127.0.0.2
    server s1 127.0.0.1:{tls} send-proxy-v2
frontend terminate
    mode http
    bind 127.0.0.1:{fe_http}
    default_backend tls_made
backend tls_made
    mode http
    source 127.0.0.2
    server s1 127.0.0.1:{tls} send-proxy-v2 ssl verify none sni str(localhost)
"""


@pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy is not installed")
def test_behind_haproxy_on_the_https_port(pith, tmp_path):
    """HAProxy's send-proxy-v2 to the TLS port, passing the client's TLS
    through (mode tcp) and making TLS itself (ssl verify none): both reach
    pith, and the log names the real client (127.0.0.77), never HAProxy's
    source 127.0.0.2."""
    s, log = proxied_tls(pith, tmp_path, trusted="127.0.0.2")
    fe_tcp, fe_http = free_port(), free_port()
    cfg = tmp_path / "haproxy.cfg"
    cfg.write_text(HAPROXY_CFG.format(fe_tcp=fe_tcp, fe_http=fe_http, tls=s.tls_port))
    hp = subprocess.Popen(["haproxy", "-db", "-f", str(cfg)], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    try:
        def client(port):
            deadline = time.monotonic() + 10
            while True:
                c = socket.socket()
                c.bind(("127.0.0.77", 0))
                c.settimeout(10)
                try:
                    c.connect(("127.0.0.1", port))
                    return c
                except ConnectionRefusedError:
                    c.close()
                    assert time.monotonic() < deadline, "HAProxy did not start"
                    time.sleep(0.1)
        t = tlsutil.client_ctx(s.pki).wrap_socket(client(fe_tcp), server_hostname="localhost")
        t.sendall(GET)
        assert read_answer(t)[0].startswith(b"HTTP/1.1 200 OK")
        t.close()
        p = client(fe_http)
        p.sendall(GET.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
        assert read_answer(p)[0].startswith(b"HTTP/1.1 200 OK")
        p.close()
        lines = json_lines(log, 2)
        assert [l["remote_addr"] for l in lines] == ["127.0.0.77", "127.0.0.77"], lines
    finally:
        hp.terminate()
        hp.wait(10)

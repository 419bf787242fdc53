# SPDX-License-Identifier: MIT
"""HTTP/2 (issue 20) through the live binary, over h2c (prior knowledge on
the plain port) and TLS (ALPN h2), on whichever loop PITH_IO names: entry
(ALPN, the preface, Upgrade: h2c ignored, --http2 off), clients that are not
ours (curl, nghttp, h2load), the same answers as HTTP/1.1 for the contract's
rows, RFC 9113 §8 request checks, the header-list limit, 421 for another
certificate's host, the access log and /metrics. The flood and timeout
cases are in test_h2_floods.py."""

import re
import socket
import ssl
import subprocess
import time

import pytest

import http_raw
from conftest import run_pith, tls_pki
from h2util import (CONN_SCHEME, DATA, END_STREAM, H2, PREFACE, plain_conn, PROTOCOL_ERROR, RST_STREAM, frame,
                    request_fields)
import opsnet_util
from opsnet_util import status_port, wait_lines

pytestmark = pytest.mark.full_only("HTTP/2")


@pytest.fixture(scope="module")
def srv(pith_module):
    cert, key = tls_pki()["ecdsa"]
    return pith_module("--tls-cert", cert, "--tls-key", key, "--tls-port", "0")


@pytest.fixture(params=["h2c", "tls"])
def connect(request, srv):
    """connect(**kw) opens an HTTP/2 connection of the parametrized kind."""
    def make(**kw):
        if request.param == "tls":
            return H2(srv.tls_port, tls=tls_pki()["ca"], **kw)
        return H2(srv.http_port, **kw)
    make.tls = request.param == "tls"
    make.port = srv.tls_port if make.tls else srv.http_port
    make.url = "%s://localhost:%d" % ("https" if make.tls else "http", make.port)
    return make


# ---- entry ---------------------------------------------------------------------------

def test_curl(connect, docroot):
    flag = "--http2" if connect.tls else "--http2-prior-knowledge"
    out = subprocess.run(["curl", "-sS", flag, "--cacert", tls_pki()["ca"], "-w",
                          "\n%{http_version} %{http_code}", connect.url + "/big.bin"],
                         capture_output=True, timeout=30)
    assert out.returncode == 0, out.stderr
    body, _, tail = out.stdout.rpartition(b"\n")
    assert tail == b"2 200" and body == docroot.files["big.bin"]


def test_nghttp(connect, docroot):
    got = subprocess.run(["nghttp", connect.url + "/1k.bin"], capture_output=True, timeout=30)
    assert got.returncode == 0 and got.stdout == docroot.files["1k.bin"], got.stderr


def test_h2load_smoke(connect):
    out = subprocess.run(["h2load", "-n", "2000", "-c", "4", "-m", "10", connect.url + "/1k.bin"],
                         capture_output=True, text=True, timeout=60)
    assert "2000 succeeded" in out.stdout and "2000 2xx" in out.stdout, out.stdout + out.stderr


def tls_socket(port, alpn):
    ctx = ssl.create_default_context(cafile=tls_pki()["ca"])
    if alpn is not None:
        ctx.set_alpn_protocols(alpn)
    return ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                           server_hostname="localhost")


@pytest.mark.parametrize("alpn", [["http/1.1"], None])
def test_http11_clients_get_http11(srv, alpn):
    """A client that offers only http/1.1 (or no ALPN) gets today's server."""
    s = tls_socket(srv.tls_port, alpn)
    assert s.selected_alpn_protocol() == (None if alpn is None else "http/1.1")
    with http_raw.Conn(0, sock=s) as c:
        r = c.exchange("GET", "/index.html", host="localhost")
        assert r.version == "HTTP/1.1" and r.status == 200


def test_alpn_prefers_h2(srv):
    s = tls_socket(srv.tls_port, ["http/1.1", "h2"])
    assert s.selected_alpn_protocol() == "h2"
    s.close()


def test_upgrade_h2c_is_ignored(srv):
    with plain_conn(srv.http_port) as c:
        r = c.exchange("GET", "/index.html", headers=[
            ("Connection", "Upgrade, HTTP2-Settings"), ("Upgrade", "h2c"),
            ("HTTP2-Settings", "AAMAAABkAARAAAAAAAIAAAAA")])
        assert r.version == "HTTP/1.1" and r.status == 200 and "Upgrade" not in r


def test_preface_in_pieces(srv):
    """The preface may arrive a byte at a time (HTTP/1 waits for it)."""
    s = socket.create_connection(("127.0.0.1", srv.http_port), timeout=10)
    for b in PREFACE:
        s.send(bytes([b]))
        time.sleep(0.002)
    h = H2(srv.http_port, preface=False)
    h.sock.close()
    h.sock = s
    h.send(frame(4, 0, 0))
    assert h.request("/index.html").status == 200
    h.close()


def test_http2_off(pith):
    cert, key = tls_pki()["ecdsa"]
    s = pith("--http2", "off", "--tls-cert", cert, "--tls-key", key, "--tls-port", "0")
    t = tls_socket(s.tls_port, ["h2", "http/1.1"])
    assert t.selected_alpn_protocol() == "http/1.1"
    t.close()
    with plain_conn(s.http_port) as c:
        c.send(PREFACE)
        assert c.read_response().version == "HTTP/1.1"  # an HTTP/1 error, as before


@pytest.mark.parametrize("args,why", [
    (["--http2", "maybe"], "--http2: 'maybe' is not on or off"),
    (["--http2"], "--http2"),
    (["--h2-max-streams", "0"], "--h2-max-streams: '0' is not a number from 1 to 1000"),
    (["--h2-max-streams", "1001"], "--h2-max-streams: '1001' is not a number from 1 to 1000"),
])
def test_flags_checked(tmp_path, args, why):
    p = run_pith(*args, "--port", "0", str(tmp_path))
    assert p.returncode == 2 and why in p.stderr, p


def test_help_names_the_flags():
    p = run_pith("--help")
    assert "--http2 on|off" in p.stdout and "--h2-max-streams N" in p.stdout


def test_max_streams_flag(pith):
    s = pith("--h2-max-streams", "3")
    with H2(s.http_port) as h:
        h.request("/index.html")
        assert h.server_settings.get(3) == 3


# ---- the same answers as HTTP/1.1 ----------------------------------------------------------

HOP = {"connection", "keep-alive", "transfer-encoding", "date"}
CASES = [
    ("GET", "/index.html", []),
    ("HEAD", "/index.html", []),
    ("GET", "/big.bin", []),
    ("GET", "/empty.txt", []),
    ("GET", "/nope.txt", []),
    ("GET", "/.hidden", []),
    ("GET", "/.well-known/acme-challenge/x", []),
    ("GET", "/sub", []),
    ("GET", "/sub?q=1", []),
    ("GET", "/sub/", []),
    ("GET", "/noindex/", []),
    ("GET", "/noindex/?format=json", []),
    ("HEAD", "/noindex/", []),
    ("GET", "/%2e%2e/x", []),
    ("GET", "/a%2Fb", []),
    ("GET", "/a%00b", []),
    ("GET", "/../index.html", []),
    ("GET", "/link_out", []),
    ("GET", "/fifo", []),
    ("GET", "/1k.bin", [("range", "bytes=10-19")]),
    ("GET", "/1k.bin", [("range", "bytes=0-1,100-199,1000-")]),
    ("GET", "/1k.bin", [("range", "bytes=5000-")]),
    ("HEAD", "/1k.bin", [("range", "bytes=10-19")]),
    ("GET", "/1k.bin", [("if-none-match", "*")]),
    ("GET", "/1k.bin", [("if-match", '"nope"')]),
    ("GET", "/1k.bin", [("if-modified-since", "Fri, 01 Jan 2100 00:00:00 GMT")]),
    ("GET", "/1k.bin", [("range", "bytes=0-9"), ("if-range", '"other"')]),
    ("POST", "/index.html", []),
    ("POST", "/index.html", [("content-length", "0")]),
    ("DELETE", "/index.html", []),
    ("BREW", "/index.html", []),
    ("OPTIONS", "/index.html", []),
    ("OPTIONS", "*", []),
    ("GET", "/dir%20with%20space/file.txt", [("accept-encoding", "gzip")]),
    ("GET", "/mime/f.css", []),
]


def norm(status, fields, body):
    """Status, fields (lowercased, hop-by-hop and Date left out) and body,
    with a multipart boundary (unique per response) made the same."""
    fields = [(n.lower(), v) for n, v in fields if n.lower() not in HOP]
    m = [re.search(r"boundary=(\S+)", v) for n, v in fields if n == "content-type"]
    if m and m[0]:
        b = m[0].group(1)
        fields = [(n, v.replace(b, "B")) for n, v in fields]
        body = body.replace(b.encode(), b"B")
    return status, fields, body


def via_h1(srv, method, target, extra):
    with plain_conn(srv.http_port) as c:
        r = c.exchange(method, target, headers=[(n.title(), v) for n, v in extra])
        return norm(r.status, r.fields, r.body)


@pytest.mark.parametrize("method,target,extra", CASES, ids=["%s %s %s" % (m, t, e)
                                                            for m, t, e in CASES])
def test_same_answer_as_http11(connect, srv, method, target, extra):
    h1 = via_h1(srv, method, target, extra)
    with connect() as h:
        r = h.request(target, method=method, extra=extra)
        assert r.reset is None, r
        h2 = norm(r.status, r.fields, r.body)
    assert h2 == h1


def test_many_streams_at_once(connect, docroot):
    """Streams of one connection interleave; each gets its own bytes."""
    paths = ["/big.bin", "/1k.bin", "/index.html", "/noindex/", "/sub/page.txt"] * 8
    with connect() as h:
        ids = [h.send_headers(request_fields(p)) for p in paths]
        for sid, p in zip(ids, paths):
            r = h.wait(sid, timeout=30)
            assert r.status == 200, (p, r)
            if p in ("/big.bin", "/1k.bin"):
                assert r.body == docroot.files[p[1:]]


@pytest.mark.parametrize("prio", [None, "u=0"])
def test_a_download_does_not_hold_back_small_assets(connect, docroot, prio):
    """RFC 9218: without a priority from the client, streams of one urgency
    share the connection round-robin (pith makes them incremental); a
    client's more urgent `priority` is served first as well."""
    extra = [("priority", prio)] if prio else []
    with connect() as h:
        big = h.send_headers(request_fields("/big.bin"))
        small = [h.send_headers(request_fields(p, extra=extra))
                 for p in ("/index.html", "/1k.bin", "/sub/page.txt", "/app.js")]
        for sid in small:
            r = h.wait(sid)
            assert r.status == 200
            got = len(h.responses[big].body) if big in h.responses else 0
            assert got < 1024 * 1024, "small assets waited for %d bytes of the big one" % got
        assert h.wait(big, timeout=30).body == docroot.files["big.bin"]


# ---- request checks (RFC 9113 §8.2-§8.3) -----------------------------------------------------

MALFORMED = {
    "no :path": [(":method", "GET"), (":scheme", CONN_SCHEME), (":authority", "localhost")],
    "no :method": [(":scheme", CONN_SCHEME), (":authority", "localhost"), (":path", "/")],
    "no :scheme": [(":method", "GET"), (":authority", "localhost"), (":path", "/")],
    "two :path": request_fields("/") + [(":path", "/x")],
    "pseudo after field": [(":method", "GET"), (":scheme", CONN_SCHEME), ("accept", "*/*"),
                           (":path", "/")],
    "unknown pseudo": request_fields("/") + [(":foo", "bar")],
    "uppercase name": request_fields("/", extra=[("Accept", "*/*")]),
    "connection": request_fields("/", extra=[("connection", "close")]),
    "keep-alive": request_fields("/", extra=[("keep-alive", "5")]),
    "transfer-encoding": request_fields("/", extra=[("transfer-encoding", "chunked")]),
    "te gzip": request_fields("/", extra=[("te", "gzip")]),
    "empty :path": [(":method", "GET"), (":scheme", CONN_SCHEME), (":path", "")],
    "star with GET": request_fields("*"),
    # What could smuggle a second request or field into the HTTP/1 form
    # h2_stream.c parses: refused before it is written.
    "space in :path": request_fields("/a b"),
    "version in :path": request_fields("/index.html HTTP/1.0"),
    "space in :authority": request_fields("/", authority="a b"),
    "CTL in a value": request_fields("/", extra=[("x", "a\x01b")]),
    "leading space in a value": request_fields("/", extra=[("x", " a")]),
    "bad content-length": request_fields("/", extra=[("content-length", "abc")]),
    "no authority, no host": [(":method", "GET"), (":scheme", CONN_SCHEME), (":path", "/")],
    # RFC 9113 §8.3.1: present, they must not be empty (HTTP/1.1 serves an empty Host)
    "empty :authority": request_fields("/", authority=""),
    "empty host": [(":method", "GET"), (":scheme", CONN_SCHEME), (":path", "/"), ("host", "")],
    # §8.3.1: a host naming another entity than :authority (issue 33: it was
    # served from :authority, host dropped)
    "host disagrees with :authority": request_fields("/", extra=[("host", "other.example")]),
    "host with another port": request_fields("/", extra=[("host", "localhost:1")]),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_request_is_a_stream_error(connect, case):
    with connect() as h:
        sid = h.send_headers(MALFORMED[case])
        r = h.wait(sid)
        assert r.reset == PROTOCOL_ERROR and r.status is None, r
        assert h.request("/index.html").status == 200  # the connection goes on


def test_the_other_scheme_is_malformed(connect):
    """RFC 9113 §8.3.1: :scheme names the connection's own scheme; "https"
    over h2c (or "http" over TLS) is a stream error (issue 33: it was served)."""
    with connect() as h:
        other = "http" if h.scheme == "https" else "https"
        sid = h.send_headers(request_fields("/index.html", scheme=other))
        r = h.wait(sid)
        assert r.reset == PROTOCOL_ERROR and r.status is None, r
        assert h.request("/index.html").status == 200  # the connection goes on


def test_a_host_that_agrees_with_authority_is_served(connect):
    """The same host in another case names the same entity (RFC 3986 §6.2.2.1)."""
    with connect() as h:
        r = h.request("/index.html", extra=[("host", "LOCALHOST")])
        assert r.status == 200 and r.reset is None, r


def test_te_trailers_is_fine(connect):
    with connect() as h:
        assert h.request("/index.html", extra=[("te", "trailers")]).status == 200


def test_content_length_disagreeing_with_data(connect):
    with connect() as h:
        sid = h.send_headers(request_fields("/index.html", "POST",
                                            extra=[("content-length", "10")]), end_stream=False)
        h.send(frame(DATA, END_STREAM, sid, b"abc"))
        deadline = time.monotonic() + 5
        while h.responses.get(sid) is None or h.responses[sid].reset is None:
            assert h.read_frame(max(0.01, deadline - time.monotonic())), h.responses.get(sid)
        assert h.responses[sid].reset == PROTOCOL_ERROR
        assert h.request("/index.html").status == 200


def test_post_body_is_not_buffered(connect):
    """A POST with a body gets HTTP/1's 405; the body's DATA is dropped, and
    the connection's window comes back for it (100,000 bytes, more than
    the initial 65,535, sent within the grants as a client must)."""
    size, sent = 100000, 0
    with connect() as h:
        sid = h.send_headers(request_fields("/index.html", "POST",
                                            extra=[("content-length", str(size))]),
                             end_stream=False)
        deadline = time.monotonic() + 10
        while sent < size:
            granted = 65535 + min(h.grants.get(0, 0), h.grants.get(sid, 0))
            n = min(16384, size - sent, granted - sent)
            if n == 0:
                assert h.read_frame(max(0.01, deadline - time.monotonic())), \
                    "no WINDOW_UPDATE for the dropped body: %d of %d sent" % (sent, size)
                continue
            sent += n
            h.send(frame(DATA, END_STREAM if sent == size else 0, sid, b"x" * n))
        r = h.wait(sid)
        assert r.status == 405 and r.get("allow") == "GET, HEAD, OPTIONS"
        assert h.request("/index.html").status == 200


# ---- the header list limit (16 KiB, as the HTTP/1 head) ---------------------------------------

def test_header_list_past_16k_is_431(connect):
    big = [("x-f%d" % i, "v" * 1000) for i in range(17)]  # 17 * 1036 > 16384
    with connect() as h:
        r = h.request("/index.html", extra=big)
        assert r.status == 431, r
        ok = [("x-f%d" % i, "v" * 1000) for i in range(14)]  # ~14.6 KiB with the pseudo-headers
        assert h.request("/index.html", extra=ok).status == 200
        # Past the stream slot's room for a request (32 KiB) too: still 431.
        huge = [("x-h%d" % i, "w" * 4000) for i in range(12)]
        assert h.request("/index.html", extra=huge).status == 431
        assert h.request("/index.html").status == 200


def test_settings_announce_the_limits(connect, srv):
    with connect() as h:
        h.request("/index.html")
        s = h.server_settings
        assert s.get(3) == 100 and s.get(1) == 4096 and s.get(6) == 16384
        assert s.get(2) == 0 and s.get(9) == 1


# ---- 421 for another certificate's host (sites_route) --------------------------------------------

@pytest.fixture(scope="module")
def two_certs(pith_module, tmp_path_factory):
    pki = tls_pki()
    d = tmp_path_factory.mktemp("h2sites")
    for n in ("a", "b"):
        (d / n).mkdir()
        (d / n / "who.txt").write_bytes(("site %s\n" % n).encode())
    conf = d / "pith.conf"
    conf.write_text("tls-port 0\nsite a.test {\n  root %s\n  tls-cert %s\n  tls-key %s\n}\n"
                    "site b.test {\n  root %s\n  tls-cert %s\n  tls-key %s\n}\n"
                    % (d / "a", pki["ecdsa"][0], pki["ecdsa"][1], d / "b", pki["rsa"][0],
                       pki["rsa"][1]))
    return pith_module("--config", str(conf), root=False)


def test_another_certificates_host_is_misdirected(two_certs):
    with H2(two_certs.tls_port, tls=tls_pki()["ca"], sni="a.test") as h:
        r = h.request("/who.txt", authority="b.test", scheme="https")
        assert r.status == 421 and b"421" in r.body, r
        assert h.request("/who.txt", authority="a.test", scheme="https").body == b"site a\n"
        assert h.request("/who.txt", authority="nobody.test", scheme="https").status == 200
    with H2(two_certs.tls_port, tls=tls_pki()["ca"], sni="b.test") as h:
        assert h.request("/who.txt", authority="b.test", scheme="https").body == b"site b\n"


def test_h2c_is_never_misdirected(two_certs):
    with H2(two_certs.http_port) as h:
        assert h.request("/who.txt", authority="b.test").body == b"site b\n"
        assert h.request("/who.txt", authority="a.test").body == b"site a\n"


# ---- the access log and /metrics --------------------------------------------------------------

def h2_metrics(port, key, pred, timeout=5.0):
    """opsnet_util.wait_metric over a plain connection (also under PITH_TLS=1)."""
    saved = http_raw.TLS_CONTEXT
    http_raw.TLS_CONTEXT = None
    try:
        return opsnet_util.wait_metric(port, key, pred, timeout)
    finally:
        http_raw.TLS_CONTEXT = saved


def test_log_and_metrics(pith, tmp_path):
    log = tmp_path / "access.log"
    s = pith("--log", str(log), "--status", "127.0.0.1:0")
    sp = status_port(s)
    with H2(s.http_port) as h:
        assert h.request("/index.html").status == 200
        h.send_headers(request_fields("/big.bin"))
        h.send(frame(RST_STREAM, 0, h.next_id - 2, (8).to_bytes(4, "big")))
        assert h.request("/nope").status == 404
    lines = wait_lines(str(log), 2)
    assert any(b'"GET /index.html HTTP/2.0" 200' in l for l in lines), lines
    assert any(b'"GET /nope HTTP/2.0" 404' in l for l in lines), lines
    m = h2_metrics(sp, "pith_h2_streams_total", lambda v: v >= 3)
    assert m["pith_h2_connections_total"] >= 1
    assert m['pith_h2_resets_total{by="client"}'] >= 1
    assert 'pith_h2_goaways_total{code="enhance_your_calm"}' in m


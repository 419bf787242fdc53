# SPDX-License-Identifier: MIT
"""--proxy-protocol, --trusted-proxy and --real-ip-header (issue 13, "beyond
one machine"): PROXY v1 and v2 headers from a trusted peer name the client
in the access log; a header from an untrusted peer or a malformed one closes
the connection without a byte; a missing header gets a 400 and a close; a
header split across reads is waited for, within the header timeout, which
ends in a silent close (no 408 to a load balancer); the real-IP header is
read only from a trusted peer, right-most untrusted address first, and a
malformed one is ignored."""

import subprocess
import time

import pytest

from conftest import PITH_BIN
from opsnet_util import closed_without_answer, json_lines, v1, v2, wait_lines

GET = b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n"


def proxied(pith, tmp_path, *extra, trusted="127.0.0.0/8"):
    log = tmp_path / "access.log"
    s = pith("--proxy-protocol", "--trusted-proxy", trusted, "--log", str(log),
             "--log-format", "json", *extra)
    return s, log


HEADERS = [
    (v1("203.0.113.7"), "203.0.113.7"),
    (v1("2001:db8::7"), "2001:db8::7"),
    (v2("198.51.100.9"), "198.51.100.9"),
    (v2("2001:db8::9"), "2001:db8::9"),
    (v2("::ffff:198.51.100.10"), "198.51.100.10"),
]


def test_header_names_the_client(pith, tmp_path):
    """v1 TCP4 and TCP6, v2 IPv4, IPv6 and v4-mapped IPv6 (logged as IPv4);
    the next keep-alive request on the connection is the same client."""
    s, log = proxied(pith, tmp_path)
    for header, _ in HEADERS:
        with s.conn() as c:
            c.send(header + GET)
            assert c.read_response().status == 200
            assert c.exchange("GET", "/index.html").status == 200
    lines = json_lines(log, 2 * len(HEADERS))
    want = [client for _, client in HEADERS for _ in (1, 2)]
    assert [l["remote_addr"] for l in lines] == want, lines


def test_v2_local_and_tlvs(pith, tmp_path):
    """LOCAL (a balancer's own health check) keeps the socket's address;
    TLVs after the addresses are skipped."""
    s, log = proxied(pith, tmp_path)
    local = v2("192.0.2.1", command=0)
    assert s.raw(local + GET.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))[0].status == 200
    tlv = v2("192.0.2.33", tlvs=b"\x04\x00\x03abc\x01\x00\x02h2")
    assert s.raw(tlv + GET.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))[0].status == 200
    lines = json_lines(log, 2)
    assert [l["remote_addr"] for l in lines] == ["127.0.0.1", "192.0.2.33"], lines


def test_header_split_across_reads(pith, tmp_path):
    s, log = proxied(pith, tmp_path)
    data = v2("198.51.100.77") + GET
    with s.conn() as c:
        for cut in (5, 14, 20):  # inside the signature, the head, the addresses
            c.send(data[:cut])
            data = data[cut:]
            assert c.is_open(0.2), "closed on a partial header"
        c.send(data)
        assert c.read_response().status == 200
    h1 = v1("203.0.113.70")
    with s.conn() as c:
        c.send(h1[:9])
        assert c.is_open(0.2)
        c.send(h1[9:-1])  # all but the LF
        assert c.is_open(0.2)
        c.send(h1[-1:] + GET)
        assert c.read_response().status == 200
    lines = json_lines(log, 2)
    assert [l["remote_addr"] for l in lines] == ["198.51.100.77", "203.0.113.70"]


def test_v4_mapped_peer_trusted_by_an_ipv4_prefix(pith, tmp_path):
    """On the default dual-stack listener an IPv4 client is ::ffff:127.0.0.1
    (where the machine has IPv6): 127.0.0.0/8 still matches it."""
    log = tmp_path / "access.log"
    s = pith("--proxy-protocol", "--trusted-proxy", "127.0.0.0/8", "--log", str(log), addr=None)
    with s.conn() as c:
        c.send(v2("203.0.113.44") + GET)
        assert c.read_response().status == 200
    assert wait_lines(log, 1)[0].startswith(b"203.0.113.44 - - ["), wait_lines(log, 1)


def test_pipelined_after_header(pith, tmp_path):
    s, _ = proxied(pith, tmp_path)
    with s.conn() as c:
        c.send(v1("203.0.113.8") + GET + GET)
        assert c.read_response().status == 200
        assert c.read_response().status == 200


@pytest.mark.parametrize("bad", [
    b"PROXY TCP4 203.0.113.7 192.0.2.1 01 80\r\n",      # leading zero in a port
    b"PROXY TCP4 2001:db8::1 192.0.2.1 1 80\r\n",       # IPv6 in TCP4
    b"PROXY TCP4  203.0.113.7 192.0.2.1 1 80\r\n",      # two spaces
    b"PROXY " + b"A" * 101 + b"\r\n",                   # 109 bytes, no CRLF within 107
    b"\r\n\r\n\x00\r\nQUIT\n\x22\x11\x00\x0c" + b"\x00" * 12,  # command 2
    b"\r\n\r\n\x00\r\nQUIT\n\x21\x12\x00\x0c" + b"\x00" * 12,  # a datagram
    b"\r\n\r\n\x00\r\nQUIT\n\x21\x11\x00\x0b" + b"\x00" * 11,  # IPv4 block too short
])
def test_malformed_header_closes(pith, tmp_path, bad):
    s, log = proxied(pith, tmp_path)
    with s.conn() as c:
        c.send(bad + GET)
        assert closed_without_answer(c), "a malformed header was answered"
    # Served again at once: nothing was held.
    with s.conn() as c:
        c.send(v1("203.0.113.9") + GET)
        assert c.read_response().status == 200


def test_missing_header_gets_400(pith, tmp_path):
    s, log = proxied(pith, tmp_path)
    r, rest, closed = s.raw(GET)
    assert r.status == 400 and closed and rest == b""
    lines = json_lines(log, 1)
    assert lines[0]["status"] == 400 and lines[0]["remote_addr"] == "127.0.0.1"


def test_untrusted_peer(pith, tmp_path):
    """127.0.0.1 is not in 10.0.0.0/8: its header closes, its plain
    request gets a 400, and nothing it claims is logged."""
    s, log = proxied(pith, tmp_path, trusted="10.0.0.0/8")
    for header in (v1("203.0.113.7"), v2("203.0.113.7"), b"PROXY "):
        with s.conn() as c:
            c.send(header + GET)
            assert closed_without_answer(c), header
    r, _, closed = s.raw(GET)
    assert r.status == 400 and closed
    lines = json_lines(log, 1)
    assert len(lines) == 1 and lines[0]["remote_addr"] == "127.0.0.1", lines


def test_partial_header_times_out_silently(pith, tmp_path):
    s, _ = proxied(pith, tmp_path, "--timeout-header", "1")
    with s.conn() as c:
        c.send(v1("203.0.113.7")[:20])
        t0 = time.monotonic()
        assert closed_without_answer(c, timeout=5.0), "no 408 for a partial PROXY header"
        assert time.monotonic() - t0 < 4.0
    with s.conn() as c:  # trickling does not extend it: absolute from the accept
        t0 = time.monotonic()
        for b in b"PROXY TCP4 203.0.113":
            if not c.is_open(0.1) or not c.send(bytes([b])):
                break
        assert closed_without_answer(c, timeout=5.0)
        assert time.monotonic() - t0 < 4.0


def test_status_counts_decisions(pith, tmp_path):
    from opsnet_util import status_port, wait_metric
    s, _ = proxied(pith, tmp_path, "--status", "127.0.0.1:0")
    sp = status_port(s)
    with s.conn() as c:
        c.send(v1("203.0.113.7") + GET)
        assert c.read_response().status == 200
    with s.conn() as c:
        c.send(b"PROXY TCP9\r\n")
        assert closed_without_answer(c)
    assert s.raw(GET)[0].status == 400
    want = {'pith_client_address_total{decision="proxy_missing"}': 1,
            'pith_client_address_total{decision="proxy_accepted"}': 1,
            'pith_client_address_total{decision="proxy_malformed"}': 1,
            'pith_connections_closed_total{reason="proxy"}': 1}
    m = wait_metric(sp, None, lambda m: all(m.get(k) == v for k, v in want.items()))
    assert m['pith_client_address_total{decision="proxy_missing"}'] == 1
    assert m['pith_client_address_total{decision="proxy_accepted"}'] == 1
    assert m['pith_client_address_total{decision="proxy_malformed"}'] == 1
    assert m['pith_connections_closed_total{reason="proxy"}'] == 1


# -- --real-ip-header ---------------------------------------------------------------

def test_real_ip_header(pith, tmp_path):
    log = tmp_path / "access.log"
    s = pith("--real-ip-header", "X-Forwarded-For", "--trusted-proxy", "127.0.0.1",
             "--trusted-proxy", "10.0.0.0/8", "--log", str(log))
    cases = [
        ("198.51.100.1, 203.0.113.7, 10.1.2.3", "203.0.113.7"),  # right-most untrusted
        ("garbage, 203.0.113.8", "203.0.113.8"),                 # left of it: not read
        ("203.0.113.7, 10.0.0.1:80", "127.0.0.1"),               # a port: ignored
        ("203.0.113.7,", "127.0.0.1"),                           # an empty element
        ("[2001:db8::1]", "127.0.0.1"),                          # brackets
        ("10.0.0.5", "10.0.0.5"),                                # all trusted: left-most
        ("2001:db8::42", "2001:db8::42"),
    ]
    for value, _ in cases:
        r = s.get("/index.html", headers=[("X-Forwarded-For", value)])
        assert r.status == 200
    # Two field lines form one list, the later one nearer.
    r = s.get("/index.html", headers=[("X-Forwarded-For", "203.0.113.50"),
                                      ("X-Forwarded-For", "10.9.9.9")])
    lines = wait_lines(log, len(cases) + 1)
    got = [l.split(b" ")[0].decode() for l in lines]
    assert got == [want for _, want in cases] + ["203.0.113.50"], got


def test_real_ip_header_from_untrusted_peer_ignored(pith, tmp_path):
    log = tmp_path / "access.log"
    s = pith("--real-ip-header", "X-Forwarded-For", "--trusted-proxy", "10.0.0.0/8",
             "--log", str(log))
    s.get("/index.html", headers=[("X-Forwarded-For", "203.0.113.7")])
    assert wait_lines(log, 1)[0].startswith(b"127.0.0.1 - - ["), wait_lines(log, 1)


def test_proxy_then_real_ip_chain(pith, tmp_path):
    """CDN -> balancer -> pith: the PROXY header names the CDN's edge (a
    trusted proxy), whose X-Forwarded-For names the client."""
    log = tmp_path / "access.log"
    s = pith("--proxy-protocol", "--trusted-proxy", "127.0.0.1", "--trusted-proxy",
             "192.0.2.0/24", "--real-ip-header", "X-Forwarded-For", "--log", str(log))
    with s.conn() as c:
        c.send(v1("192.0.2.10") + b"GET /index.html HTTP/1.1\r\nHost: x\r\n"
               b"X-Forwarded-For: 203.0.113.99\r\n\r\n")
        assert c.read_response().status == 200
    with s.conn() as c:  # an untrusted client's own header proves nothing
        c.send(v1("198.51.100.3") + b"GET /index.html HTTP/1.1\r\nHost: x\r\n"
               b"X-Forwarded-For: 203.0.113.99\r\n\r\n")
        assert c.read_response().status == 200
    got = [l.split(b" ")[0] for l in wait_lines(log, 2)]
    assert got == [b"203.0.113.99", b"198.51.100.3"], got


@pytest.mark.parametrize("args,msg", [
    (["--proxy-protocol"], "--proxy-protocol needs at least one --trusted-proxy"),
    (["--real-ip-header", "X-Forwarded-For"], "--real-ip-header needs at least one"),
    (["--trusted-proxy", "10.0.0.1/8"], "has bits set past its prefix length"),
    (["--trusted-proxy", "10.0.0.0/33"], "is not an IP address or CIDR prefix"),
    (["--trusted-proxy", "example.com"], "is not an IP address or CIDR prefix"),
    (["--trusted-proxy", "::1", "--real-ip-header", "X Forwarded"], "not a header field name"),
])
def test_usage_errors(args, msg):
    p = subprocess.run([PITH_BIN] + args + ["."], capture_output=True, text=True, timeout=10)
    assert p.returncode == 2, p
    assert msg in p.stderr and p.stderr.count("\n") == 1, p.stderr

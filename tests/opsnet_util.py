# SPDX-License-Identifier: MIT
"""Helpers for the load-balancer and observability tests (issue 13): PROXY
protocol headers built byte by byte from the spec (haproxy's
proxy-protocol.txt), the access log read to a deadline, and the --status
listener's port from pith's second start-up line."""

import ipaddress
import json
import re
import socket
import struct
import time

import http_raw

V2_SIG = b"\r\n\r\n\x00\r\nQUIT\n"
STATUS_LINE_RE = re.compile(r"status on http://(\S+):(\d+)/metrics")


def v1(src, dst=None, sport=40000, dport=80):
    fam = "TCP6" if ":" in src else "TCP4"
    dst = dst or ("2001:db8::200" if ":" in src else "192.0.2.200")
    return ("PROXY %s %s %s %d %d\r\n" % (fam, src, dst, sport, dport)).encode()


def v2(src, dst=None, sport=40000, dport=80, command=1, tlvs=b""):
    a = ipaddress.ip_address(src)
    if a.version == 4:
        d = ipaddress.ip_address(dst or "192.0.2.200")
        block = a.packed + d.packed + struct.pack("!HH", sport, dport)
        fam = 0x11
    else:
        d = ipaddress.ip_address(dst or "2001:db8::200")
        block = a.packed + d.packed + struct.pack("!HH", sport, dport)
        fam = 0x21
    block += tlvs
    return V2_SIG + bytes([0x20 | command, fam]) + struct.pack("!H", len(block)) + block


def status_port(server, timeout=5.0):
    text = server.err.wait_for(lambda t: STATUS_LINE_RE.search(t), timeout)
    assert text, "no 'status on' line:\n" + server.stderr_text()
    return int(STATUS_LINE_RE.search(text).group(2))


def status_get(port, path, method="GET", timeout=5.0):
    with http_raw.Conn(port) as c:
        c.send("%s %s HTTP/1.1\r\nHost: status\r\n\r\n" % (method, path))
        return c.read_response(method)


def metrics(port):
    """{'name{labels}': value} of a /metrics answer, checking the text format
    line by line (HELP and TYPE before the samples of each family)."""
    r = status_get(port, "/metrics")
    assert r.status == 200, r
    assert r["Content-Type"].startswith("text/plain; version=0.0.4"), r
    out, typed = {}, set()
    for line in r.body.decode("utf-8").splitlines():
        if line.startswith("# TYPE "):
            name, kind = line[7:].split(" ")
            assert kind in ("counter", "gauge"), line
            typed.add(name)
            continue
        if line.startswith("# HELP "):
            continue
        m = re.match(r'^([a-z_][a-z0-9_]*)(\{[a-z_]+="[^"\\]*"(?:,[a-z_]+="[^"\\]*")*\})? (\d+)$', line)
        assert m, "not a sample line: %r" % line
        assert m.group(1) in typed, "sample before its TYPE: %r" % line
        out[m.group(1) + (m.group(2) or "")] = int(m.group(3))
    return out


def wait_metric(port, key, pred, timeout=5.0):
    """/metrics once pred(value of key) holds (key None: pred(all)). A
    counter moves when pith ends the exchange, which may be just after the
    client has the response (io_uring reports the send later)."""
    deadline = time.monotonic() + timeout
    while True:
        m = metrics(port)
        if pred(m if key is None else m.get(key)) or time.monotonic() > deadline:
            return m
        time.sleep(0.05)


def read_lines(path):
    try:
        with open(path, "rb") as f:
            return f.read().split(b"\n")[:-1]
    except FileNotFoundError:
        return []


def wait_lines(path, n, timeout=5.0):
    deadline = time.monotonic() + timeout
    while True:
        lines = read_lines(path)
        if len(lines) >= n or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def json_lines(path, n, timeout=5.0):
    return [json.loads(l) for l in wait_lines(path, n, timeout)]


def closed_without_answer(conn, timeout=5.0):
    """True when the server closes conn without sending a byte."""
    try:
        rest = conn.wait_closed(timeout)
    except socket.timeout:
        return False
    return rest == b"" and conn.received == 0


def wait_healthy(port, timeout=5.0):
    """/healthz is 503 until a worker is up: polls until it says 200."""
    deadline = time.monotonic() + timeout
    while True:
        r = status_get(port, "/healthz")
        if r.status == 200 or time.monotonic() > deadline:
            return r
        time.sleep(0.05)

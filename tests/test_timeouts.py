# SPDX-License-Identifier: MIT
"""Timeouts: an absolute header timeout that a trickle of bytes does not
extend (slowloris), the keep-alive idle timeout, the send timeout."""

import select
import socket
import time

import pytest

import http_raw
from conftest import HUGE_SIZE

HEADER_TIMEOUT = 2
KEEPALIVE_TIMEOUT = 2
SEND_TIMEOUT = 3
SLACK = 2.0
# Deadlines never fire early (src/base/timer.c rounds them up to the tick);
# the client starts its clock a little after the server's accept.
EARLY = 0.3


@pytest.fixture(scope="module")
def tserver(pith_module):
    return pith_module("--timeout-header", str(HEADER_TIMEOUT), "--timeout-keepalive",
                       str(KEEPALIVE_TIMEOUT), "--timeout-send", str(SEND_TIMEOUT))


def _wait_event(conn, wait):
    """Waits up to `wait` s; returns 'closed', 'data' or None."""
    r, _, _ = select.select([conn.sock], [], [], wait)
    if not r:
        return None
    try:
        n = conn._fill(0.5)
    except socket.timeout:
        return None
    return "data" if n else "closed"


def _assert_408_then_closed(got, closed_after):
    """A partial head gets one 408 response, then the close, at the header
    deadline (DESIGN.md §2)."""
    r, rest = http_raw.parse_response(got)
    assert r.status == 408, r
    assert r.get("Connection", "").lower() == "close", r.head_text()
    assert rest == b"", "bytes after the 408: %r" % rest[:200]
    assert HEADER_TIMEOUT - EARLY <= closed_after <= HEADER_TIMEOUT + SLACK, closed_after


def test_slowloris_cut_and_others_served(tserver, docroot):
    payload = b"GET /index.html HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100
    slow = tserver.conn()
    t0 = time.monotonic()
    closed_after = None
    other_latency = None
    try:
        for i in range(len(payload)):
            if not slow.send(payload[i:i + 1]):
                closed_after = time.monotonic() - t0
                break
            if i == 1:
                # A second client is served at once while the slow one trickles
                # (at one second, well before the slow head's deadline).
                t1 = time.monotonic()
                r = tserver.get("/index.html")
                other_latency = time.monotonic() - t1
                assert r.status == 200 and r.body == docroot.files["index.html"]
            ev = _wait_event(slow, 1.0)
            while ev == "data":
                ev = _wait_event(slow, 1.0)
            if ev == "closed" or slow.eof:
                closed_after = time.monotonic() - t0
                break
            if time.monotonic() - t0 > HEADER_TIMEOUT + 8:
                break
    finally:
        got = slow.buf
        slow.close()
    assert other_latency is not None and other_latency < 0.3, other_latency
    assert closed_after is not None, "slow client still connected after %.0f s" % (
        time.monotonic() - t0)
    _assert_408_then_closed(got, closed_after)


def test_silent_connection_closed(tserver):
    # Nothing sent: closed without a word at the header deadline (counted
    # from the accept).
    with tserver.conn() as c:
        t0 = time.monotonic()
        rest = c.wait_closed(max(HEADER_TIMEOUT, KEEPALIVE_TIMEOUT) + SLACK + 1)
        elapsed = time.monotonic() - t0
        assert rest == b"", "a silent connection got %r" % rest[:100]
        assert HEADER_TIMEOUT - EARLY <= elapsed <= HEADER_TIMEOUT + SLACK, elapsed


def test_partial_head_closed(tserver):
    with tserver.conn() as c:
        c.send(b"GET /index.html HTTP/1.1\r\nHost: x\r\n")
        t0 = time.monotonic()
        rest = c.wait_closed(HEADER_TIMEOUT + SLACK + 1)
        _assert_408_then_closed(rest, time.monotonic() - t0)


def test_keepalive_idle_closed(tserver):
    with tserver.conn() as c:
        assert c.exchange("GET", "/index.html").status == 200
        t0 = time.monotonic()
        rest = c.wait_closed(KEEPALIVE_TIMEOUT + SLACK + 1)
        elapsed = time.monotonic() - t0
        assert rest == b""
        assert KEEPALIVE_TIMEOUT - 1.0 <= elapsed <= KEEPALIVE_TIMEOUT + SLACK, elapsed


def test_active_keepalive_connection_not_cut(tserver):
    """Requests every 0.5 s for longer than either timeout: never cut."""
    with tserver.conn() as c:
        t0 = time.monotonic()
        while time.monotonic() - t0 < max(HEADER_TIMEOUT, KEEPALIVE_TIMEOUT) + 1.5:
            assert c.exchange("GET", "/style.css").status == 200
            time.sleep(0.5)


def test_send_timeout_closes_stalled_client(tserver):
    """A client that stops reading is dropped after --timeout-send: after the
    stall it can read only what the kernel already held, not the whole file."""
    c = tserver.conn(rcvbuf=4096)
    try:
        c.request("GET", "/huge.bin")
        time.sleep(SEND_TIMEOUT + 3)
        deadline = time.monotonic() + 10
        total = 0
        while time.monotonic() < deadline:
            try:
                n = c._fill(2.0)
            except socket.timeout:
                break
            if n == 0:
                break
            total += len(c.buf)
            c.buf = b""
        assert c.eof, "connection neither closed nor finished after the stall"
        assert total < HUGE_SIZE, "the whole file arrived: the stalled client was never dropped"
    finally:
        c.close()
    # The worker still serves.
    assert tserver.get("/index.html").status == 200

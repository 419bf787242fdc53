# SPDX-License-Identifier: MIT
"""Process model (DESIGN.md §3): graceful drain on TERM/INT within --grace,
a second signal exits at once, crashed workers are replaced, --workers N."""

import os
import signal
import socket
import time

import pytest

from conftest import HUGE_SIZE, pid_alive
from http_raw import connect_error


def _start_download(s, name, rcvbuf=None, first=256 * 1024):
    c = s.conn(rcvbuf=rcvbuf, timeout=20)
    c.request("GET", "/" + name)
    while len(c.buf) < first:
        assert c._fill() > 0, "connection closed early"
    return c


def _read_rest(c, slowly=False):
    """Reads the response (already started in c.buf) to its end."""
    r_head_end = c.buf.find(b"\r\n\r\n")
    assert r_head_end > 0
    head = c.buf[:r_head_end].decode("latin-1")
    assert head.startswith("HTTP/1.1 200 ")
    length = None
    for line in head.split("\r\n")[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == "content-length":
            length = int(v.strip())
    assert length is not None
    body_have = len(c.buf) - (r_head_end + 4)
    chunks = [c.buf[r_head_end + 4:]]
    c.buf = b""
    while body_have < length:
        n = c._fill(15)
        if n == 0:
            break
        body_have += n
        chunks.append(c.buf)
        c.buf = b""
        if slowly:
            time.sleep(0.02)
    return b"".join(chunks), length


def _wait_refused(port, timeout=3.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = connect_error(port)
        if last == "ECONNREFUSED":
            return last
        time.sleep(0.05)
    return last


@pytest.mark.parametrize("name", ["big.bin", "huge.bin"])
def test_sigterm_drains_slow_download(pith, docroot, name):
    grace = 8
    s = pith("--grace", str(grace))
    c = _start_download(s, name, first=128 * 1024)
    t0 = time.monotonic()
    s.signal(signal.SIGTERM)
    # New connections are refused while the download is still going on.
    assert _wait_refused(s.port) == "ECONNREFUSED", "new connections still accepted after SIGTERM"
    if name == "huge.bin":
        assert pid_alive(s.pid), "master exited with a response in flight"
    body, length = _read_rest(c, slowly=(name == "big.bin"))
    c.close()
    assert length == len(body), "download cut at %d of %d bytes" % (len(body), length)
    if name == "huge.bin":
        assert length == HUGE_SIZE and body.count(0) == HUGE_SIZE
    else:
        assert body == docroot.files[name]
    rc = s.wait_exit(max(0.5, grace + 2 - (time.monotonic() - t0)))
    assert rc == 0, "exit status %r" % rc


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_idle_server_exits_0(pith, sig):
    s = pith("--grace", "10")
    assert s.get("/index.html").status == 200
    # An idle keep-alive connection is not a response in flight.
    with s.conn() as idle:
        assert idle.exchange("GET", "/index.html").status == 200
        t0 = time.monotonic()
        s.signal(sig)
        rc = s.wait_exit(5)
        assert rc == 0, "exit status %r after %.1f s" % (rc, time.monotonic() - t0)
        assert idle.wait_closed(2) == b""


def test_second_sigterm_exits_at_once(pith):
    s = pith("--grace", "30")
    workers = s.workers()
    c = _start_download(s, "huge.bin", rcvbuf=4096, first=64 * 1024)
    try:
        s.signal(signal.SIGTERM)
        time.sleep(1.0)
        assert pid_alive(s.pid), "master exited at once with a response in flight (no drain)"
        t0 = time.monotonic()
        s.signal(signal.SIGTERM)
        rc = s.wait_exit(3)
        assert rc is not None, "second SIGTERM did not stop the server"
        assert time.monotonic() - t0 < 3
        deadline = time.monotonic() + 3
        while any(pid_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(pid_alive(w) for w in workers), "workers survived the second SIGTERM"
    finally:
        c.close()


def test_grace_expires(pith):
    grace = 2
    s = pith("--grace", str(grace))
    c = _start_download(s, "huge.bin", rcvbuf=4096, first=64 * 1024)
    try:
        t0 = time.monotonic()
        s.signal(signal.SIGTERM)
        rc = s.wait_exit(grace + 3)
        assert rc is not None, "server still running %.0f s after SIGTERM with --grace %d" % (
            time.monotonic() - t0, grace)
        assert time.monotonic() - t0 >= grace - 1.0, "did not wait for the response in flight"
    finally:
        c.close()


@pytest.mark.parametrize("sig", [signal.SIGSEGV, signal.SIGKILL])
def test_crashed_worker_replaced(pith, docroot, sig):
    asan = os.environ.get("ASAN_OPTIONS", "")
    s = pith(env={"ASAN_OPTIONS": (asan + ":" if asan else "") + "handle_segv=0"},
             allow_sanitizer="SEGV")
    old = s.worker()
    assert s.get("/index.html").status == 200
    before = len(s.stderr_text())
    os.kill(old, sig)
    new = s.wait_workers(1, timeout=5, exclude=(old,))
    assert new and old not in new, "no new worker after the old one died"
    assert pid_alive(s.pid)
    # Requests succeed again (retry while the new worker starts listening).
    deadline = time.monotonic() + 5
    while True:
        try:
            r = s.get("/index.html")
            break
        except (ConnectionError, socket.timeout, AssertionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    assert r.status == 200 and r.body == docroot.files["index.html"]
    # The master says so on stderr.
    text = s.err.wait_for(lambda t: len(t) > before, 3)
    assert text is not None, "the master logged nothing about the dead worker"
    said = text[before:]
    assert str(old) in said or "signal" in said.lower(), said


def test_two_workers(pith, docroot):
    s = pith(workers=2)
    w = s.wait_workers(2)
    assert len(w) == 2, w
    assert "(2 workers," in s.start_line
    for _ in range(20):
        r = s.get("/index.html")
        assert r.status == 200 and r.body == docroot.files["index.html"]


def test_one_worker_start_line(pith):
    s = pith()
    assert "(1 worker," in s.start_line
    assert len(s.workers()) == 1

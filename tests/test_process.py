# SPDX-License-Identifier: MIT
"""Process model (DESIGN.md §3): graceful drain on TERM/INT within --grace,
a second signal exits at once, crashed workers are replaced (no connection
lost meanwhile, and the master says so), --workers N (every worker serves)."""

import os
import re
import signal
import time

import pytest

from conftest import HUGE_SIZE, pid_alive, port_listeners, tcp_conns
from http_raw import connect_error


def _start_download(s, name, rcvbuf=None, first=256 * 1024):
    c = s.conn(rcvbuf=rcvbuf, timeout=20)
    c.request("GET", "/" + name)
    while len(c.buf) < first:
        assert c._fill() > 0, "connection closed early"
    return c


def _read_rest(c):
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
    # A 4 KiB receive buffer keeps the response in flight: with the default
    # one, the kernel's buffers hold all of big.bin (3 MiB) and a server
    # that exits at once on SIGTERM would pass.
    c = _start_download(s, name, rcvbuf=4096, first=128 * 1024)
    t0 = time.monotonic()
    s.signal(signal.SIGTERM)
    # New connections are refused while the download is still going on.
    assert _wait_refused(s.port) == "ECONNREFUSED", "new connections still accepted after SIGTERM"
    assert pid_alive(s.pid), "master exited with a response in flight"
    body, length = _read_rest(c)
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


def _get_or_explain(s, target):
    """s.get(target); a request that fails says who listens on the port
    (the master and its worker, and no one else, should) and what the
    master logged."""
    try:
        return s.get(target)
    except OSError as e:
        pytest.fail("GET %s failed (%r); processes listening on port %d: %s (master %d, "
                    "workers %s)\nstderr:\n%s" % (target, e, s.port, port_listeners(s.port), s.pid,
                                                   s.workers(), s.stderr_text()))


@pytest.mark.parametrize("sig", [signal.SIGSEGV, signal.SIGKILL])
def test_crashed_worker_replaced(pith, docroot, sig):
    asan = os.environ.get("ASAN_OPTIONS", "")
    s = pith(env={"ASAN_OPTIONS": (asan + ":" if asan else "") + "handle_segv=0"},
             allow_sanitizer="SEGV", allow_worker_crash=True)  # killed on purpose
    old = s.worker()
    assert s.get("/index.html").status == 200
    before = len(s.stderr_text())
    os.kill(old, sig)
    deadline = time.monotonic() + 5
    while pid_alive(old):
        assert time.monotonic() < deadline, "worker %d outlived signal %d" % (old, sig)
        time.sleep(0.01)
    # The master keeps the listener open: a connection made while no worker
    # runs waits in its queue and the new worker answers it. Nothing may be
    # lost, so there is no retry here.
    r = _get_or_explain(s, "/index.html")
    assert r.status == 200 and r.body == docroot.files["index.html"]
    new = s.wait_workers(1, timeout=5, exclude=(old,))
    assert new and old not in new, "no new worker after the old one died"
    assert pid_alive(s.pid)
    r = _get_or_explain(s, "/index.html")
    assert r.status == 200 and r.body == docroot.files["index.html"]
    # The master says which worker died and how.
    said = re.compile(r"worker 0 \(pid %d\) was killed by signal %d\b" % (old, sig))
    text = s.err.wait_for(lambda t: said.search(t[before:]), 3)
    assert text is not None, "the master did not log the death: %r" % s.stderr_text()[before:]


def test_two_workers(pith, docroot):
    s = pith(workers=2)
    w = s.wait_workers(2)
    assert len(w) == 2, w
    assert "(2 workers," in s.start_line
    # 32 connections held open: the kernel spreads them over the workers'
    # SO_REUSEPORT listeners by a hash of the client port, so each worker
    # gets some (all on one worker: odds of 2^-31). /proc tells which
    # worker holds the server side of each connection that was answered.
    conns = [s.conn() for _ in range(32)]
    try:
        for c in conns:
            r = c.exchange("GET", "/index.html")
            assert r.status == 200 and r.body == docroot.files["index.html"]
        ours = {c.sock.getsockname()[1] for c in conns}
        held = {pid: {remote for local, remote in tcp_conns(pid) if local == s.port} & ours
                for pid in w}
    finally:
        for c in conns:
            c.close()
    for pid in w:
        assert held[pid], "worker %d served none of 32 connections: %s" % (pid, held)
    assert held[w[0]] | held[w[1]] == ours, "connections held by no worker: %s" % (
        ours - held[w[0]] - held[w[1]])
    assert not held[w[0]] & held[w[1]]


def test_one_worker_start_line(pith):
    s = pith()
    assert "(1 worker," in s.start_line
    assert len(s.workers()) == 1

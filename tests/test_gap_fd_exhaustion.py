# SPDX-License-Identifier: MIT
"""Running out of descriptors (DESIGN.md §4 "when the fd limit is hit the
server stops accepting until one frees, it never spins"; src/process/worker.c):
the worker's RLIMIT_NOFILE is lowered after start with prlimit(2) to one
above what it holds (a cached file's descriptor included), and a connection
uses it up. Then pith pauses accepting (the next client waits in the backlog,
unanswered, and nothing crashes), burns no CPU while paused, tells the
operator on stderr, and serves the waiting client once the connection closes
and a descriptor is free again.

Why the detour through --max-conns: io_uring reads RLIMIT_NOFILE when an
accept is prepared (io_uring/net.c io_accept_prep), so a multishot accept
armed before the prlimit keeps the old limit. Filling --max-conns and
closing again makes pith cancel and re-arm it under the new limit; with
epoll the detour changes nothing."""

import resource
import socket
import time

import pytest

from gaputil import CLK_TCK, cpu_ticks, open_fds, poll_until

FREE = 1  # descriptor numbers left free below the lowered limit
# The pause retries accept about once a second (worker.c); the waiting client
# is accepted at the first retry after a descriptor frees. Loaded machine.
RESUME_WITHIN = 4.0


def _limit_for(pid, free):
    """The smallest RLIMIT_NOFILE that leaves exactly `free` descriptor
    numbers unused below it (the kernel hands out the lowest free number and
    refuses numbers at or above the limit)."""
    used = set(open_fds(pid))
    n = 0
    while n - len([fd for fd in used if fd < n]) < free:
        n += 1
    return n


def _sockets(pid):
    return sum(1 for t in open_fds(pid).values() if t.startswith("socket:"))


def _options(s):
    """A new connection asking OPTIONS *: answered (204) without opening
    any file, so the answer needs no descriptor beyond the connection's."""
    c = s.conn()
    c.request("OPTIONS", "*")
    return c


def _answered(c, timeout):
    """The status of the answer on c, or None when nothing arrives within
    timeout seconds (the connection waits in the backlog)."""
    try:
        return c.read_response("OPTIONS", timeout=timeout).status
    except socket.timeout:
        assert c.buf == b"", "part of an answer: %r" % c.buf[:200]
        return None


def _exhaust(pith, docroot):
    """Starts pith and uses up the worker's descriptors. Returns (server,
    worker pid, the connection holding the last descriptor)."""
    s = pith("--max-conns", "2", "--cache-max-file", "0", "--timeout-keepalive", "60",
             "--timeout-header", "60")
    w = s.worker()
    # One answered request first: the worker has finished setting up (its
    # ring, its signalfd) before its descriptors are counted.
    c = _options(s)
    assert _answered(c, 5) == 204
    c.close()
    # A file whose cache entry keeps its descriptor (--cache-max-file 0),
    # opened while descriptors are plenty: opening a file takes two for an
    # instant (an O_PATH look at its type first, resolve.c).
    with s.conn() as f:
        r = f.exchange("GET", "/1k.bin")
        assert r.status == 200 and r.body == docroot.files["1k.bin"]
    assert poll_until(lambda: _sockets(w) == 1, 3.0), open_fds(w)  # the listener only
    base = len(open_fds(w))
    limit = _limit_for(w, FREE)
    resource.prlimit(w, resource.RLIMIT_NOFILE, (limit, limit))

    # The detour (see the module docstring): at --max-conns the listener
    # goes, and comes back when they close.
    detour = [_options(s) for _ in range(2)]
    for c in detour:
        assert _answered(c, 5) == 204
        c.close()
    assert poll_until(lambda: _sockets(w) == 1, 3.0), open_fds(w)
    assert len(open_fds(w)) == base, open_fds(w)

    # One connection: every number below the limit is now in use (the
    # file is answered from its cache entry, which needs no new one).
    a = s.conn()
    r = a.exchange("GET", "/1k.bin")
    assert r.status == 200 and r.body == docroot.files["1k.bin"]
    assert len([fd for fd in open_fds(w) if fd < limit]) == limit, open_fds(w)
    return s, w, a


def test_out_of_descriptors_pauses_then_resumes(pith, docroot):
    s, w, a = _exhaust(pith, docroot)
    waiting = None
    try:
        # The kernel completes the next handshake, but the worker cannot
        # take the connection: it waits unanswered in the backlog.
        waiting = _options(s)
        assert _answered(waiting, 1.5) is None, "answered beyond the descriptor limit"
        # Paused, not spinning: two seconds cost at most a few ticks (a
        # retry a second, and the once-a-second tick).
        before, t0 = cpu_ticks(w), time.monotonic()
        time.sleep(2.0)
        spent, dt = cpu_ticks(w) - before, time.monotonic() - t0
        assert spent <= 5, "worker used %d ticks (%.2f s of CPU) in %.1f s while paused" % (
            spent, spent / CLK_TCK, dt)
        assert _answered(waiting, 0.1) is None
        assert s.workers() == [w], "the worker died or was replaced"
        # The connection already accepted is still served while paused.
        assert a.exchange("OPTIONS", "*").status == 204
        # A descriptor frees: the waiting client is accepted and answered.
        a.close()
        assert _answered(waiting, RESUME_WITHIN) == 204, \
            "the waiting client was not served within %.1f s of a close" % RESUME_WITHIN
        assert waiting.exchange("OPTIONS", "*").status == 204
    finally:
        a.close()
        if waiting is not None:
            waiting.close()
    assert s.workers() == [w], "the worker died or was replaced"
    # The operator is told why clients wait.
    err = s.stderr_text()
    assert "accept4" in err and "Too many open files" in err, err


def test_resumes_when_the_descriptor_frees(pith, docroot):
    """worker.c: "it comes back when a connection closes"; DESIGN.md §4:
    "stops accepting until one frees". Not a second later."""
    s, w, a = _exhaust(pith, docroot)
    waiting = _options(s)
    try:
        assert _answered(waiting, 1.5) is None
        a.close()
        t0 = time.monotonic()
        status = _answered(waiting, RESUME_WITHIN)
        took = time.monotonic() - t0
        assert status == 204
        assert took < 0.5, "served %.2f s after the descriptor freed" % took
    finally:
        a.close()
        waiting.close()

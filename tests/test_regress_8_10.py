# SPDX-License-Identifier: MIT
"""Regression test for issue 8, defect 10:

    "Close reasons are thrown away (`conn_close` does `(void)why`, though
    docs/STYLE.md promises they are recorded). Count them per worker and make
    the counts visible, for example in the line a worker logs when it exits."

Contract (the fixed server): a worker that exits (here: drained on SIGTERM)
logs one stderr line

    worker <i> (pid <p>) closed connections: peer=<n> error=<n> done=<n> timeout=<n> shutdown=<n> ...

where more `reason=count` pairs may follow. Each connection is counted once,
under the reason it was closed for: the client closed (peer), a socket error
(error), the response said Connection: close (done), a header, keep-alive or
send timeout (timeout), the worker drained (shutdown).
"""

import re
import signal
import socket
import time

import pytest

pytestmark = pytest.mark.router_lacks("the close-reason counters")

CLOSED_RE = re.compile(r"worker (\d+) \(pid (\d+)\) closed connections: (.*)$")
PAIR_RE = re.compile(r"([a-z_]+)=(\d+)")
REQUIRED = ("peer", "error", "done", "timeout", "shutdown")


def parse_counts(text):
    """The (index, pid, {reason: count}) of every 'closed connections' line."""
    out = []
    for line in text.splitlines():
        m = CLOSED_RE.search(line)
        if m:
            pairs = PAIR_RE.findall(m.group(3))
            counts = {k: int(v) for k, v in pairs}
            assert len(counts) == len(pairs), "a reason repeated: " + line
            out.append((int(m.group(1)), int(m.group(2)), counts))
    return out


def test_close_reasons_counted_and_logged_at_exit(pith, docroot):
    s = pith("--timeout-header", "1", "--timeout-keepalive", "30")
    worker = s.worker()
    body = docroot.files["index.html"]

    # 1. peer: a request, its answer, then the client closes. Half-closing
    # and waiting for the server's close makes sure the worker has seen the
    # EOF (and closed for that reason) before the next step.
    r = request_then_peer_close(s)
    assert r.status == 200 and r.body == body

    # 2. done: the request asks for Connection: close; the server closes
    # after the response.
    c2 = s.conn()
    r = c2.exchange("GET", "/index.html", headers=[("Connection", "close")])
    assert r.status == 200 and r.get("Connection", "").lower() == "close", r
    assert c2.wait_closed(5) == b""
    c2.close()

    # 3. timeout: half a head, then nothing; the header timeout (1 s)
    # answers 408 and closes.
    c3 = s.conn()
    c3.send(b"GET /index.html HTTP/1.1\r\nHost: localhost\r\n")
    t0 = time.monotonic()
    r = c3.read_response("GET", timeout=8)
    assert r.status == 408, r
    c3.wait_closed(8)
    assert time.monotonic() - t0 < 8
    c3.close()

    # 4. shutdown: a keep-alive connection (answered, so certainly accepted)
    # that is idle when SIGTERM arrives; the drain closes it.
    c4 = s.conn()
    r = c4.exchange("GET", "/index.html")
    assert r.status == 200 and r.body == body
    assert c4.is_open(0.2)

    s.signal(signal.SIGTERM)
    assert c4.wait_closed(5) == b"", "the idle connection got bytes at shutdown"
    c4.close()
    rc = s.wait_exit(10)
    assert rc == 0, "exit status %r after SIGTERM" % rc
    s.err.join(3)
    text = s.stderr_text()

    found = parse_counts(text)
    assert len(found) == 1, "expected one 'closed connections' line from the worker:\n" + text
    index, pid, counts = found[0]
    assert (index, pid) == (0, worker), "line names worker %d pid %d, expected 0 pid %d" % (
        index, pid, worker)
    missing = [k for k in REQUIRED if k not in counts]
    assert not missing, "reasons missing from the line: %s\n%s" % (missing, text)
    got = {k: counts[k] for k in REQUIRED}
    assert got == {"peer": 1, "error": 0, "done": 1, "timeout": 1, "shutdown": 1}, text
    # Four connections, each closed once: no reason beyond these counts any.
    assert sum(counts.values()) == 4, "counts %r add up to %d, not 4 connections" % (
        counts, sum(counts.values()))


def request_then_peer_close(s, target="/index.html"):
    """One request on a fresh connection, then the client closes; returns
    once the server has closed too, so the close is counted before anything
    that follows."""
    c = s.conn()
    try:
        r = c.exchange("GET", target)
        c.sock.shutdown(socket.SHUT_WR)
        assert c.wait_closed(5) == b""
        return r
    finally:
        c.close()


def test_every_worker_logs_its_counts(pith):
    # Each worker logs its own line on exit, with its own index and pid, and
    # the peer closes of both add up to the connections made.
    s = pith(workers=2)
    pids = sorted(s.wait_workers(2))
    assert len(pids) == 2
    for _ in range(10):
        assert request_then_peer_close(s).status == 200
    s.signal(signal.SIGTERM)
    assert s.wait_exit(10) == 0
    s.err.join(3)
    text = s.stderr_text()
    found = parse_counts(text)
    assert sorted(i for i, _, _ in found) == [0, 1], text
    assert sorted(p for _, p, _ in found) == pids, text
    assert sum(c.get("peer", -1) for _, _, c in found) == 10, found
    for _, _, c in found:
        assert c.get("error") == 0 and c.get("shutdown") == 0, found
        assert sum(c.values()) == c["peer"], found

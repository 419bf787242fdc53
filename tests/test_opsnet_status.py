# SPDX-License-Identifier: MIT
"""--status ADDR:PORT (issue 13, "observability"): a separate listener,
never the public port, with /metrics in the Prometheus text format summed
over the workers (counters that survive a worker's restart) and /healthz
answering 200 while the server accepts and 503 while it drains; strict
parsing of its requests; usage errors."""

import os
import signal
import socket
import subprocess
import time

import pytest

import http_raw
from conftest import PITH_BIN, listening_ports
from opsnet_util import metrics, status_get, status_port, wait_healthy, wait_metric


def serving_workers(s):
    """The master's children that listen on the public port (the status
    process is a child too)."""
    return [p for p in s.workers() if s.port in listening_ports(p)]


def test_off_by_default(pith):
    s = pith()
    assert "status on" not in s.stderr_text()
    assert s.get("/metrics").status == 404  # the public port serves files only


def test_metrics_summed_over_workers(pith, docroot):
    s = pith("--status", "127.0.0.1:0", workers=2)
    sp = status_port(s)
    assert sp != s.port
    n = 20
    size = len(docroot.files["index.html"])
    for _ in range(n):  # new connections: the kernel spreads them over both workers
        assert s.get("/index.html").status == 200
    assert s.get("/index.html", method="HEAD").status == 200
    assert s.get("/nope").status == 404
    with s.conn() as c:
        c.send(b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n")
        assert c.read_response().status == 204
    key = 'pith_requests_total{class="2xx",method="GET"}'
    want = {key: n, 'pith_requests_total{class="2xx",method="HEAD"}': 1,
            'pith_requests_total{class="4xx",method="GET"}': 1,
            'pith_requests_total{class="2xx",method="OPTIONS"}': 1}
    m = wait_metric(sp, None, lambda m: all(m.get(k) == v for k, v in want.items()))
    assert m[key] == n
    assert m['pith_requests_total{class="2xx",method="HEAD"}'] == 1
    assert m['pith_requests_total{class="4xx",method="GET"}'] == 1
    assert m['pith_requests_total{class="2xx",method="OPTIONS"}'] == 1
    assert m["pith_sent_bytes_total"] > n * size
    assert m["pith_cache_hits_total"] >= n - 2 and m["pith_cache_misses_total"] >= 1
    assert m["pith_workers_up"] == 2
    assert m["pith_worker_restarts_total"] == 0
    assert m["pith_draining"] == 0
    assert abs(m["pith_start_time_seconds"] - time.time()) < 60
    closed = sum(v for k, v in m.items() if k.startswith("pith_connections_closed_total"))
    assert closed >= n
    # Open connections: a gauge that goes up and back down.
    conns = [s.conn() for _ in range(3)]
    try:
        for c in conns:
            assert c.exchange("GET", "/index.html").status == 200
        m = wait_metric(sp, "pith_open_connections", lambda v: v == 3)
        assert m["pith_open_connections"] == 3
    finally:
        for c in conns:
            c.close()
    assert wait_metric(sp, "pith_open_connections", lambda v: v == 0)["pith_open_connections"] == 0


def test_counters_survive_a_worker_restart(pith):
    s = pith("--status", "127.0.0.1:0", allow_worker_crash=True)
    sp = status_port(s)
    for _ in range(5):
        s.get("/index.html")
    key = 'pith_requests_total{class="2xx",method="GET"}'
    assert wait_metric(sp, key, lambda v: v == 5)[key] == 5
    s.wait_workers(2)
    [old] = serving_workers(s)
    os.kill(old, signal.SIGKILL)
    m = wait_metric(sp, "pith_worker_restarts_total", lambda v: v == 1)
    assert m["pith_worker_restarts_total"] == 1
    deadline = time.monotonic() + 5
    while s.get("/index.html").status != 200 and time.monotonic() < deadline:
        time.sleep(0.05)
    m = wait_metric(sp, key, lambda v: v == 6)
    assert m[key] == 6, "a restarted worker's counts go on from its predecessor's"
    assert m["pith_workers_up"] == 1


def test_healthz_503_while_draining(pith):
    s = pith("--status", "127.0.0.1:0", "--grace", "10")
    sp = status_port(s)
    r = wait_healthy(sp)
    assert r.status == 200 and r.body == b"ok\n"
    # A request in flight (a head not yet complete) keeps the worker draining.
    held = s.conn()
    held.send(b"GET /index.html HTTP/1.1\r\nHost: x\r\n")
    assert held.is_open(0.2)
    s.signal(signal.SIGTERM)
    deadline = time.monotonic() + 5
    while True:
        r = status_get(sp, "/healthz")
        if r.status == 503 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert r.status == 503 and r.body == b"draining\n"
    assert metrics(sp)["pith_draining"] == 1
    # The public port stops taking connections (once the worker has seen its
    # SIGTERM, just after the master's flag) while the status port answers.
    deadline = time.monotonic() + 5
    while http_raw.connect_error(s.port) is None:
        assert time.monotonic() < deadline, "the public port still accepts while draining"
        time.sleep(0.05)
    assert status_get(sp, "/healthz").status == 503
    held.send(b"\r\n")
    assert held.read_response().status == 200
    held.close()
    assert s.wait_exit(10) == 0
    assert http_raw.connect_error(sp) is not None, "the status port outlived the server"


def test_healthz_503_while_no_worker_is_up(pith):
    """A worker is replaced at once when it dies, but its replacement that
    dies young only after a backoff (1 s): meanwhile no worker accepts, and
    /healthz says so (503, "no worker up"; not "draining": nothing is
    stopping), then 200 again with the next one. Kills the mutant that
    reads "up >= 0" for "up > 0"."""
    s = pith("--status", "127.0.0.1:0", "--workers", "1", allow_worker_crash=True)
    sp = status_port(s)
    assert wait_healthy(sp).status == 200
    (first,) = serving_workers(s)
    os.kill(first, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while serving_workers(s) in ([], [first]):
        assert time.monotonic() < deadline, "no replacement for the first worker"
        time.sleep(0.02)
    assert wait_healthy(sp).status == 200
    (worker,) = serving_workers(s)
    os.kill(worker, signal.SIGKILL)
    deadline = time.monotonic() + 5
    seen = []
    while time.monotonic() < deadline:
        r = status_get(sp, "/healthz", timeout=1)
        seen.append((r.status, r.body))
        if r.status == 503:
            break
        time.sleep(0.02)
    assert seen[-1] == (503, b"no worker up\n"), seen
    assert metrics(sp)["pith_workers_up"] == 0 and metrics(sp)["pith_draining"] == 0
    r = wait_healthy(sp, timeout=10)
    assert r.status == 200 and r.body == b"ok\n", r
    assert worker not in serving_workers(s)


def test_status_requests_are_parsed_strictly(pith):
    s = pith("--status", "127.0.0.1:0")
    sp = status_port(s)
    assert wait_healthy(sp).status == 200
    assert status_get(sp, "/healthz", method="HEAD").body == b""
    assert status_get(sp, "/metrics?x=1").status == 200
    assert status_get(sp, "/").status == 404
    # The two paths exactly (a query aside): nothing that merely starts or
    # ends like them.
    for path, want in (("/metrics", 200), ("/metrics?", 200), ("/healthz?probe=1", 200),
                       ("/metricsX", 404), ("/metrics/", 404), ("/metrics.txt", 404),
                       ("/healthzz", 404), ("/healthz/", 404), ("/Healthz", 404),
                       ("//metrics", 404), ("/x/metrics", 404), ("/healthz#", 404)):
        assert status_get(sp, path).status == want, path
    r = status_get(sp, "/metrics", method="POST")
    assert r.status == 405 and r["Allow"] == "GET, HEAD"
    for bad in (b"GET /metrics HTTP/1.1\r\nHost : x\r\n\r\n",  # space before the colon
                b"GET /metrics HTTP/1.1\nHost: x\n\n",          # bare LF
                b"GET /metrics HTTP/2.0\r\n\r\n"):
        r, _, closed = http_raw.raw(sp, bad)
        assert r.status in (400, 505) and closed, bad
    # Health checkers often send no Host: answered all the same.
    r, _, _ = http_raw.raw(sp, b"GET /healthz HTTP/1.0\r\n\r\n")
    assert r.status == 200
    # A silent connection is closed at its deadline and does not block others.
    idle = http_raw.Conn(sp)
    assert status_get(sp, "/healthz").status == 200
    assert idle.wait_closed(8) == b""
    idle.close()


def test_status_survives_its_own_death(pith):
    s = pith("--status", "127.0.0.1:0", allow_worker_crash=True)
    sp = status_port(s)
    kids = s.wait_workers(2)
    assert len(kids) == 2  # a worker and the status process
    victim = [p for p in kids if p not in serving_workers(s)]
    assert len(victim) == 1 and sp in listening_ports(victim[0]), kids
    os.kill(victim[0], signal.SIGKILL)
    deadline = time.monotonic() + 5
    while True:
        try:
            if status_get(sp, "/healthz", timeout=1).status == 200:
                break
        except (OSError, AssertionError):
            pass
        assert time.monotonic() < deadline, s.stderr_text()
        time.sleep(0.1)
    assert "the status process died" in s.stderr_text()


@pytest.mark.parametrize("value,msg,code", [
    ("9100", "is not ADDR:PORT", 2),
    ("::1:9100", "is not ADDR:PORT", 2),
    ("127.0.0.1:65536", "is not ADDR:PORT", 2),
    ("localhost:9100", "is not a numeric IPv4 or IPv6 address", 2),
])
def test_usage_errors(value, msg, code, tmp_path):
    p = subprocess.run([PITH_BIN, "--port", "0", "--status", value, str(tmp_path)],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == code, p
    assert msg in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_never_the_public_port(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p = subprocess.run([PITH_BIN, "--addr", "127.0.0.1", "--port", str(port), "--status",
                        "127.0.0.1:%d" % port, str(tmp_path)],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 2 and "is the public port" in p.stderr, p
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    p = subprocess.run([PITH_BIN, "--addr", "127.0.0.1", "--port", "0", "--status",
                        "127.0.0.1:%d" % busy.getsockname()[1], str(tmp_path)],
                       capture_output=True, text=True, timeout=10)
    busy.close()
    assert p.returncode == 1 and "already in use" in p.stderr, p


def test_status_request_in_pieces_is_answered_whole(pith):
    """A request whose head arrives in two reads waits for the rest (a
    status process that answered the first piece would say 431 or 400)."""
    s = pith("--status", "127.0.0.1:0")
    sp = status_port(s)
    assert wait_healthy(sp).status == 200
    with http_raw.Conn(sp) as c:
        c.send(b"GET /healthz HTTP/1.1\r\n")
        time.sleep(0.2)
        c.send(b"Host: status\r\n\r\n")
        r = c.read_response()
    assert r.status == 200 and r.body == b"ok\n", r

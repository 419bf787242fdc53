# SPDX-License-Identifier: MIT
"""pith behind HAProxy (issue 13, "beyond one machine"): three pith
instances as backends, HAProxy sending the PROXY protocol v2 header
(send-proxy-v2) from its own source address 127.0.0.2 (the only trusted
proxy), and checking each instance's /healthz on its --status port
(`check port N`, no PROXY header on checks). h2load drives HTTP/1.1 through
HAProxy while one instance is killed (SIGKILL to its whole process group)
and later started again on the same ports.

"No request fails" is defined as: every request h2load started over the
whole run ended with a 2xx answer (h2load's "0 failed, 0 errored, 0
timeout" and no 3xx-5xx). That is stronger than "none fails after HAProxy
marks the instance down": the requests in flight to the killed instance at
the moment it dies, and new ones sent to it before the checks mark it down
(fall 2 at 200 ms), end in a reset or a refused connection between HAProxy
and pith, and HAProxy retries them on another instance (retry-on
all-retryable-errors, retries 3, option redispatch 1), which is safe here
because every request is a GET. Then the restarted instance must take
requests again, and every log line names a real client (127.0.0.1 for
h2load, 127.0.0.77 for a client bound to it), never HAProxy's 127.0.0.2."""

import os
import re
import shutil
import signal
import socket
import subprocess
import time

import pytest

import http_raw
from conftest import free_port
from opsnet_util import metrics, read_lines, status_port, wait_metric

HAPROXY_CFG = """
global
    maxconn 1000
defaults
    mode http
    timeout connect 500ms
    timeout client 10s
    timeout server 10s
    timeout check 500ms
    retries 3
    option redispatch 1
    retry-on all-retryable-errors
frontend fe
    bind 127.0.0.1:{fe}
    default_backend be
backend be
    balance roundrobin
    source 127.0.0.2
    option httpchk
    http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host status
    http-check expect status 200
    default-server send-proxy-v2 check inter 200ms fall 2 rise 2 on-marked-down shutdown-sessions
{servers}
"""


def start_instance(pith, tmp_path, i, port="0", status="127.0.0.1:0"):
    log = tmp_path / ("access%d.log" % i)
    s = pith("--proxy-protocol", "--trusted-proxy", "127.0.0.2", "--status", status, "--log",
             str(log), port=port, allow_worker_crash=True)
    return s, log


def wait_up(fe, n, timeout=10.0):
    """Waits until HAProxy answers n requests in a row with 200."""
    deadline = time.monotonic() + timeout
    ok = 0
    while ok < n:
        assert time.monotonic() < deadline, "HAProxy did not serve %d requests in a row" % n
        try:
            ok = ok + 1 if http_raw.fetch(fe, "/index.html").status == 200 else 0
        except (OSError, AssertionError):
            ok = 0
            time.sleep(0.1)


def test_three_instances_behind_haproxy(pith, tmp_path):
    haproxy, h2load = shutil.which("haproxy"), shutil.which("h2load")
    if not haproxy or not h2load:
        pytest.fail("haproxy and h2load are needed (Debian: haproxy, nghttp2-client; "
                    "scripts/deps check installs them)")
    # The instance killed and started again on its port has a port from
    # free_port() (never one the kernel gives out), so no other test's
    # server can be given it while it is down, and be joined on restart.
    inst = [start_instance(pith, tmp_path, i, port=str(free_port()) if i == 1 else "0")
            for i in range(3)]
    sports = [status_port(s) for s, _ in inst]
    fe = free_port()
    servers = "\n".join("    server p%d 127.0.0.1:%d check port %d" % (i, s.port, sports[i])
                        for i, (s, _) in enumerate(inst))
    cfg = tmp_path / "haproxy.cfg"
    cfg.write_text(HAPROXY_CFG.format(fe=fe, servers=servers))
    hap = subprocess.Popen([haproxy, "-db", "-f", str(cfg)], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_up(fe, 6)
        # A client with an address of its own, through HAProxy.
        with socket.create_connection(("127.0.0.1", fe), source_address=("127.0.0.77", 0)) as c:
            c.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert http_raw.Conn(0, sock=c).read_response().status == 200

        key = 'pith_requests_total{class="2xx",method="GET"}'
        before = metrics(sports[1]).get(key, 0)
        load = subprocess.Popen([h2load, "--h1", "-c", "4", "-D", "5", "-t", "1",
                                 "http://127.0.0.1:%d/index.html" % fe],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        victim, victim_log = inst[1]
        time.sleep(1.0)
        # The victim takes its share of the load before it dies (its
        # counters: the access log's buffer dies with it).
        served = metrics(sports[1]).get(key, 0) - before
        assert served > 0, "the victim served nothing of the load before it was killed"
        victim.stopping = True
        victim._kill_all()  # SIGKILL, master and worker: requests in flight die with it
        time.sleep(1.5)
        again, again_log = start_instance(pith, tmp_path, 11, port=str(victim.port),
                                          status="127.0.0.1:%d" % sports[1])
        out, _ = load.communicate(timeout=30)
        m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                      r"(\d+) failed, (\d+) errored, (\d+) timeout", out)
        codes = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
        assert m and codes, out
        total, started, done, ok, failed, errored, timeout = map(int, m.groups())
        assert done > 200, out
        assert failed == errored == timeout == 0 and ok == done, out
        assert codes.group(2, 3, 4) == ("0", "0", "0"), out
        # The restarted instance is back in rotation.
        deadline = time.monotonic() + 5
        while wait_metric(sports[1], key, lambda v: v and v > 0, timeout=0.5).get(key, 0) == 0:
            assert time.monotonic() < deadline, "the restarted instance gets no requests"
            http_raw.fetch(fe, "/index.html")
    finally:
        os.killpg(hap.pid, signal.SIGTERM)
        hap.wait(5)
    for s, _ in (inst[0], inst[2], (again, again_log)):
        s.stop()
    addrs = set()
    for _, log in inst + [(again, again_log)]:
        for line in read_lines(log):
            addrs.add(line.split(b" ")[0])
    assert addrs == {b"127.0.0.1", b"127.0.0.77"}, addrs

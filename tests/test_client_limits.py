# SPDX-License-Identifier: MIT
"""--max-conns-per-client (issue 22): a client's concurrent connections are
counted across all workers, IPv6 by /64; the one past the limit is answered
503 with Retry-After and closed, and counted in /metrics. The client is the
address pith logs: the socket's, the PROXY header's, or a trusted real-IP
header's, so a load balancer is never limited as one client. Clients are
made from the loopback addresses 127.0.0.2 and up, and through PROXY
headers. Both loops, and pith-tiny."""

import socket
import time

import pytest

import http_raw
from conftest import socket_inodes, tcp_sockets
from opsnet_util import metrics, status_port, v1, v2


def connect(port, src, host="127.0.0.1"):
    s = socket.socket(socket.AF_INET)
    s.settimeout(10)
    s.bind((src, 0))
    s.connect((host, port))
    return http_raw.Conn(0, sock=s)


def ask(c, host="x", headers=None):
    c.request("GET", "/index.html", host=host, headers=headers)
    return c.read_response()


def wait_counted(server, n, src_port_set, timeout=5.0):
    """Until the workers hold the n connections whose client ports are in
    src_port_set (the accepts have happened, so they are counted)."""
    deadline = time.monotonic() + timeout
    while True:
        held = workers_of(server, src_port_set)
        if sum(len(v) for v in held.values()) >= n or time.monotonic() > deadline:
            return held
        time.sleep(0.02)


def workers_of(server, ports):
    """worker pid -> the client ports among `ports` of its connections."""
    out = {}
    for w in server.workers():
        table = tcp_sockets(w)
        mine = {table[i][1] for i in socket_inodes(w) if i in table} & set(ports)
        if mine:
            out[w] = mine
    return out


def test_the_connection_past_the_limit_gets_503(pith):
    s = pith("--max-conns-per-client", "3", "--workers", "2")
    held = [connect(s.port, "127.0.0.2") for _ in range(3)]
    wait_counted(s, 3, [c.sock.getsockname()[1] for c in held])
    with connect(s.port, "127.0.0.2") as c:
        r = ask(c)
        assert r.status == 503 and r["Retry-After"] == "5" and r["Connection"] == "close", r
        assert c.wait_closed() == b""
    # Another client is served meanwhile; the held ones are too.
    with connect(s.port, "127.0.0.3") as c:
        assert ask(c).status == 200
    assert ask(held[0]).status == 200
    held.pop().close()
    deadline = time.monotonic() + 5
    while True:  # once the close reaches the worker, the count goes down
        with connect(s.port, "127.0.0.2") as c:
            status = ask(c).status
        if status == 200:
            break
        assert time.monotonic() < deadline, "a closed connection still counts"
        time.sleep(0.05)
    for c in held:
        c.close()


def test_counted_across_workers(pith):
    """Connections spread over the workers count together: with 3 held by
    a client on at least two of four workers, every further connection of
    it is refused, whichever worker (one holding none included) takes it."""
    s = pith("--max-conns-per-client", "3", "--workers", "4", "--timeout-keepalive", "60")
    # Each try is a new client: a worker may not yet have seen the close of
    # an earlier try's connections, which would still count against it.
    for attempt in range(40):
        client = "127.0.1.%d" % (attempt + 1)
        held = [connect(s.port, client) for _ in range(3)]
        spread = wait_counted(s, 3, [c.sock.getsockname()[1] for c in held])
        if len(spread) >= 2:
            break
        for c in held:
            c.close()
    else:
        pytest.fail("the kernel never spread 3 connections over 2 workers")
    empty = set(s.workers()) - set(spread)
    assert empty, "four workers, three connections: one holds none"
    # A worker holds an accepted socket a moment before it has counted it
    # (under ASan and a loaded machine, long enough for the next connection
    # to be let in): an answer on each held connection proves each counted.
    for c in held:
        assert ask(c).status == 200
    for _ in range(40):  # SO_REUSEPORT hashes the client port: all workers get some
        with connect(s.port, client) as c:
            assert ask(c).status == 503
    for c in held:
        c.close()


def test_proxy_headers_name_the_clients(pith):
    """Behind a PROXY balancer (127.0.0.1, trusted) each header's source is
    the client; the balancer's own many connections are not one client."""
    s = pith("--max-conns-per-client", "2", "--proxy-protocol", "--trusted-proxy", "127.0.0.1",
             "--status", "127.0.0.1:0")
    sp = status_port(s)

    def via(src, hdr=v1):
        c = http_raw.Conn(s.port)
        c.send(hdr(src))
        return c

    held = [via("192.0.2.7"), via("192.0.2.7")]
    for c in held:
        assert ask(c).status == 200
    with via("192.0.2.7") as c:
        assert ask(c).status == 503
    others = [via("192.0.2.%d" % i) for i in range(8, 14)]  # six clients, one balancer
    for c in others:
        assert ask(c).status == 200
    # IPv6 clients count by /64: two addresses of one /64 are one client.
    six = [via("2001:db8:1:2::a", v2), via("2001:db8:1:2:ffff::b", v2)]
    for c in six:
        assert ask(c).status == 200
    with via("2001:db8:1:2::c", v2) as c:
        assert ask(c).status == 503
    with via("2001:db8:1:3::a", v2) as c:  # the next /64
        assert ask(c).status == 200
    deadline = time.monotonic() + 5
    while metrics(sp).get("pith_client_limit_total") != 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert metrics(sp)["pith_client_limit_total"] == 2
    for c in held + others + six:
        c.close()


def test_real_ip_header_names_the_client(pith):
    """A trusted balancer's connections count for the client each request
    names, not for the balancer."""
    s = pith("--max-conns-per-client", "1", "--real-ip-header", "X-Forwarded-For",
             "--trusted-proxy", "127.0.0.0/8")
    a = http_raw.Conn(s.port)
    assert ask(a, headers={"X-Forwarded-For": "198.51.100.1"}).status == 200
    b = http_raw.Conn(s.port)
    assert ask(b, headers={"X-Forwarded-For": "198.51.100.2"}).status == 200
    with http_raw.Conn(s.port) as c:
        assert ask(c, headers={"X-Forwarded-For": "198.51.100.1"}).status == 503
    # a's next request names another client: a now counts for that one.
    assert ask(a, headers={"X-Forwarded-For": "198.51.100.3"}).status == 200
    with http_raw.Conn(s.port) as c:
        assert ask(c, headers={"X-Forwarded-For": "198.51.100.1"}).status == 200
    a.close()
    b.close()


def test_a_sites_own_limit(pith, tmp_path):
    for n in ("a", "b"):
        (tmp_path / n).mkdir()
        (tmp_path / n / "index.html").write_bytes(n.encode())
    conf = tmp_path / "pith.conf"
    conf.write_text("site a.test {\n root %s\n max-conns-per-client 1\n}\nsite b.test {\n root %s\n}\n"
                    % (tmp_path / "a", tmp_path / "b"))
    s = pith("--config", str(conf), root=False)
    first = connect(s.port, "127.0.0.4")
    assert ask(first, host="a.test").status == 200
    with connect(s.port, "127.0.0.4") as c:
        assert ask(c, host="a.test").status == 503
    with connect(s.port, "127.0.0.4") as c:
        assert ask(c, host="b.test").status == 200  # no limit of its own there
    first.close()


def test_no_limit_by_default(pith):
    s = pith()
    held = [connect(s.port, "127.0.0.5") for _ in range(20)]
    for c in held:
        assert ask(c).status == 200
    for c in held:
        c.close()


def test_usage(pith):
    from conftest import run_pith
    p = run_pith("--max-conns-per-client", "x", "--check")
    assert p.returncode == 2
    assert "--max-conns-per-client: 'x' is not a number from 0 to 1000000" in p.stderr

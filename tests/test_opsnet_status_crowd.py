# SPDX-License-Identifier: MIT
"""The --status listener under a crowd (issue 19): it holds at most 16
connections (status.c: STATUS_CONNS), each for at most 3 s. Anyone who
reaches the port could once fill all 16 with silent connections and keep
/healthz from the orchestrator for 3 s at a time, again and again. When it
is full, a new connection now takes the slot of the oldest one that has not
been answered (DESIGN.md §7): /healthz is answered at once while 16 and
more idle connections hold the listener, and those are the ones that go."""

import os
import socket
import time

import pytest

import http_raw
from opsnet_util import status_get, status_port, wait_healthy

STATUS_CONNS = 16


@pytest.mark.parametrize("idle_count,partial", [(STATUS_CONNS, False), (STATUS_CONNS + 8, False),
                                                (STATUS_CONNS + 4, True)])
def test_healthz_answered_while_idle_connections_hold_the_listener(pith, idle_count, partial):
    s = pith("--status", "127.0.0.1:0")
    sp = status_port(s)
    assert wait_healthy(sp).status == 200
    idle = []
    try:
        for _ in range(idle_count):
            c = socket.create_connection(("127.0.0.1", sp), timeout=5)
            if partial:
                c.sendall(b"GET /heal")  # a request that never ends
            idle.append(c)
        time.sleep(0.3)  # the status process has accepted what it takes
        for i in range(3):
            t0 = time.monotonic()
            r = status_get(sp, "/healthz", timeout=5)
            took = time.monotonic() - t0
            assert r.status == 200 and r.body == b"ok\n", (i, r.status)
            assert took < 1.5, "/healthz #%d took %.2f s behind %d idle connections" % (
                i, took, idle_count)
        # The ones that gave way were idle ones: the oldest are closed.
        idle[0].settimeout(2)
        try:
            assert idle[0].recv(1) == b"", "the oldest idle connection got bytes"
        except ConnectionResetError:
            pass  # closed with a reset: as good
    finally:
        for c in idle:
            c.close()


def test_an_answered_connection_is_not_the_one_that_goes(pith):
    """The crowd takes the slots of connections still waiting for their
    request first (the newest crowd connection is one, so each takes the
    one before it): a client that was answered and lingers keeps its slot
    while 40 connections arrive after it."""
    s = pith("--status", "127.0.0.1:0")
    sp = status_port(s)
    assert wait_healthy(sp).status == 200
    asker = http_raw.Conn(sp)
    asker.send(b"GET /metrics HTTP/1.1\r\n\r\n")
    r = asker.read_response("GET")  # answered: it lingers until the client closes
    assert r.status == 200 and b"pith_workers_up" in r.body
    crowd = [socket.create_connection(("127.0.0.1", sp), timeout=5) for _ in range(40)]
    try:
        time.sleep(0.3)  # the status process has accepted the crowd
        # Still lingering (its side shut, reading what the client sends until
        # the client closes), not closed to make room while idle connections
        # could give way: bytes sent now are read and dropped, where a closed
        # socket would answer them with a reset.
        asker.sock.sendall(b"x" * 100)
        time.sleep(0.3)
        err = asker.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        assert err == 0, "the answered connection was taken for the crowd (%s)" % os.strerror(err)
    finally:
        asker.close()
        for c in crowd:
            c.close()

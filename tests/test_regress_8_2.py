# SPDX-License-Identifier: MIT
"""Regression test for issue 8, defect 2:

    "io_uring: one connection can hold any number of ring buffers. A client
    that asks for a big file, never reads, and keeps sending a pipelined
    burst holds ring buffers while its response is stalled. 20 such
    connections held 505 of the 512 buffers until the send timeout, and a
    client that reads a trickle pushes that timeout out indefinitely.
    [...] Test: 100 such connections, and a new client on io_uring still
    gets its answer promptly."

Contract (DESIGN.md §4, "Resources are bounded"): no connection, and no set
of stalled connections, may take what another client needs to be served.
Here 100 clients each ask for /huge.bin with a 4 KiB receive buffer, never
read, and pipeline 96 KiB of further requests behind it; while they stall
(until --timeout-send, 30 s by default), a new client is answered at once,
and a new pipelining client that does read gets all its answers. The test
means the same on epoll (which stops reading a connection whose buffer is
full) and on io_uring (whose provided-buffer ring is shared by all
connections of a worker).
"""

import fcntl
import socket
import struct
import termios
import threading
import time

from conftest import HUGE_SIZE

NSTALLED = 100
BURST = 96 * 1024  # of pipelined requests behind each stalled response
SMALL = b"GET /1k.bin HTTP/1.1\r\nHost: s\r\n\r\n"
PROMPT = 1.0  # seconds: what "answered promptly" means here


def _queued(sock):
    """Bytes waiting in our receive queue (FIONREAD): tells that the server
    answered without reading anything."""
    return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]


def _stall(port):
    """Opens the stalled clients: each sends its huge request and the burst
    in one go (so the server receives them together), and never reads."""
    burst = SMALL * (BURST // len(SMALL) + 1)
    socks = []
    try:
        for _ in range(NSTALLED):
            s = socket.socket()
            # Before connect, so the window is small from the handshake on.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(("127.0.0.1", port))
            s.setblocking(False)
            socks.append([s, b"GET /huge.bin HTTP/1.1\r\nHost: s\r\n\r\n" + burst])
        # Non-blocking sends until all is out, or the server stops taking
        # bytes (epoll stops reading a full connection: that is fine).
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(e[1] for e in socks):
            progress = False
            for e in socks:
                if e[1]:
                    try:
                        n = e[0].send(e[1])
                        e[1] = e[1][n:]
                        progress = True
                    except BlockingIOError:
                        pass
            if not progress:
                time.sleep(0.02)
        # Every huge response has started (bytes wait in each client's queue).
        deadline = time.monotonic() + 10
        while not all(_queued(e[0]) > 0 for e in socks):
            assert time.monotonic() < deadline, "not every stalled client got its response head"
            time.sleep(0.05)
        return [e[0] for e in socks]
    except BaseException:
        for e in socks:
            e[0].close()
        raise


def _close_all(socks):
    for s in socks:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()


def test_stalled_pipeliners_do_not_starve_a_new_client(pith, docroot):
    s = pith(workers=1)
    worker = s.worker()
    stalled = _stall(s.port)
    try:
        # Let the worker take in what it will of the bursts.
        time.sleep(0.3)
        for i in range(3):
            with s.conn(timeout=35) as c:
                t0 = time.monotonic()
                r = c.exchange("GET", "/index.html", timeout=35)
                took = time.monotonic() - t0
            assert r.status == 200 and r.body == docroot.files["index.html"]
            assert took < PROMPT, "new client %d answered after %.2f s" % (i, took)
        # A new client that pipelines too, and reads: every answer, promptly.
        n = 2000  # about 68 KiB of requests, twice a connection's buffer
        with s.conn(timeout=35) as c:
            t0 = time.monotonic()
            # Sent from a thread: the server may push back until we read.
            w = threading.Thread(target=c.send, args=(SMALL * n,), daemon=True)
            w.start()
            for k in range(n):
                r = c.read_response(timeout=max(0.1, t0 + 10 - time.monotonic()))
                assert r.status == 200 and r.body == docroot.files["1k.bin"], k
            took = time.monotonic() - t0
            w.join(5)
        assert took < 10, took
        # The stalled clients are still connected (well within the send
        # timeout) and their responses still stalled: the pressure was real.
        assert all(0 < _queued(x) < HUGE_SIZE for x in stalled)
    finally:
        _close_all(stalled)
    assert s.get("/index.html").status == 200
    assert s.workers() == [worker], "the worker died (an assertion, or a crash) and was restarted"

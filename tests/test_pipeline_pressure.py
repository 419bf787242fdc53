# SPDX-License-Identifier: MIT
"""Pipelining under pressure: a client that sends far more pipelined
requests than a connection's buffer holds (and reads nothing until it has
sent them all) gets every answer, in order, with no byte lost or repeated.
Under epoll the server stops reading while its buffer is full; under
io_uring it holds a few ring buffers and pauses its multishot receive. Both
must look the same from the socket."""

import re
import socket
import threading
import time

import pytest

# Requests cycle through NFILES files of distinct sizes and bytes, so that
# answers swapped, lost or repeated anywhere in the stream show.
NFILES = 97


@pytest.fixture(scope="module")
def pserver(pith_module, tmp_path_factory):
    root = tmp_path_factory.mktemp("pipeline")
    files = {}
    for i in range(NFILES):
        name = "f%03d.txt" % i
        # 600..1560 bytes, each file's own number repeated: no two alike.
        data = (b"%03d;" % i) * (150 + 2 * i)
        (root / name).write_bytes(data)
        files[name] = data
    s = pith_module(root=str(root))
    s.files = files
    return s


def _pipeline(server, targets):
    """Sends one request per target, all at once, reading nothing until all
    are sent; returns every byte answered."""
    data = b"".join(b"GET /" + t.encode() + b" HTTP/1.1\r\nHost: p\r\n\r\n" for t in targets)
    s = socket.create_connection(("127.0.0.1", server.port), timeout=20)
    got = bytearray()

    def reader():
        while True:
            try:
                chunk = s.recv(1 << 16)
            except OSError:
                return
            if not chunk:
                return
            got.extend(chunk)

    def writer():
        try:
            s.sendall(data)
            sent.set()
        except OSError:
            pass  # the test failed and shut the socket down

    # Send everything first (in a thread: the server may push back), and
    # read only once all is sent, so the server's buffers fill up. Daemon
    # threads, and a shutdown of the socket whatever happens, so that a
    # failing test never leaves pytest waiting on a blocked sendall.
    sent = threading.Event()
    t = threading.Thread(target=writer, daemon=True)
    r = threading.Thread(target=reader, daemon=True)
    try:
        t.start()
        sent.wait(5)
        r.start()
        t.join(30)
        assert sent.is_set(), "the server never took all the requests"
        end = time.monotonic() + 30
        while time.monotonic() < end and got.count(b"HTTP/1.1 200 OK\r\n") < len(targets):
            time.sleep(0.05)
    finally:
        try:
            s.shutdown(socket.SHUT_RDWR if not sent.is_set() else socket.SHUT_WR)
        except OSError:
            pass
        if r.ident is not None:
            r.join(10)
        s.close()
    return bytes(got)


def test_many_pipelined_requests_all_answered_in_order(pserver):
    n = 20000  # ~750 KiB of requests, twenty times a connection's buffer
    names = sorted(pserver.files)
    targets = [names[i % NFILES] for i in range(n)]
    got = _pipeline(pserver, targets)
    heads = [m.start() for m in re.finditer(rb"HTTP/1\.1 200 OK\r\n", got)]
    assert len(heads) == n, "got %d of %d answers" % (len(heads), n)
    # Answer i is a complete response for target i: its Content-Length and
    # exactly that file's bytes, up to the next answer.
    for i, (a, b) in enumerate(zip(heads, heads[1:] + [len(got)])):
        resp = got[a:b]
        h = resp.index(b"\r\n\r\n") + 4
        want = pserver.files[targets[i]]
        assert resp[h:] == want, "answer %d is not %s: %r" % (i, targets[i], resp[h:h + 40])
        assert b"\r\nContent-Length: %d\r\n" % len(want) in resp[:h], resp[:h]
    assert b"Connection: close" not in got


def test_pipelined_requests_with_a_bad_one_in_the_middle(server):
    good = b"GET /index.html HTTP/1.1\r\nHost: p\r\n\r\n"
    bad = b"GET /index.html HTTP/1.1\r\nHost: p\r\nBad Name: x\r\n\r\n"
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    s.sendall(good * 50 + bad + good * 50)
    got = bytearray()
    while True:
        chunk = s.recv(1 << 16)
        if not chunk:
            break
        got.extend(chunk)
    s.close()
    assert got.count(b"HTTP/1.1 200 OK\r\n") == 50
    assert got.count(b"HTTP/1.1 400 Bad Request\r\n") == 1
    assert got.rstrip().endswith(b"</html>")

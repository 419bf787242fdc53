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


def _pipeline(server, n, target=b"/1k.bin"):
    one = b"GET " + target + b" HTTP/1.1\r\nHost: p\r\n\r\n"
    data = one * n
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

    # Send everything first (in a thread: the server may push back), and
    # read only once all is sent, so the server's buffers fill up.
    sent = threading.Event()

    def writer():
        s.sendall(data)
        sent.set()

    t = threading.Thread(target=writer)
    t.start()
    sent.wait(5)
    r = threading.Thread(target=reader)
    r.start()
    t.join(30)
    assert sent.is_set(), "the server never took all the requests"
    # Close our side once the answers are in: count them as they come.
    body = None
    deadline = 30
    import time
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if got.count(b"HTTP/1.1 200 OK\r\n") >= n:
            break
        time.sleep(0.05)
    s.shutdown(socket.SHUT_WR)
    r.join(10)
    s.close()
    return bytes(got), body


def test_many_pipelined_requests_all_answered_in_order(server, docroot):
    n = 20000  # ~740 KiB of requests, twenty times a connection's buffer
    got, _ = _pipeline(server, n)
    heads = [m.start() for m in re.finditer(rb"HTTP/1\.1 200 OK\r\n", got)]
    assert len(heads) == n, "got %d of %d answers" % (len(heads), n)
    body = docroot.files["1k.bin"]
    # Every answer is the same complete response: head, then exactly the file.
    first = got[heads[0]:heads[1]]
    head_end = first.index(b"\r\n\r\n") + 4
    assert first[head_end:] == body
    for a, b in zip(heads, heads[1:] + [len(got)]):
        resp = got[a:b]
        h = resp.index(b"\r\n\r\n") + 4
        assert resp[h:] == body
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

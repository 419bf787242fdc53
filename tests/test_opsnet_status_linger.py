# SPDX-License-Identifier: MIT
"""The --status process closes like the workers do (issue 19, defect 5):
after its answer it shuts its side and reads on until the client closes
(or its deadline passes), so request bytes left unread past the 4 KiB it
reads cannot turn the close into a reset that destroys the answer. It used
to close at once: the kernel sent RST and dropped the unsent tail (991 of
3,087 bytes of /metrics arrived)."""

import socket
import time

from opsnet_util import status_port


def read_all(s):
    got = b""
    while True:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return got, True
        if not chunk:
            return got, False
        got += chunk


def test_metrics_arrive_whole_with_unread_request_bytes_behind(pith):
    s = pith("--status", "127.0.0.1:0")
    port = status_port(s)
    for extra in (4096, 64 * 1024):
        # A small window: the answer's tail still waits in pith's socket
        # when it closes.
        c = socket.socket()
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        c.settimeout(10)
        c.connect(("127.0.0.1", port))
        # A request followed by bytes the status process never reads: a
        # second request's worth of junk past its 4 KiB input.
        c.sendall(b"GET /metrics HTTP/1.1\r\nHost: s\r\n\r\n" + b"X" * extra)
        time.sleep(0.3)
        got, reset = read_all(c)
        c.close()
        assert not reset, "the answer was cut by a reset after %d bytes" % len(got)
        head, body = got.split(b"\r\n\r\n", 1)
        length = int([l.split(b":")[1] for l in head.split(b"\r\n")
                      if l.lower().startswith(b"content-length:")][0])
        assert head.startswith(b"HTTP/1.1 200 OK")
        assert len(body) == length > 2000, (len(body), length)

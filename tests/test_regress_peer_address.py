# SPDX-License-Identifier: MIT
"""Regression: the access log names the client even when it reset the
connection. Under io_uring the multishot accept reports no address, and
the address was looked up only when the line was written; after a reset
getpeername has nothing to say, so the line began with "-". The address is
now asked for at accept when the log is on."""

import socket
import struct
import time


def test_reset_client_logged_with_its_address(pith, tmp_path):
    log = tmp_path / "access.log"
    s = pith("--log", str(log))
    c = socket.create_connection(("127.0.0.1", s.port))
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    c.sendall(b"GET /huge.bin HTTP/1.1\r\nHost: x\r\n\r\n")
    c.recv(1024)  # the response has started
    # SO_LINGER 0: close sends a reset, not a FIN.
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()
    deadline = time.monotonic() + 5
    lines = []
    while time.monotonic() < deadline:
        lines = [l for l in log.read_text().splitlines() if "/huge.bin" in l] if log.exists() else []
        if lines:
            break
        time.sleep(0.1)
    assert lines, "no log line for the reset request"
    assert lines[0].startswith("127.0.0.1 "), lines[0]

# SPDX-License-Identifier: MIT
"""HTTP/2's sends (issue 20): an HTTP/2 connection's socket has
TCP_NOTSENT_LOWAT (16 KiB), so what the kernel holds unsent stays small and
nghttp2's scheduling decides what goes next, not megabytes already queued
in the send buffer. The loops' writability still works under it (epoll's
EPOLLOUT, io_uring's POLL_ADD and SENDMSG retry): a reader that stalls and
resumes gets every byte; a big download beside many small streams
completes. h2c and TLS, on whichever loop PITH_IO names."""

import hashlib
import re
import socket
import subprocess
import time

import pytest

import tlsutil
from conftest import tls_pki
from h2util import H2, SETTINGS_INITIAL_WINDOW_SIZE, request_fields

pytestmark = pytest.mark.full_only("HTTP/2")

HUGE_WINDOW = dict(settings=[(SETTINGS_INITIAL_WINDOW_SIZE, 2**31 - 1)],
                   window=2**31 - 2**16 - 1, auto_window=False)


@pytest.fixture(scope="module")
def srv(pith_module):
    cert, key = tls_pki()["ecdsa"]
    return pith_module("--tls-cert", cert, "--tls-key", key, "--tls-port", "0")


@pytest.fixture(params=["h2c", "tls"])
def connect(request, srv):
    def make(**kw):
        if request.param == "tls":
            return H2(srv.tls_port, tls=tls_pki()["ca"], **kw)
        return H2(srv.http_port, **kw)
    make.port = srv.tls_port if request.param == "tls" else srv.http_port
    return make


def server_notsent(port, h):
    """The bytes the server's socket of connection h holds unsent (tcp_info's
    notsent, as ss shows it; absent when 0)."""
    client_port = h.sock.getsockname()[1]
    out = subprocess.run(["ss", "-tniH", "state", "established",
                          "( sport = :%d and dport = :%d )" % (port, client_port)],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"notsent:(\d+)", out)
    return int(m.group(1)) if m else 0


def read_until(h, sid, n, timeout=10):
    deadline = time.monotonic() + timeout
    while sid not in h.responses or len(h.responses[sid].body) < n:
        assert h.read_frame(max(0.01, deadline - time.monotonic())) is not None, h.responses
    return len(h.responses[sid].body)


def test_a_stalled_reader_resumes_and_gets_every_byte(connect, docroot):
    """The client reads 64 KiB of a 3 MiB file, stops for 1.5 s, then
    reads on: every byte comes, in order. While it stalls the server's
    socket holds little unsent: the low-water mark (16 KiB) plus at most one
    output buffer (32 KiB) and a TLS record's overhead, not the send buffer
    the kernel would otherwise fill (megabytes on loopback)."""
    with connect(rcvbuf=65536, **HUGE_WINDOW) as h:
        sid = h.send_headers(request_fields("/big.bin"))
        read_until(h, sid, 65536)
        time.sleep(1.5)
        notsent = server_notsent(connect.port, h)
        assert notsent <= 64 * 1024, notsent
        r = h.wait(sid, timeout=30)
        assert r.status == 200 and r.ended
        assert hashlib.sha256(r.body).digest() == \
            hashlib.sha256(docroot.files["big.bin"]).digest()


def test_a_late_small_asset_overtakes_what_the_socket_holds(connect, docroot):
    """A download fills what the socket takes while the client does not
    read; then the client asks for a 1 KiB asset and reads on. What of the
    download arrives before the asset ends is bounded by the client's
    receive buffer, the low-water mark and pith's output buffer (well
    under 512 KiB), not by the kernel's send buffer."""
    with connect(rcvbuf=65536, **HUGE_WINDOW) as h:
        big = h.send_headers(request_fields("/big.bin"))
        read_until(h, big, 16384)
        time.sleep(1)
        small = h.send_headers(request_fields("/1k.bin"))
        r = h.wait(small, timeout=30)
        ahead = len(h.responses[big].body)
        assert r.status == 200 and r.body == docroot.files["1k.bin"]
        assert ahead < 512 * 1024, ahead
        assert h.wait(big, timeout=30).body == docroot.files["big.bin"]


def test_a_download_beside_many_small_streams(connect, docroot):
    """3 MiB and 99 streams of 1 KiB on one connection, all at once: every
    stream completes with its bytes, the small ones before the download."""
    with connect(**HUGE_WINDOW) as h:
        # In one send, so that the order of the ends is pith's scheduling,
        # not the order in which the requests arrived.
        out = []
        h.send, send = out.append, h.send
        big = h.send_headers(request_fields("/big.bin"))
        small = [h.send_headers(request_fields("/1k.bin")) for _ in range(99)]
        h.send = send
        h.send(b"".join(out))
        order = []
        deadline = time.monotonic() + 30
        while len(order) < 100:
            f = h.read_frame(max(0.01, deadline - time.monotonic()))
            assert f is not None, (len(order), h.eof)
            r = h.responses.get(f[2])
            if r is not None and r.ended and f[2] not in order:
                order.append(f[2])
        assert order[-1] == big, order
        assert all(h.responses[s].body == docroot.files["1k.bin"] for s in small)
        assert h.responses[big].body == docroot.files["big.bin"]


@pytest.mark.parametrize("when", ["before", "during"])
@pytest.mark.parametrize("how", ["fin", "close_notify"])
def test_a_client_that_ends_its_side_still_gets_what_it_asked_for(srv, docroot, when, how):
    """A client that ends its side once its requests are out sends nothing
    more, but reads: the 3 MiB it asked for comes whole, then the server
    closes, as HTTP/1's connection finishes the answers it owes after the
    peer's FIN. The end arrives with the request or in the middle of the
    body (read while the body waits for the socket): a FIN on h2c, or over
    TLS a close_notify alone (RFC 8446 §6.1: it closes only the client's
    direction; the TCP stream stays open both ways)."""
    if how == "fin":
        h = H2(srv.http_port, rcvbuf=65536, **HUGE_WINDOW)
    else:
        h = H2(srv.tls_port, rcvbuf=65536,
               wrap=lambda raw: tlsutil.HalfClosingTLS(raw, tls_pki()["ca"]), **HUGE_WINDOW)
    with h:
        while not h.server_settings:  # acknowledged now: nothing to send after the end
            assert h.read_frame() is not None, "no SETTINGS from the server"
        sid = h.send_headers(request_fields("/big.bin"))
        if when == "during":
            read_until(h, sid, 65536)
            time.sleep(0.2)
        if how == "fin":
            h.sock.shutdown(socket.SHUT_WR)
        else:
            h.sock.close_notify()
        r = h.wait(sid, timeout=30)
        assert r.status == 200 and r.ended and len(r.body) == len(docroot.files["big.bin"])
        assert r.body == docroot.files["big.bin"]
        h.wait_closed(5)
        assert h.eof, "the server kept the connection after the client's " + how
        if how == "close_notify":
            assert h.sock.notified, "the server's end was a bare FIN, no close_notify"


def test_a_body_of_several_buffers_ends_without_waiting(connect, docroot):
    """A pump that writes more than one output buffer corks the socket (full
    segments instead of one per record) and uncorks it before it returns, so
    the tail of every body goes at once. Twenty downloads of 100 KiB, one
    after another, take milliseconds; a socket left corked holds each tail
    for the kernel's 200 ms cork limit (4 s in all)."""
    body = bytes((i * 13) & 0xFF for i in range(100 * 1024))
    docroot.write("cork.bin", body)
    with connect(**HUGE_WINDOW) as h:
        start = time.monotonic()
        for _ in range(20):
            r = h.wait(h.send_headers(request_fields("/cork.bin")), timeout=10)
            assert r.status == 200 and r.body == body
        took = time.monotonic() - start
    assert took < 2.0, took


def download_timed(h, path, body, times, pauses, stop_every=0):
    """Downloads path times over h, each byte-identical to body, and adds
    to pauses every wait of 180 ms or more between two frames. With
    stop_every, the reader itself stops 20 ms every stop_every frames (not
    counted as a pause)."""
    read_frame, frames, last = h.read_frame, [0], [time.monotonic()]

    def timed(timeout=10.0):
        frames[0] += 1
        if stop_every and frames[0] % stop_every == 0:
            time.sleep(0.02)
            last[0] = time.monotonic()
        f = read_frame(timeout)
        now = time.monotonic()
        if now - last[0] >= 0.18:
            pauses.append(round(now - last[0], 3))
        last[0] = now
        return f
    h.read_frame = timed
    for _ in range(times):
        sid = h.send_headers(request_fields(path))
        last[0] = time.monotonic()
        r = h.wait(sid, timeout=30)
        assert r.status == 200 and r.body == body


def test_a_reader_that_fills_its_window_is_not_held_by_the_cork(connect, docroot):
    """A client whose receive buffer fills (a small SO_RCVBUF, read as fast
    as Python reads) closes its TCP window again and again during a body of
    many buffers. The socket must not stay corked while pith waits for room:
    once the window opens, a corked tail shorter than a segment (64 KiB on
    loopback, more than the 16 KiB low-water mark that would wake pith)
    waits for the kernel's 200 ms cork timer each time (h2load's 60-asset
    page took 210 ms instead of 5). Over ten 1 MiB downloads the old code
    paused about a dozen times for 200 ms; a loaded machine may pause the
    client once or twice by itself."""
    body = bytes((i * 7) & 0xFF for i in range(1024 * 1024))
    docroot.write("window.bin", body)
    pauses = []
    with connect(rcvbuf=16384, **HUGE_WINDOW) as h:
        download_timed(h, "/window.bin", body, 10, pauses)
    assert len(pauses) <= 2, pauses


def test_a_reader_that_pauses_now_and_then_is_not_held_by_the_cork(connect, docroot):
    """The same small receive buffer, with a reader that stops for 20 ms
    every few dozen frames: the server's socket fills while the cork is on,
    and a send finds no room at all. On io_uring that send used to wait for
    room inside the ring, where pith could not see it and take the cork
    off, so the corked tail held back the room it waited for until the
    kernel's 200 ms timer (3 to 42 pauses in 20 downloads here, depending
    on the period and the build; CI's ASan pass saw 15 in the test above).
    Now the ring's sends carry MSG_DONTWAIT: a full socket comes back at
    once, as on epoll, and the cork comes off."""
    body = bytes((i * 7) & 0xFF for i in range(1024 * 1024))
    docroot.write("pausing.bin", body)
    pauses = []
    for every in (25, 35, 45, 60):
        with connect(rcvbuf=16384, **HUGE_WINDOW) as h:
            download_timed(h, "/pausing.bin", body, 12, pauses, stop_every=every)
    assert len(pauses) <= 2, pauses

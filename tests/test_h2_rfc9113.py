# SPDX-License-Identifier: MIT
"""HTTP/2 conformance (issue 33, defect 4): what RFC 9113 says an endpoint
MUST do where nghttp2 1.52 alone does otherwise, found by an outside suite.
Through the live process, over h2c and TLS, on whichever loop PITH_IO
names; frames built by hand (h2util.py)."""

import struct
import time

import pytest

from conftest import tls_pki
from h2util import (DATA, END_HEADERS, END_STREAM, ENHANCE_YOUR_CALM, FLOW_CONTROL_ERROR, H2,
                    HEADERS, PRIORITY, PROTOCOL_ERROR, REFUSED_STREAM,
                    SETTINGS_INITIAL_WINDOW_SIZE, SETTINGS_MAX_CONCURRENT_STREAMS, frame,
                    request_fields, rst_stream, settings_frame, window_update)

pytestmark = pytest.mark.full_only("HTTP/2")

MAX_STREAMS = 10


@pytest.fixture(scope="module")
def srv(pith_module):
    cert, key = tls_pki()["ecdsa"]
    return pith_module("--tls-cert", cert, "--tls-key", key, "--tls-port", "0",
                       "--h2-max-streams", str(MAX_STREAMS), "--timeout-header", "5",
                       "--timeout-keepalive", "5", "--timeout-send", "5")


@pytest.fixture(params=["h2c", "tls"])
def connect(request, srv):
    def make(**kw):
        if request.param == "tls":
            return H2(srv.tls_port, tls=tls_pki()["ca"], **kw)
        return H2(srv.http_port, **kw)
    return make


def settled(h):
    """Reads until the server's SETTINGS came (read_frame ACKs it), so that
    what the test sends next reaches the server after its ACK: the server's
    own limits are then in force, not the initial ones."""
    deadline = time.monotonic() + 5
    while not h.server_settings and time.monotonic() < deadline:
        assert h.read_frame(1) is not None or not h.eof
    assert h.server_settings, "no SETTINGS from the server"


def ended_with(h, code, timeout=10):
    g = h.wait_goaway(timeout)
    assert g is not None, "no GOAWAY (eof=%s)" % h.eof
    assert g[1] == code, g
    assert h.wait_closed(timeout)
    return g


def test_priority_on_stream_0_is_a_connection_error(connect):
    """§6.3: "If a PRIORITY frame is received with a stream identifier of
    0x00, the recipient MUST respond with a connection error of type
    PROTOCOL_ERROR." nghttp2 ignores every PRIORITY frame once RFC 7540
    priorities are off (SETTINGS_NO_RFC7540_PRIORITIES), stream 0 too."""
    with connect() as h:
        settled(h)
        h.send(frame(PRIORITY, 0, 0, struct.pack(">IB", 1, 16)))
        ended_with(h, PROTOCOL_ERROR)


def test_priority_on_a_stream_is_still_fine(connect):
    """The other side: a PRIORITY frame on a stream (no work, a glitch) does
    not end the connection."""
    with connect() as h:
        settled(h)
        h.send(frame(PRIORITY, 0, 3, struct.pack(">IB", 0, 16)))
        assert h.request("/index.html").status == 200
        assert h.goaway is None


def test_headers_past_max_concurrent_streams_is_a_stream_error(connect, docroot):
    """§5.1.2: HEADERS that take the streams past the advertised
    SETTINGS_MAX_CONCURRENT_STREAMS are a stream error (REFUSED_STREAM or
    PROTOCOL_ERROR), not a connection error; and §4.3: the refused stream's
    field block is still decoded, so the HPACK state stays in step. The
    streams are held open by a window of 0. The refused block adds a field
    to the client's dynamic table; a later request that names that field by
    its index is decoded right only if the server decoded the refused block
    too. nghttp2 1.52 ends the connection with GOAWAY(PROTOCOL_ERROR) once
    its SETTINGS are acknowledged."""
    with connect(settings=[(SETTINGS_INITIAL_WINDOW_SIZE, 0)]) as h:
        settled(h)
        assert h.server_settings[SETTINGS_MAX_CONCURRENT_STREAMS] == MAX_STREAMS
        held = [h.send_headers(request_fields("/big.bin")) for _ in range(MAX_STREAMS)]
        probe = ("x-hpack-probe", "in-the-refused-block-%d" % time.monotonic_ns())
        over = h.send_headers(request_fields("/index.html", extra=[probe]))
        r = h.wait(over)
        assert r.reset in (REFUSED_STREAM, PROTOCOL_ERROR) and r.status is None, r
        assert h.goaway is None and not h.eof
        h.send(rst_stream(held[0]))  # one stream fewer: room for the next
        block = h.block(request_fields("/index.html", extra=[probe]))
        assert len(block) < 12, block  # every field by its index: the probe's too
        again = h.next_id
        h.next_id += 2
        h.send(frame(HEADERS, END_HEADERS | END_STREAM, again, block)
               + window_update(again, 65536))
        r = h.wait(again)
        assert r.status == 200 and r.body == docroot.files["index.html"], r
        assert h.goaway is None


def test_initial_window_change_past_the_maximum_is_a_connection_error(connect):
    """§6.9.2: "An endpoint MUST treat a change to SETTINGS_INITIAL_WINDOW_SIZE
    that causes any flow-control window to exceed the maximum size as a
    connection error of type FLOW_CONTROL_ERROR." A stream opened with a
    window of 0, granted 2^31-1 (the maximum), then an initial window of 1:
    its window would be 2^31. All in one write, so no DATA moves the window
    in between. nghttp2 1.52 makes it a stream error (RST_STREAM) only."""
    with connect(settings=[(SETTINGS_INITIAL_WINDOW_SIZE, 0)]) as h:
        settled(h)
        sid = h.next_id
        h.send(frame(HEADERS, END_HEADERS | END_STREAM, sid, h.block(request_fields("/big.bin")))
               + window_update(sid, 2**31 - 1)
               + settings_frame([(SETTINGS_INITIAL_WINDOW_SIZE, 1)]))
        ended_with(h, FLOW_CONTROL_ERROR)


def test_initial_window_change_to_the_maximum_is_fine(connect, docroot):
    """The other side: the same, with the window ending at exactly 2^31-1
    (granted 2^31-2, then an initial window of 1), is served."""
    with connect(settings=[(SETTINGS_INITIAL_WINDOW_SIZE, 0)]) as h:
        settled(h)
        sid = h.next_id
        h.next_id += 2
        h.send(frame(HEADERS, END_HEADERS | END_STREAM, sid,
                     h.block(request_fields("/1k.bin")))
               + window_update(sid, 2**31 - 2)
               + settings_frame([(SETTINGS_INITIAL_WINDOW_SIZE, 1)]))
        r = h.wait(sid)
        assert r.status == 200 and r.body == docroot.files["1k.bin"], r
        assert h.goaway is None


def data_frames(h, sid, timeout=10):
    """Reads until stream sid ends; the lengths of its DATA frames."""
    sizes, deadline = [], time.monotonic() + timeout
    while not (sid in h.responses and (h.responses[sid].ended or
                                       h.responses[sid].reset is not None)):
        f = h.read_frame(max(0.01, deadline - time.monotonic()))
        assert f is not None, ("stream %d did not end" % sid, h.goaway, h.eof, sizes[-5:])
        if f[0] == DATA and f[2] == sid:
            sizes.append(len(f[3]))
    return sizes


@pytest.mark.parametrize("window", [100, 1])
def test_a_small_window_is_served_with_small_frames(connect, docroot, window):
    """A client whose stream window is small (100 bytes, or 1), given back
    frame by frame, gets its body in frames of that size at once, as nginx
    and h2o serve it, not nothing until a deadline (pith used to send no
    frame under 1 KiB that a window cut short). 4 KiB at 100 bytes a frame,
    100 bytes at 1."""
    size = 4096 if window == 100 else 100
    with connect(settings=[(SETTINGS_INITIAL_WINDOW_SIZE, window)]) as h:
        t = time.monotonic()
        sid = h.send_headers(request_fields(
            "/big.bin", extra=[("range", "bytes=0-%d" % (size - 1))]))
        sizes = data_frames(h, sid, timeout=4)
        r = h.responses[sid]
        assert r.status == 206 and r.body == docroot.files["big.bin"][:size], r
        assert max(sizes) <= window and len(sizes) >= size // window, sizes[:10]
        assert time.monotonic() - t < 4
        assert h.goaway is None


def test_the_cost_of_small_frames_is_bounded(connect):
    """The other side of serving small windows (CVE-2019-9511, data
    dribble): each DATA frame a small grant cuts short costs the
    connection a glitch, so a client that grants 1 byte at a time gets
    about the glitch budget's worth of 1-byte frames (1,000), then
    GOAWAY(ENHANCE_YOUR_CALM), rather than a frame, a send and a TLS record
    per byte for as long as it likes."""
    with connect(settings=[(SETTINGS_INITIAL_WINDOW_SIZE, 0)], auto_window=False) as h:
        sid = h.send_headers(request_fields("/big.bin"))
        got, frames = 0, 0
        deadline = time.monotonic() + 20
        while h.goaway is None and not h.eof and time.monotonic() < deadline:
            h.send(window_update(sid, 1))  # one byte, then its frame
            f = h.read_frame(1)
            while f is not None and f[0] != DATA and h.goaway is None:
                f = h.read_frame(1)
            if f is not None and f[0] == DATA:
                got, frames = got + len(f[3]), frames + 1
        assert h.goaway is not None and h.goaway[1] == ENHANCE_YOUR_CALM, (h.goaway, frames)
        assert 900 <= frames <= 1600 and got == frames, (frames, got)

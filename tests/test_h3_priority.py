# SPDX-License-Identifier: MIT
"""RFC 9218 priorities over HTTP/3 through the live binary, on whichever loop
PITH_IO names, as test_h2.py checks them over HTTP/2: the `priority` request
field, PRIORITY_UPDATE frames on the client's control stream (§7.2), and
pith's default for a request without either (its streams share the
connection round-robin, as over HTTP/2).

The client is build/h3client's stdio mode with --progress (tests/h3client.c):
one QUIC connection, every request of a test written to it at once (so they
leave in one flight and reach pith together), and a D event for each piece
of a body that arrives. The assertions read the order in which bytes came,
never a clock: when one stream ended, how much of each other one had come.

Every download is the same 2 MiB file: no more than one stream may hold
unacknowledged (h3_stream.c's H3_STREAM_CHUNKS), so a stream served alone
never waits on its own chunks while another one, less urgent, is sent
instead (which RFC 9218 §10 allows a server: it would blur the order)."""

import os
import select
import subprocess
import time

import pytest

from conftest import REPO, tls_pki
from h3_adapter import end_h3client

pytestmark = pytest.mark.full_only("HTTP/3")

H3CLIENT = os.path.join(REPO, "build", "h3client")
SIZE = 2 * 1024 * 1024
PATH = "/2m.bin"
HALF = SIZE // 2


@pytest.fixture(scope="module")
def srv(pith_module, tmp_path_factory):
    root = tmp_path_factory.mktemp("prio")
    (root / PATH[1:]).write_bytes(os.urandom(SIZE))
    cert, key = tls_pki()["ecdsa"]
    return pith_module("--tls-cert", cert, "--tls-key", key, "--tls-port", "0", root=str(root))


class Progress:
    """One connection of h3client stdio --progress: got[tag] is the bytes of
    each stream's body so far; ends is [(tag, {other tag: bytes})], in the
    order the streams ended, with what each other stream had then."""

    def __init__(self, port):
        if not os.path.exists(H3CLIENT):
            pytest.fail("%s is missing: make build/h3client" % H3CLIENT)
        self.p = subprocess.Popen([H3CLIENT, "stdio", str(port), "--ca", tls_pki()["ca"],
                                   "--progress"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.inbuf = b""
        self.got, self.ends = {}, []
        self.wait(lambda ev: ev[0] == b"READY")

    def send(self, *lines):
        """All lines in one write: h3client reads them in one go, and
        submits them before it writes a packet."""
        self.p.stdin.write(b"".join(l.encode("ascii") + b"\n" for l in lines))
        self.p.stdin.flush()

    @staticmethod
    def request(tag, priority=None):
        fields = [(":method", "GET"), (":scheme", "https"), (":authority", "localhost"),
                  (":path", PATH)]
        if priority is not None:
            fields.append(("priority", priority))
        return "R %s %d %s -" % (tag, len(fields), " ".join(
            "%s %s" % (n.encode().hex(), v.encode().hex()) for n, v in fields))

    @staticmethod
    def priority_update(tag, value):
        return "P %s %s" % (tag, value.encode().hex())

    def _event(self, deadline):
        while True:
            nl = self.inbuf.find(b"\n")
            if nl >= 0:
                words = self.inbuf[:nl].split(b" ")
                if words[0] != b"E":
                    self.inbuf = self.inbuf[nl + 1:]
                    return words
                n = int(words[2])
                if len(self.inbuf) >= nl + 1 + n:
                    self.inbuf = self.inbuf[nl + 1 + n:]
                    return words
            left = deadline - time.monotonic()
            r = select.select([self.p.stdout], [], [], max(left, 0))[0] if left > 0 else []
            if not r:
                raise TimeoutError("h3client: nothing within the timeout; so far %r" % self.got)
            data = os.read(self.p.stdout.fileno(), 1 << 20)
            if not data:
                raise AssertionError("h3client exited; so far %r" % self.got)
            self.inbuf += data

    def wait(self, until, timeout=30):
        """Handles events until until(event) is true."""
        deadline = time.monotonic() + timeout
        while True:
            ev = self._event(deadline)
            kind = ev[0]
            if kind == b"D":
                self.got[ev[1].decode()] = int(ev[2])
            elif kind == b"E":
                tag = ev[1].decode()
                assert int(ev[2]) == SIZE, "stream %s ended after %s bytes" % (tag, ev[2])
                self.got[tag] = SIZE
                self.ends.append((tag, {t: n for t, n in self.got.items() if t != tag}))
            elif kind in (b"X", b"CLOSED", b"FAIL"):
                raise AssertionError("h3client: %r" % b" ".join(ev))
            elif kind == b"H":
                if bytes.fromhex(ev[2].decode()) == b":status":
                    assert bytes.fromhex(ev[3].decode()) == b"200"
            elif kind != b"READY":
                raise AssertionError("h3client said %r" % (ev,))
            if until(ev):
                return

    def run(self, tags):
        """Waits until every stream of tags ended; the tags in end order."""
        self.wait(lambda ev: len(self.ends) == len(tags))
        assert sorted(t for t, _ in self.ends) == sorted(tags)
        return [t for t, _ in self.ends]

    def at_end(self, tag):
        """{other tag: bytes it had} when tag's stream ended."""
        return dict(self.ends)[tag]

    def close(self):
        end_h3client(self.p)


@pytest.fixture
def conn(srv):
    c = Progress(srv.tls_port)
    yield c
    c.close()


def first_served_alone(c, first, others):
    """first ended first, and then each other stream had less than half of
    its body: it was served ahead of them, not beside them."""
    order = [t for t, _ in c.ends]
    assert order[0] == first, "end order %r: %s did not end first" % (order, first)
    late = {t: n for t, n in c.at_end(first).items() if t in others and n >= HALF}
    assert not late, ("when %s ended, others had half their bytes or more: %r (RFC 9218: the "
                      "more urgent stream goes first)" % (first, late))


def shared(c, tags):
    """Round-robin: when the first stream ended, every other one had at
    least half of its body (they all progressed together)."""
    first, had = c.ends[0]
    behind = {t: had.get(t, 0) for t in tags if t != first and had.get(t, 0) < HALF}
    assert not behind, ("when %s ended, these had less than half their bytes: %r (they "
                        "should share the connection round-robin)" % (first, behind))


# ---- the priority field (RFC 9218 §5) -------------------------------------------------

@pytest.mark.parametrize("urgent", ["u=0", None], ids=["u=0", "none"])
def test_the_urgent_stream_goes_first(conn, urgent):
    """Three downloads at u=6 are opened first, the urgent one last: it
    ends first, the others having had less than half of theirs. Without a
    field the last one is at RFC 9218's default urgency 3, still ahead of 6."""
    lazy = ["a", "b", "c"]
    conn.send(*[conn.request(t, "u=6") for t in lazy], conn.request("z", urgent))
    conn.run(lazy + ["z"])
    first_served_alone(conn, "z", lazy)


def test_incremental_streams_share(conn):
    """u=4, i: streams of one urgency, each incremental, share the
    connection (RFC 9218 §4.2)."""
    tags = ["a", "b", "c"]
    conn.send(*[conn.request(t, "u=4, i") for t in tags])
    conn.run(tags)
    shared(conn, tags)


def test_non_incremental_streams_go_one_after_another(conn):
    """u=4 without i: one stream at a time, in the order they were opened
    (RFC 9218 §4.2, §10: by stream ID): each ends before the next one has
    half of its bytes."""
    tags = ["a", "b", "c"]
    conn.send(*[conn.request(t, "u=4") for t in tags])
    assert conn.run(tags) == tags
    for i, t in enumerate(tags[:-1]):
        had = conn.at_end(t)
        late = {o: had.get(o, 0) for o in tags[i + 1:] if had.get(o, 0) >= HALF}
        assert not late, "when %s ended, later streams had half or more: %r" % (t, late)


# ---- the default ----------------------------------------------------------------------

def test_streams_without_priority_share(conn):
    """No priority field and no PRIORITY_UPDATE: pith makes the streams
    incremental at urgency 3 (as over HTTP/2, test_h2.py's
    test_a_download_does_not_hold_back_small_assets), so they all progress
    together rather than one after another as RFC 9218's bare default
    (not incremental) would have them."""
    tags = ["a", "b", "c", "d"]
    conn.send(*[conn.request(t) for t in tags])
    conn.run(tags)
    shared(conn, tags)


# ---- PRIORITY_UPDATE (RFC 9218 §7.2) --------------------------------------------------

@pytest.mark.parametrize("field", ["u=7", None], ids=["u=7", "none"])
def test_priority_update_raises_a_running_stream(conn, field):
    """Three downloads without a priority field and a fourth (at u=7, or
    with no field) are under way; a PRIORITY_UPDATE raises the fourth to u=0:
    it ends first, the others having had less than half of theirs."""
    others = ["a", "b", "c"]
    conn.send(*[conn.request(t) for t in others], conn.request("z", field))
    conn.wait(lambda ev: ev[0] == b"D")  # the downloads are running
    conn.send(conn.priority_update("z", "u=0"))
    conn.run(others + ["z"])
    first_served_alone(conn, "z", others)


def test_priority_update_with_the_request(conn):
    """A PRIORITY_UPDATE sent with its request, for a request without a
    priority field: nghttp3 writes the control stream first, so pith sees the
    frame before the stream's HEADERS (§7.1 allows it). It still decides."""
    others = ["a", "b", "c"]
    conn.send(*[conn.request(t) for t in others], conn.request("z"),
              conn.priority_update("z", "u=0"))
    conn.run(others + ["z"])
    first_served_alone(conn, "z", others)


def test_priority_update_lowers_a_stream(conn):
    """The other way: a stream opened at u=0 and moved to u=7 at once
    (with its request) waits for the three default ones."""
    others = ["a", "b", "c"]
    conn.send(conn.request("z", "u=0"), *[conn.request(t) for t in others],
              conn.priority_update("z", "u=7"))
    order = conn.run(others + ["z"])
    assert order[-1] == "z", "end order %r: the stream moved to u=7 did not end last" % order
    had = {t: n for t, n in conn.at_end(others[0]).items()}
    assert had.get("z", 0) < HALF, "z had %d bytes when %s ended" % (had.get("z", 0), others[0])

# SPDX-License-Identifier: MIT
"""HTTP/3 against hostile peers (issue 34), each test naming its attack, as
test_h2_floods.py does for HTTP/2: the attacker's connection ends (with the
fitting error, or at a deadline), its cost stays bounded meanwhile (the
worker's CPU, its memory once the connection is gone, its descriptors),
and another client is served during the attack. The attacker is
build/h3client's attack mode (tests/h3client.c): ngtcp2 and nghttp3 as a
client, which makes the handshake and the ordinary requests, and for the
frames no client library sends on purpose (PING floods, duplicate
NEW_CONNECTION_ID, RETIRE_CONNECTION_ID, empty STREAM frames, a peer that
never acknowledges) packets it seals itself with the keys ngtcp2 used, the
connection taken over from ngtcp2 at that point. On whichever loop PITH_IO
names.

The budget (h3_glitch.c): a bucket of 1000 glitches per connection, refilled
at 100 a second; empty, CONNECTION_CLOSE with H3_EXCESSIVE_LOAD (0x107). A
glitch is a packet after the handshake that did no work (no stream data,
no new acknowledgement, no window worth a frame), a stream reset or closed
before its answer, a malformed request, an ID the client retired, a path
it made the server validate."""

import os
import re
import subprocess
import threading
import time

import pytest

import h3util
import http_raw
from conftest import PITH_BIN, REPO, fd_links, settled_fd_count, tls_pki
from h3util import Client
from opsnet_util import metrics, status_port

pytestmark = pytest.mark.full_only("HTTP/3")

H3CLIENT = os.path.join(REPO, "build", "h3client")
ASAN = "asan" in os.path.basename(PITH_BIN)
H3_EXCESSIVE_LOAD = 0x107
H3_REQUEST_INCOMPLETE = 0x10D
H3_NO_ERROR = 0x100
QPACK_DECOMPRESSION_FAILED = 0x200
QPACK_ENCODER_STREAM_ERROR = 0x201


@pytest.fixture(scope="module", autouse=True)
def _h3_here():
    h3util.need_h3()
    if not os.path.exists(H3CLIENT):
        pytest.fail("%s is missing: make build/h3client" % H3CLIENT)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    d = tmp_path_factory.mktemp("h3floods")
    (d / "1k.bin").write_bytes(bytes(range(256)) * 4)
    (d / "64k.bin").write_bytes(os.urandom(64 * 1024))
    (d / "big.bin").write_bytes(os.urandom(3 * 1024 * 1024))
    (d / "index.html").write_bytes(b"<!doctype html><title>x</title>\n")
    return d


@pytest.fixture(scope="module")
def srv(pith_module, root):
    cert, key = tls_pki()["ecdsa"]
    s = pith_module("--tls-cert", cert, "--tls-key", key, "--tls-port", "0",
                    "--status", "127.0.0.1:0", "--timeout-header", "2", "--timeout-send", "2",
                    "--timeout-keepalive", "2", "--timeout-handshake", "2", root=str(root))
    s.status = status_port(s)
    return s


@pytest.fixture(scope="module")
def patient_srv(pith_module, root):
    """As srv, with a send timeout of 10 s: a dribble grants a byte a
    millisecond at most, so its thousand glitches take a second or more, and
    on a loaded machine more than srv's 2 s, whose send timeout then ended
    the connection first (H3_NO_ERROR; 2 runs in 5 at a load of 8)."""
    cert, key = tls_pki()["ecdsa"]
    s = pith_module("--tls-cert", cert, "--tls-key", key, "--tls-port", "0",
                    "--status", "127.0.0.1:0", "--timeout-header", "2", "--timeout-send", "10",
                    "--timeout-keepalive", "2", "--timeout-handshake", "2", root=str(root))
    s.status = status_port(s)
    return s


def attack(srv, name, *args, timeout=30):
    out = subprocess.run([H3CLIENT, "attack", name, str(srv.tls_port), "--ca", tls_pki()["ca"]]
                         + [str(a) for a in args], capture_output=True, text=True,
                         timeout=timeout)
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip().splitlines()[-1]
    return dict(kv.split("=", 1) for kv in line.split())


def served(srv, path="/index.html"):
    """Another client gets its answer at once (within 2 s, its handshake
    included)."""
    t = time.monotonic()
    c = Client(srv.tls_port, cafile=tls_pki()["ca"], timeout=5)
    try:
        status, _, body, version = c.request(path)
    finally:
        c.close()
    assert (status, version) == (200, "3") and time.monotonic() - t < 2, (status, version)
    return body


def held_kib(srv):
    """The worker's memory in KiB: its RSS; under ASan, where freed blocks
    stay resident in the quarantine, the heap bytes in use by ASan's count
    (pith-asan's test hook, over HTTP/1 on the plain port)."""
    if ASAN:
        r = http_raw.fetch(srv.http_port, "/.pith-test/heap")
        assert r.status == 200 and r["X-Heap-Bytes"], r
        return int(r["X-Heap-Bytes"]) // 1024
    with open("/proc/%d/status" % srv.worker()) as f:
        return int(next(l for l in f if l.startswith("VmRSS:")).split()[1])


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Cost:
    """The worker's cost of one attack: its CPU during it, and once the
    attacker's connection is gone (no HTTP/3 connection open), its
    descriptors as before and its memory back within a margin."""

    def __init__(self, srv):
        self.srv = srv
        served(srv)
        served(srv, "/big.bin")  # cached files keep descriptors: open them first
        self.wait_idle()
        self.pid = srv.worker()
        self.fds = settled_fd_count(self.pid)
        self.kib = held_kib(srv)
        self.cpu = cpu_s(self.pid)
        self.m = metrics(srv.status)

    def wait_idle(self, timeout=10):
        deadline = time.monotonic() + timeout
        while metrics(self.srv.status)["pith_h3_open_connections"] and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        assert metrics(self.srv.status)["pith_h3_open_connections"] == 0

    def closed(self, reason, n=1, timeout=10):
        """Waits until n more connections closed for reason; the metrics."""
        key = 'pith_h3_connections_closed_total{reason="%s"}' % reason
        deadline = time.monotonic() + timeout
        while True:
            m = metrics(self.srv.status)
            if m[key] - self.m[key] >= n or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert m[key] - self.m[key] == n, {k: v for k, v in m.items() if "pith_h3" in k}
        return m

    # What stays after any burst, by design (h3_stream.c): 16 free stream
    # slots and 16 free chunks keep their pages, up to ~830 KiB touched.
    KIB_MAX = 1536

    def check(self, cpu_max=1.0, kib_max=KIB_MAX):
        cpu = cpu_s(self.pid) - self.cpu
        assert cpu < cpu_max * (4 if ASAN else 1), "the worker spent %.2f s" % cpu
        self.wait_idle()
        assert settled_fd_count(self.pid) == self.fds, fd_links(self.pid)
        # what the libraries held goes back with the heap's trim, at most
        # once a second (h3_worker.c): poll for it
        deadline = time.monotonic() + 3
        while (kib := held_kib(self.srv)) - self.kib >= kib_max and time.monotonic() < deadline:
            time.sleep(0.1)
        assert kib - self.kib < kib_max, "the worker holds %d KiB more" % (kib - self.kib)
        return cpu

    def glitches(self):
        return metrics(self.srv.status)["pith_h3_glitches_total"] - self.m["pith_h3_glitches_total"]


def during(srv, name, *args):
    """Runs the attack while another client asks for a file; both results."""
    got = {}
    t = threading.Thread(target=lambda: got.update(attack(srv, name, *args)))
    t.start()
    body = served(srv)
    t.join(60)
    assert not t.is_alive()
    return got, body


# ---- floods that spend the glitch budget ---------------------------------------------------

# What a flooding client has sent when it sees the close: the budget
# (1,000, refilled at 100 a second) and what was still on its way to the
# server then. Those in flight grow with the server's lag, so this bounds
# them loosely (1,600 was passed once, by CI's four test processes on two
# cores); the server's own count, the glitches it took, is the tight bound.
SENT_MAX = 3000

def test_rapid_reset(srv):
    """HTTP/3's Rapid Reset (the CVE-2023-44487 pattern over QUIC):
    requests opened and reset at once, over and over. Each stream closed
    before its answer is a glitch: after about a thousand the connection
    ends with H3_EXCESSIVE_LOAD; every reset stream's file went."""
    cost = Cost(srv)
    r, _ = during(srv, "rapid_reset", "-n", 5000, "--path", "/big.bin")
    assert (r["end"], int(r["code"])) == ("application", H3_EXCESSIVE_LOAD), r
    assert 1000 <= int(r["sent"]) < SENT_MAX, r
    cost.closed("flood")
    assert 1000 <= cost.glitches() < 1700
    cost.check()


@pytest.mark.parametrize("name,what", [
    ("ping", "PING frames, a packet each: ACK-eliciting, no work"),
    ("ncid", "the same NEW_CONNECTION_ID again and again"),
    ("empty_stream", "STREAM frames of no bytes, a hundred a packet"),
])
def test_packets_that_do_no_work(srv, name, what):
    """A flood of packets that make the server acknowledge and parse but
    give it nothing to do (the parameter says how): a glitch a packet, the connection closed
    (its CONNECTION_CLOSE kept and sent again as the packets keep coming)
    after about a thousand, within a fraction of a second of CPU."""
    cost = Cost(srv)
    r, _ = during(srv, name, "-n", 5000, "--path", "/1k.bin")
    assert r["end"] == "repeated", r
    assert 1000 <= int(r["sent"]) < SENT_MAX, r
    cost.closed("flood")
    assert 1000 <= cost.glitches() < 1700
    cost.check(cpu_max=0.5)


def test_retire_connection_id_flood(srv):
    """RETIRE_CONNECTION_ID for every ID the server issues, as fast as it
    can: each retired ID makes the server issue another (random bytes, a
    reset token, the table) and spends a glitch; ngtcp2 issues no more than
    its pool holds, so the client soon retires an ID it was never given
    and the connection ends (PROTOCOL_VIOLATION): the work is bounded
    either way."""
    cost = Cost(srv)
    r, _ = during(srv, "retire", "-n", 3000)
    assert r["end"] == "repeated" and int(r["sent"]) < 100, r
    cost.closed("protocol")
    cost.check(cpu_max=0.5)


@pytest.mark.parametrize("name", ["dribble", "dribble_conn"])
def test_window_dribble(patient_srv, name):
    """A window granted a byte at a time (the stream's, or the
    connection's): no STREAM frame under 1 KiB goes for a short window
    (H3_WINDOW_MIN), so the answer waits, and each granting packet did no
    work: a glitch each, H3_EXCESSIVE_LOAD after about a thousand."""
    srv = patient_srv
    cost = Cost(srv)
    r, _ = during(srv, name, "-n", 5000, "--path", "/big.bin")
    assert (r["end"], int(r["code"])) == ("application", H3_EXCESSIVE_LOAD), r
    # at most one frame went, of 1 KiB once the grants added up to it: no
    # frame a grant. It carries what the window holds when the worker
    # flushes, after a batch of datagrams (up to 32), so a loaded machine
    # may see a grant or a few more than 1024 in it (1025 once in CI).
    assert int(r["rxn"]) <= 1 and int(r["rx"]) <= 1024 + 32, r
    cost.closed("flood")
    cost.check()


def test_window_of_one_kib_is_served(srv, root):
    """The other side of the dribble rule: a client that grants exactly
    1 KiB at a time gets its whole 64 KiB, and spends no budget but its
    path MTU probes."""
    cost = Cost(srv)
    r = attack(srv, "window", "-n", 5000, "--path", "/64k.bin", "--grant", 1024)
    assert int(r["bytes"]) == 64 * 1024, r
    assert cost.glitches() <= 2
    cost.check()


def test_tls_data_after_the_handshake(srv):
    """A CRYPTO frame in a 1-RTT packet: a client has no TLS message to send
    after the handshake (RFC 9001 §4.1.3; pith asks for no certificate and
    issues no ticket), and pith has dropped its GnuTLS session by then (10
    KiB a connection): the connection ends with unexpected_message
    (CRYPTO_ERROR 0x10a), counted as a protocol close."""
    cost = Cost(srv)
    r, _ = during(srv, "crypto", "-n", 4)
    assert r["end"] == "repeated", r
    cost.closed("protocol")
    cost.check()


# ---- QPACK ------------------------------------------------------------------------------------

def test_qpack_table_capacity_past_settings(srv):
    """The client's encoder sets a dynamic table capacity past the 4096
    bytes our SETTINGS allow: QPACK_ENCODER_STREAM_ERROR (RFC 9204 §4.3.1)."""
    cost = Cost(srv)
    r, _ = during(srv, "qpack_capacity")
    assert (r["end"], int(r["code"])) == ("application", QPACK_ENCODER_STREAM_ERROR), r
    cost.closed("protocol")
    cost.check()


def test_qpack_blocked_streams_bounded(srv):
    """Requests whose field sections wait on a dynamic table entry that
    never comes: 16 may wait (SETTINGS_QPACK_BLOCKED_STREAMS), the 17th is
    QPACK_DECOMPRESSION_FAILED (RFC 9204 §2.1.2)."""
    cost = Cost(srv)
    r, _ = during(srv, "qpack_blocked", "-n", 40)
    assert (r["end"], int(r["code"])) == ("application", QPACK_DECOMPRESSION_FAILED), r
    assert int(r["sent"]) == 17, r
    cost.closed("protocol")
    cost.check()


def test_field_section_over_16k_is_431(srv):
    """A request whose field section passes HTTP/1's 16 KiB head (name +
    value + 32 per field, RFC 9114 §4.2.2; our SETTINGS_MAX_FIELD_SECTION_SIZE)
    is answered 431 on its stream, as HTTP/1's head would be, and the
    connection serves the next request."""
    import h3_adapter

    with h3_adapter.Conn(srv.tls_port, tls=tls_pki()["ca"]) as c:
        r = c.exchange("GET", "/1k.bin", [("x-big", "a" * 17000)])
        assert r.status == 431, r
        r = c.exchange("GET", "/1k.bin", [("x-fits", "a" * 15000)])
        assert r.status == 200 and len(r.body) == 1024, r


# ---- handshakes ------------------------------------------------------------------------------

def test_initials_from_many_addresses(srv):
    """Initials from 300 addresses (a port each), none of which finishes
    its handshake: the worker keeps state for 64 handshakes at most and
    answers the rest with a Retry, keeping nothing; the 64 end at the
    handshake timeout (2 s here). Another client gets through meanwhile
    (its Retry token answered)."""
    cost = Cost(srv)
    m0 = metrics(srv.status)
    r, _ = during(srv, "initials", "-n", 300)
    assert int(r["initial"]) <= 64 and int(r["retry"]) >= 300 - 64, r
    m = metrics(srv.status)
    assert m['pith_h3_packets_sent_total{kind="retry"}'] - \
        m0['pith_h3_packets_sent_total{kind="retry"}'] >= 236
    cost.closed("handshake", n=int(r["initial"]))
    cost.check(cpu_max=1.5, kib_max=Cost.KIB_MAX + 1024)


# ---- deadlines -------------------------------------------------------------------------------

def test_request_never_finished(srv):
    """A HEADERS frame that never ends, a byte a second (a slowloris over
    HTTP/3): its stream holds a slot of the worker's 1024, so the header
    timeout (2 s here) counts from the stream's opening, whatever bytes
    trickle in, and ends the connection with H3_REQUEST_INCOMPLETE."""
    cost = Cost(srv)
    t = time.monotonic()
    r, _ = during(srv, "slow_request", "-n", 10)
    assert (r["end"], int(r["code"])) == ("application", H3_REQUEST_INCOMPLETE), r
    assert 1.8 < time.monotonic() - t < 4, r
    cost.closed("timeout")
    cost.check()


@pytest.mark.parametrize("name", ["idle", "ping_idle"])
def test_idle_connection_ends(srv, name):
    """A connection with no request for the keep-alive timeout (2 s here)
    ends, silent (QUIC's idle timeout) or not: one that PINGs every 200 ms
    is ended all the same, with H3_NO_ERROR."""
    cost = Cost(srv)
    t = time.monotonic()
    r, _ = during(srv, name, "-n", 6, "--path", "/1k.bin")
    assert int(r["bytes"]) == 1024, r
    assert r["end"] in ("application", "idle"), r
    if name == "ping_idle":
        assert (r["end"], int(r["code"])) == ("application", H3_NO_ERROR), r
    assert time.monotonic() - t < 4
    cost.closed("idle")
    cost.check()


def test_peer_stops_acknowledging(srv):
    """A download whose client never acknowledges another packet but PINGs
    every 100 ms, so QUIC's idle timer never fires: the send timeout (2 s
    here), counted from the client's last progress, ends it."""
    cost = Cost(srv)
    t = time.monotonic()
    r, _ = during(srv, "noack", "-n", 6, "--path", "/big.bin")
    assert r["end"] == "repeated", r
    assert time.monotonic() - t < 5
    cost.closed("timeout")
    cost.check()

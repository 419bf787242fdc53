# SPDX-License-Identifier: MIT
"""HTTP/3 across a zero-downtime upgrade (SIGUSR2; a SIGHUP reload takes the
same path). The new master binds its own UDP sockets into the workers'
SO_REUSEPORT group, and the old master's leave it as its workers drain:
datagrams must keep reaching the worker that owns their connection through
both changes, for the old workers' connections while they drain and for the
new workers' connections afterwards (src/http3/h3_bpf.c: the steering map
passed on by the upgrade). A group steered by join order sends them to the
wrong worker once the old sockets leave: every new HTTP/3 connection then
ends in a stateless reset."""

import hashlib
import os
import re
import shutil
import signal
import subprocess
import threading
import time

import pytest

import h3util
from conftest import PITH_BIN, free_port, pid_alive, tls_pki
from h3util import Client
from sdutil import Notify, assert_clean_stderr, environ_of, io_args, wait_until

pytestmark = pytest.mark.full_only("HTTP/3")

BIG = 3 * 1024 * 1024  # the download that spans the upgrade
RATE = 384 * 1024      # its speed, bytes a second: about eight seconds


@pytest.fixture(scope="module", autouse=True)
def _h3_here():
    h3util.need_h3()


def fetch(port, path, client=None):
    c = client or Client(port, cafile=tls_pki()["ca"], timeout=10)
    try:
        status, _, body, version = c.request(path)
        return status, body, version
    finally:
        if client is None:
            c.close()


def test_quic_connections_reach_their_worker_across_an_upgrade(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    big = os.urandom(BIG)
    (root / "big.bin").write_bytes(big)
    (root / "small.txt").write_bytes(b"small\n" * 100)
    mid = os.urandom(256 * 1024)  # many packets each way: ACKs in short headers
    (root / "mid.bin").write_bytes(mid)
    binary = tmp_path / "bin" / "pith"
    binary.parent.mkdir()
    shutil.copy2(PITH_BIN, binary)  # the upgrade executes the file at this path
    pidfile = tmp_path / "pith.pid"
    cert, key = tls_pki()["ecdsa"]
    port, tls_port = free_port(), free_port()
    args = [str(binary)] + io_args() + [
        "--workers", "4", "--addr", "127.0.0.1", "--port", str(port), "--tls-port",
        str(tls_port), "--tls-cert", cert, "--tls-key", key, "--pidfile", str(pidfile),
        "--grace", "20", "--timeout-keepalive", "60", str(root)]
    n = Notify(tmp_path)
    err = open(tmp_path / "err", "w")
    master = subprocess.Popen(args, stderr=err, stdin=subprocess.DEVNULL,
                              env=dict(os.environ, NOTIFY_SOCKET=n.env))
    old, new = master.pid, None
    try:
        n.wait_for("READY=1")
        start = open(tmp_path / "err").read()
        assert "HTTP/3 on udp/%d" % tls_port in start, start
        refused = re.search(r"eBPF refused: ([^;)]*)", start)
        if refused and refused.group(1) in ("Operation not permitted",
                                            "Function not implemented"):
            pytest.skip("this kernel or these capabilities allow no eBPF (%s): classic BPF "
                        "steers by join order, which an upgrade changes (docs/DESIGN.md)"
                        % refused.group(1))
        assert "and eBPF steering" in start, start  # a refusal for any other reason is a defect
        assert fetch(tls_port, "/small.txt")[0] == 200

        # A download over the old workers that lasts past the upgrade.
        slow = Client(tls_port, cafile=tls_pki()["ca"], timeout=30)
        slow.c.setopt(h3util.pycurl.MAX_RECV_SPEED_LARGE, RATE)
        got = {}

        def download():
            try:
                got["slow"] = slow.request("/big.bin")
            except h3util.pycurl.error as e:
                got["slow"] = e

        t = threading.Thread(target=download)
        t.start()
        time.sleep(0.5)
        os.kill(old, signal.SIGUSR2)
        again = n.wait_for("READY=1", timeout=20)
        new = int(again["MAINPID"])
        assert new != old
        env = [e for e in environ_of(new) if e.startswith("PITH_UPGRADE_FROM=")]
        assert len(env) == 1 and re.search(r",h3map=\d+:0$", env[0]), env
        text = open(tmp_path / "err").read()
        assert text.count("and eBPF steering") == 2, text  # the new master took the map

        # While the old master drains (the download holds it): new
        # connections reach the new workers, and their packets keep doing
        # so; one is kept for after the old sockets have gone.
        kept = Client(tls_port, cafile=tls_pki()["ca"], timeout=5)
        status, body, version = fetch(tls_port, "/mid.bin", kept)
        assert (status, body == mid, version) == (200, True, "3"), (status, version)
        for i in range(8):
            c = Client(tls_port, cafile=tls_pki()["ca"], timeout=5)
            status, body, version = fetch(tls_port, "/mid.bin", c)
            c.close()
            assert (status, body == mid, version) == (200, True, "3"), (i, status, version)
        assert pid_alive(old) and t.is_alive(), "the old master was gone: not a test"
        t.join(30)
        assert not t.is_alive(), "the download did not end"
        assert not isinstance(got["slow"], Exception), "the draining download broke: %r" % (
            got["slow"],)
        status, _, body, version = got["slow"]
        assert (status, version) == (200, "3")
        assert hashlib.sha256(body).digest() == hashlib.sha256(big).digest()
        assert slow.connects() == 1, "the download moved to another connection"
        wait_until(lambda: not pid_alive(old), what="the old master's exit", timeout=20)
        assert master.wait(10) == 0

        # The old sockets have left the group: the new workers' connections
        # still reach them, the one kept and twenty fresh ones.
        status, body, version = fetch(tls_port, "/mid.bin", kept)
        assert (status, body == mid, version) == (200, True, "3")
        assert kept.connects() == 1, "the kept connection broke and curl made another"
        for i in range(20):
            status, body, version = fetch(tls_port, "/mid.bin")
            assert (status, body == mid, version) == (200, True, "3"), (i, status, version)
        kept.close()
        slow.close()

        # Once more, from the new master: the next generation's keys.
        older = new
        os.kill(older, signal.SIGUSR2)
        new = int(n.wait_for("READY=1", timeout=20)["MAINPID"])
        env = [e for e in environ_of(new) if e.startswith("PITH_UPGRADE_FROM=")]
        assert len(env) == 1 and re.search(r",h3map=\d+:64$", env[0]), env
        wait_until(lambda: not pid_alive(older), what="the second old master's exit", timeout=20)
        for i in range(10):
            status, body, version = fetch(tls_port, "/mid.bin")
            assert (status, body == mid, version) == (200, True, "3"), (i, status, version)
        os.kill(new, signal.SIGTERM)
        wait_until(lambda: not pid_alive(new), what="the new master's exit", timeout=20)
        assert_clean_stderr(open(tmp_path / "err").read())
    finally:
        for pid in (new, master.pid):
            if pid and pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
        master.wait(5)
        n.close()
        err.close()

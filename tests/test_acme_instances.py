# SPDX-License-Identifier: MIT
"""Automatic HTTPS (issue 35): two pith instances sharing one state
directory order a name once. The test holds the name's lock first, so both
wait; it lets go once the second waits too, and the first (which looks again
sooner) orders while the second takes the certificate it stored, without
ordering (pebble issues one certificate: its log's "Issued certificate"
lines, not its finalize requests, which a refused nonce repeats). And the
CA's validation, which a balancer may send to any instance, is answered by
one that did not order (acme_peers.c: the challenges in challenges/)."""

import fcntl
import os
import struct

import pytest

from acmeutil import Pebble, served, wait_for
from conftest import free_port

pytestmark = pytest.mark.full_only("ACME")


def hold_lock(path):
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0, 0, 0))
    return fd


def test_two_instances_order_once(pith, tmp_path):
    www = tmp_path / "www"
    www.mkdir()
    (www / "who.txt").write_text("a\n")
    hp, tp = free_port(), free_port()
    p = Pebble(tmp_path / "pebble", hp, tp).start()
    try:
        state = tmp_path / "state"
        (state / "locks").mkdir(parents=True)
        fd = hold_lock(str(state / "locks" / "a.test"))
        waiting = "acme: a.test: another instance holds %s/locks/a.test; waiting" % state
        first = pith("--site", "a.test=%s" % www, "--port", str(hp), "--tls-port", str(tp),
                     *p.args(state=str(state)), root=False, env={"PITH_ACME_LOCK_WAIT_S": "1"})
        assert wait_for(lambda: waiting in first.stderr_text(), 10), first.stderr_text()
        second = pith("--site", "a.test=%s" % www, "--tls-port", "0", *p.args(state=str(state)),
                      root=False, env={"PITH_ACME_LOCK_WAIT_S": "6"})
        assert wait_for(lambda: waiting in second.stderr_text(), 10), second.stderr_text()
        os.close(fd)  # the first looks again within a second, the second in six
        assert wait_for(lambda: "acme: a.test: obtained a certificate" in first.stderr_text(),
                        20), first.stderr_text()
        root = p.root()
        cert = wait_for(lambda: served(first.tls_port, "a.test", root), 5)
        assert cert
        assert wait_for(lambda: served(second.tls_port, "a.test", root) == cert, 20), \
            second.stderr_text()
        assert "obtained a certificate" not in second.stderr_text()
        assert p.log_text().count("Issued certificate serial") == 1, p.log_text()
    finally:
        p.stop()


@pytest.mark.parametrize("challenge", ["tls-alpn-01", "http-01"])
def test_validation_reaches_the_instance_that_did_not_order(pith, tmp_path, challenge):
    """Behind a balancer the CA's validation may connect to any instance.
    Here it can only reach the second (pebble's ports are the second's),
    while the first orders: the second answers the challenge the first
    published in the shared state directory (challenges/a.test)."""
    www = tmp_path / "www"
    www.mkdir()
    (www / "who.txt").write_text("a\n")
    hp, tp = free_port(), free_port()
    p = Pebble(tmp_path / "pebble", hp, tp).start()
    try:
        state = tmp_path / "state"
        (state / "locks").mkdir(parents=True)
        fd = hold_lock(str(state / "locks" / "a.test"))
        waiting = "acme: a.test: another instance holds %s/locks/a.test; waiting" % state
        # The one the CA reaches: it looks at the lock again only much later.
        reached = pith("--site", "a.test=%s" % www, "--port", str(hp), "--tls-port", str(tp),
                       *p.args(state=str(state)), root=False,
                       env={"PITH_ACME_LOCK_WAIT_S": "600"})
        assert wait_for(lambda: waiting in reached.stderr_text(), 10), reached.stderr_text()
        env = {"PITH_ACME_LOCK_WAIT_S": "1"}
        if challenge == "http-01":
            env["PITH_ACME_PREFER"] = "http-01"
        orderer = pith("--site", "a.test=%s" % www, "--tls-port", "0",
                       *p.args(state=str(state)), root=False, env=env)
        assert wait_for(lambda: waiting in orderer.stderr_text(), 10), orderer.stderr_text()
        os.close(fd)
        assert wait_for(lambda: "acme: a.test: obtained a certificate" in orderer.stderr_text(),
                        40), (orderer.stderr_text(), reached.stderr_text())
        assert "acme: a.test: validated over %s" % challenge in orderer.stderr_text()
        assert ("acme: a.test: answering the %s challenge of another instance's order"
                % challenge) in reached.stderr_text(), reached.stderr_text()
        assert "obtained a certificate" not in reached.stderr_text()
        assert p.log_text().count("Issued certificate serial") == 1, p.log_text()
        # The challenge is gone from the shared directory once validated.
        assert os.listdir(state / "challenges") == []
    finally:
        p.stop()

# SPDX-License-Identifier: MIT
"""Readiness without systemd: the test binds a NOTIFY_SOCKET (a path, and
an abstract '@name') and reads what pith sends there: READY=1 with MAINPID
and STATUS once every worker serves, RELOADING=1 then READY=1 around a HUP,
STOPPING=1 on TERM, and the new MAINPID after --daemon."""

import os
import signal
import time

import pytest

import http_raw
from conftest import hook_bin
from sdutil import (SETUP_DELAY_MS, Launched, Notify, assert_all_workers_serve,
                    assert_clean_stderr, tcp_listener)


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    (root / "index.html").write_text("ready\n")
    return root


@pytest.mark.parametrize("abstract", [False, True], ids=["path", "abstract"])
def test_ready_reloading_stopping(site, tmp_path, abstract):
    n = Notify(tmp_path, abstract=abstract)
    lsock = tcp_listener()
    port = lsock.getsockname()[1]
    # The test build's workers linger SETUP_DELAY_MS at the end of their
    # setup, before they confine themselves and report (testhook.h): a
    # READY=1 sent before they serve arrives while they are not confined.
    p = Launched(["--workers", "2", str(site)], fds=[lsock],
                 env={"NOTIFY_SOCKET": n.env, "PITH_TEST_SETUP_DELAY_MS": str(SETUP_DELAY_MS)},
                 tmp=tmp_path, binary=hook_bin())
    lsock.close()
    try:
        ready = n.wait_for("READY=1")
        # At once, no waiting: READY=1 means both workers have set up and
        # confined themselves (the last step before they serve).
        assert_all_workers_serve(p.pid, 2, p.text())
        assert ready["MAINPID"] == str(p.pid)
        assert "serving %s on http://127.0.0.1:%d/" % (site, port) in ready["STATUS"]
        with http_raw.Conn(port) as c:
            assert c.exchange("GET", "/").status == 200
        os.kill(p.pid, signal.SIGHUP)
        n.wait_for("RELOADING=1")
        again = n.wait_for("READY=1")
        assert "MAINPID" not in again  # unchanged: said once
        os.kill(p.pid, signal.SIGTERM)
        n.wait_for("STOPPING=1")
        assert p.wait_exit() == 0
        # Nothing after STOPPING=1 claims readiness again.
        stop_at = max(i for i, m in enumerate(n.messages) if "STOPPING=1" in m.split("\n"))
        assert not any("READY=1" in m.split("\n") for m in n.messages[stop_at:])
        assert_clean_stderr(p.text())
    finally:
        p.cleanup()
        n.close()


def test_daemon_sends_its_new_mainpid(site, tmp_path):
    n = Notify(tmp_path)
    pidfile = tmp_path / "pith.pid"
    p = Launched(["--workers", "1", "--addr", "127.0.0.1", "--port", "0", "--daemon",
                  "--pidfile", str(pidfile), str(site)], env={"NOTIFY_SOCKET": n.env},
                 tmp=tmp_path)
    try:
        ready = n.wait_for("READY=1")
        assert p.wait_exit() == 0  # the foreground process left
        daemon = int(pidfile.read_text())
        assert ready["MAINPID"] == str(daemon) and daemon != p.pid
        os.kill(daemon, signal.SIGTERM)
        n.wait_for("STOPPING=1")
        deadline = time.monotonic() + 10
        while os.path.exists("/proc/%d" % daemon):
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        p.cleanup()
        n.close()

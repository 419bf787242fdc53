# SPDX-License-Identifier: MIT
"""Zero-downtime binary upgrade (nginx's model): SIGUSR2 makes the master
execute the binary now at its path with the listeners passed on as for
socket activation; the new master writes the pidfile (the old one's moves
to FILE.oldbin), tells systemd its MAINPID once its workers serve, and
sends the old master TERM, which drains and exits. An h2load run across
the upgrade sees no failed request."""

import os
import re
import shutil
import signal
import subprocess
import time

import pytest

import http_raw
from conftest import PITH_BIN, free_port, hook_bin, pid_alive, proc_children
from sdutil import (SETUP_DELAY_MS, Launched, Notify, assert_all_workers_serve,
                    assert_clean_stderr, environ_of, io_args, read_pid, wait_until)


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    (root / "index.html").write_text("x" * 2000)
    return root


def install_copy(src, dst):
    """Replaces dst atomically with a copy of src (what a package manager
    does): the running master keeps the old file, an upgrade executes the new."""
    tmp = str(dst) + ".new"
    shutil.copy2(src, tmp)
    os.rename(tmp, dst)


def upgrade(pidfile, old):
    """SIGUSR2 to old; waits for the new master in the pidfile and the old
    one's exit. Returns the new master's pid."""
    os.kill(old, signal.SIGUSR2)
    new = wait_until(lambda: (read_pid(pidfile) not in (None, old)) and read_pid(pidfile),
                     what="the new master's pidfile")
    wait_until(lambda: not pid_alive(old), what="the old master's exit")
    return new


def h2load(url, conn):
    """A load of 8 clients: for keep-alive, 10 seconds (three reloads under ASan
    took more than 4 in CI); with Connection: close
    (h2load's -D does not end with it), a count that lasts longer."""
    how = ["-D", "10"] if conn == "keep-alive" else ["-n", "80000", "-H", "Connection: close"]
    return subprocess.Popen(["h2load", "--h1", "-c", "8"] + how + [url],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def h2load_result(p):
    try:
        out, _ = p.communicate(timeout=40)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
        raise AssertionError("h2load did not finish: " + out[-3000:])
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                  r"(\d+) failed, (\d+) errored, (\d+) timeout", out)
    assert m, out
    total, started, done, ok, failed, errored, timeouts = map(int, m.groups())
    return out, ok, failed + errored + timeouts


@pytest.mark.parametrize("conn", ["close", "keep-alive"])
def test_upgrade_under_load_loses_nothing(site, tmp_path, conn):
    # The test build (the same objects with the test hooks): its workers
    # linger SETUP_DELAY_MS before they confine themselves and report, so a
    # READY=1 (and the old master's drain) before the new workers serve is
    # seen. Its own path: the new binary lands there.
    binary = tmp_path / "bin" / "pith"
    binary.parent.mkdir()
    shutil.copy2(hook_bin(), binary)
    pidfile = tmp_path / "pith.pid"
    n = Notify(tmp_path)
    args = [str(binary)] + io_args() + ["--workers", "2", "--addr", "127.0.0.1", "--port", "0",
                                        "--pidfile", str(pidfile), "--grace", "5", str(site)]
    err = open(tmp_path / "err", "w")
    env = dict(os.environ, NOTIFY_SOCKET=n.env, PITH_TEST_SETUP_DELAY_MS=str(SETUP_DELAY_MS))
    master = subprocess.Popen(args, stderr=err, stdin=subprocess.DEVNULL, env=env)
    new = None
    try:
        ready = n.wait_for("READY=1")
        port = int(re.search(r":(\d+)/", ready["STATUS"]).group(1))
        old = master.pid
        assert_all_workers_serve(old, 2, open(tmp_path / "err").read())
        assert read_pid(pidfile) == old
        install_copy(hook_bin(), binary)
        load = h2load("http://127.0.0.1:%d/" % port, conn)
        time.sleep(1)  # the load is running (h2load has no "started" signal)
        os.kill(old, signal.SIGUSR2)
        # systemd learns the new main pid once its workers serve (checked
        # at once), and the old master never said STOPPING=1 (that would
        # stop the service).
        again = n.wait_for("READY=1")
        new = int(again["MAINPID"])
        assert new != old
        workers = assert_all_workers_serve(new, 2, open(tmp_path / "err").read())
        wait_until(lambda: read_pid(pidfile) == new, what="the new master's pidfile")
        wait_until(lambda: not pid_alive(old), what="the old master's exit")
        assert load.poll() is None, "the load ended before the upgrade did: not a test"
        out, ok, bad = h2load_result(load)
        assert bad == 0 and ok > 0, out
        assert not any("STOPPING=1" in m.split("\n") for m in n.messages)
        assert master.wait(10) == 0
        assert not os.path.exists(str(pidfile) + ".oldbin")
        # Its environment got the sockets' variables once, for its own pid.
        env = environ_of(new)
        assert [e for e in env if e.startswith("LISTEN_")] == [
            "LISTEN_FDS=2", "LISTEN_PID=%d" % new, "LISTEN_FDNAMES=http:http"], env
        assert ["PITH_UPGRADE_FROM=%d" % old] == [e for e in env if e.startswith("PITH_UP")]
        # The new master runs the new file, on the same port, from the same path.
        assert os.readlink("/proc/%d/exe" % new) == str(binary)
        assert os.stat("/proc/%d/exe" % new).st_ino == os.stat(binary).st_ino
        with http_raw.Conn(port) as c:
            assert c.exchange("GET", "/").status == 200
        # The same workers serve: none died under the load.
        assert sorted(k for k in proc_children(new) if pid_alive(k)) == sorted(workers)
        text = open(tmp_path / "err").read()
        assert "listeners inherited from the old master" in text
        assert "upgrade: pid %d serves now; pid %d finishes" % (new, old) in text
        os.kill(new, signal.SIGTERM)
        n.wait_for("STOPPING=1")
        wait_until(lambda: not pid_alive(new), what="the new master's exit")
        assert not os.path.exists(pidfile)
        # Both masters' stderr (the new one inherits it), as the harness
        # checks its own servers': no sanitizer report, no worker death.
        assert_clean_stderr(open(tmp_path / "err").read())
    finally:
        for pid in (new, master.pid):
            if pid and pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
        master.wait(5)
        n.close()
        err.close()


def test_upgrade_twice_on_a_unix_socket(site, tmp_path):
    """A second upgrade from a master that was itself an upgrade, on a Unix
    socket, which stays in place across both."""
    path = str(tmp_path / "s.sock")
    pidfile = tmp_path / "pith.pid"
    p = Launched(["--workers", "1", "--addr", "unix:" + path, "--pidfile", str(pidfile),
                  str(site)], tmp=tmp_path)
    pids = []
    try:
        p.wait_start()
        wait_until(lambda: read_pid(pidfile) == p.pid, what="pidfile")
        first = upgrade(pidfile, p.pid)
        assert p.wait_exit() == 0
        second = upgrade(pidfile, first)
        pids = [first, second]
        # An upgraded master's own variables do not shadow the new ones.
        env = environ_of(second)
        assert [e for e in env if e.startswith(("LISTEN_PID", "PITH_UPGRADE_FROM"))] == [
            "LISTEN_PID=%d" % second, "PITH_UPGRADE_FROM=%d" % first], env
        out = subprocess.run(["curl", "-sS", "--unix-socket", path, "http://localhost/"],
                             capture_output=True, text=True, timeout=10)
        assert out.stdout == "x" * 2000, out.stderr
        assert os.path.exists(path)
        os.kill(second, signal.SIGTERM)
        wait_until(lambda: not pid_alive(second), what="exit")
        # The last master of the configuration that bound it removes it.
        assert not os.path.exists(path)
        assert_clean_stderr(p.text())
    finally:
        for pid in pids:
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
        p.cleanup()


def test_failed_upgrade_keeps_the_old_master(site, tmp_path):
    binary = tmp_path / "pith"
    shutil.copy2(PITH_BIN, binary)
    pidfile = tmp_path / "pith.pid"
    master = subprocess.Popen([str(binary)] + io_args() + [
        "--workers", "1", "--addr", "127.0.0.1", "--port", "0", "--pidfile", str(pidfile),
        str(site)], stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        wait_until(lambda: read_pid(pidfile) == master.pid, what="pidfile")
        # The new "binary" cannot start.
        (tmp_path / "fake").write_text("#!/bin/sh\nexit 3\n")
        os.chmod(tmp_path / "fake", 0o755)
        os.rename(tmp_path / "fake", binary)
        os.kill(master.pid, signal.SIGUSR2)
        wait_until(lambda: read_pid(pidfile) == master.pid and
                   not os.path.exists(str(pidfile) + ".oldbin"), what="the pidfile back")
        time.sleep(0.2)
        assert master.poll() is None
        master.send_signal(signal.SIGTERM)
        _, errtext = master.communicate(timeout=15)
        assert master.returncode == 0
        assert "exited with status 3 before it served; this one keeps serving" in errtext
        assert_clean_stderr(errtext)
    finally:
        if master.poll() is None:
            master.kill()
            master.wait()


def test_upgrade_hands_the_status_listener_over(site, tmp_path):
    """--status's listener is a plain socket (no SO_REUSEPORT): the new
    master inherits it (named "status") instead of failing to bind its port,
    and its /healthz and /metrics answer after the old master has gone."""
    port = free_port()
    pidfile = tmp_path / "pith.pid"
    p = Launched(["--workers", "1", "--port", "0", "--addr", "127.0.0.1", "--pidfile",
                  str(pidfile), "--status", "127.0.0.1:%d" % port, str(site)], tmp=tmp_path)
    new = None
    try:
        p.wait_start()
        wait_until(lambda: read_pid(pidfile) == p.pid, what="pidfile")
        wait_until(lambda: http_raw.fetch(port, "/healthz").status == 200, what="healthz 200")
        new = upgrade(pidfile, p.pid)
        assert p.wait_exit() == 0, p.text()
        r = wait_until(lambda: (lambda r: r.status == 200 and r)(http_raw.fetch(port, "/healthz")),
                       what="the new master's healthz")
        assert r.status == 200
        m = http_raw.fetch(port, "/metrics")
        assert m.status == 200 and b"pith_start_time_seconds" in m.body
        assert environ_of(new).count("LISTEN_FDNAMES=http:status") == 1, environ_of(new)
        os.kill(new, signal.SIGTERM)
        wait_until(lambda: not pid_alive(new), what="exit")
        assert_clean_stderr(p.text())
    finally:
        if new and pid_alive(new):
            os.kill(new, signal.SIGTERM)
            wait_until(lambda: not pid_alive(new), what="exit")
        p.cleanup()

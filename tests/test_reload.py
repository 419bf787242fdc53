# SPDX-License-Identifier: MIT
"""SIGHUP with --config (issue 22): the master starts a new master on its
listeners, as the SIGUSR2 upgrade does, which reads the file again; once
its workers serve, the old one drains and exits. A file the new master
refuses makes it exit at once, with the file's line and the reason on the
error log, and the old configuration goes on serving. Under load, across
good and bad reloads, no request fails. Listening ports the file moves are
opened and closed; --workers changes take effect."""

import os
import re
import signal
import subprocess
import time

import pytest

import http_raw
from conftest import PITH_BIN, free_port, listening_ports, pid_alive, proc_children
from sdutil import Notify, io_args, read_pid, wait_until
from test_upgrade import h2load, h2load_result


@pytest.fixture
def roots(tmp_path):
    out = {}
    for name in ("a", "b"):
        d = tmp_path / name
        d.mkdir()
        (d / "index.html").write_bytes(("root %s\n" % name).encode() * 100)
        out[name] = d
    return out


class Master:
    """pith --config CONF with a pidfile and a NOTIFY_SOCKET; the master
    changes with each reload, so it is followed through the pidfile."""

    def __init__(self, tmp_path, conf, *args):
        self.tmp = tmp_path
        self.conf = conf
        self.pidfile = tmp_path / "pith.pid"
        self.notify = Notify(tmp_path)
        self.errpath = tmp_path / "err.log"
        self.err = open(self.errpath, "w")
        argv = [PITH_BIN, "--config", str(conf), "--pidfile", str(self.pidfile)] + io_args() + list(args)
        env = dict(os.environ, NOTIFY_SOCKET=self.notify.env)
        env.pop("PITH_UPGRADE_FROM", None)
        self.first = subprocess.Popen(argv, stderr=self.err, stdin=subprocess.DEVNULL, env=env,
                                      start_new_session=True)
        self.ready = self.notify.wait_for("READY=1")
        self.pids = [self.first.pid]

    @property
    def pid(self):
        return read_pid(self.pidfile)

    def text(self):
        return open(self.errpath).read()

    def reload(self):
        """HUP; waits for the new master in the pidfile and the old one's
        exit. Returns the new master's pid."""
        old = self.pid
        os.kill(old, signal.SIGHUP)
        new = wait_until(lambda: read_pid(self.pidfile) not in (None, old) and read_pid(self.pidfile),
                         what="the new master's pidfile")
        wait_until(lambda: not pid_alive(old), what="the old master's exit")
        self.pids.append(new)
        return new

    def refused_reload(self):
        """HUP with a file the new master refuses: the same master goes on."""
        old = self.pid
        before = self.text().count("before it served")
        os.kill(old, signal.SIGHUP)
        wait_until(lambda: self.text().count("before it served") > before,
                   what="the refused reload's line")
        assert self.pid == old and pid_alive(old)

    def close(self):
        for pid in self.pids:
            if pid_alive(pid):
                os.kill(pid, signal.SIGTERM)
        for pid in self.pids:
            try:
                wait_until(lambda: not pid_alive(pid), timeout=15, what="exit")
            except AssertionError:
                os.killpg(self.first.pid, signal.SIGKILL)
        self.first.wait(5)
        self.notify.close()
        self.err.close()


def conf_text(port, root, workers=2, extra=""):
    return ("addr 127.0.0.1\nport %d\nworkers %d\ngrace 5\n%s\nsite a.test {\n  root %s\n}\n"
            % (port, workers, extra, root))


def get(port, host="a.test", path="/"):
    with http_raw.Conn(port) as c:
        return c.exchange("GET", path, host=host)


def test_hup_reads_the_file_again(roots, tmp_path):
    port = free_port()
    conf = tmp_path / "pith.conf"
    conf.write_text(conf_text(port, roots["a"]))
    m = Master(tmp_path, conf)
    try:
        first = m.pid
        assert get(port).body == (roots["a"] / "index.html").read_bytes()
        conf.write_text(conf_text(port, roots["b"], extra="header X-Reloaded: 1"))
        new = m.reload()
        r = get(port)
        assert r.body == (roots["b"] / "index.html").read_bytes() and r["X-Reloaded"] == "1"
        assert m.first.wait(10) == 0  # the first master drained and exited 0
        text = m.text()
        assert "HUP: reading %s again; new workers take over once they all serve" % conf in text
        assert "HUP: pid %d serves the new configuration now; pid %d finishes" % (new, first) in text
        # systemd: RELOADING=1, then the new master's MAINPID and READY=1.
        again = m.notify.wait_for("READY=1")
        assert again["MAINPID"] == str(new)
        assert any("RELOADING=1" in x.split("\n") for x in m.notify.messages)
        assert not any("STOPPING=1" in x.split("\n") for x in m.notify.messages)
    finally:
        m.close()


def test_a_bad_file_keeps_the_old_configuration(roots, tmp_path):
    port = free_port()
    conf = tmp_path / "pith.conf"
    conf.write_text(conf_text(port, roots["a"]))
    m = Master(tmp_path, conf)
    try:
        pid = m.pid
        workers = sorted(proc_children(pid))
        conf.write_text(conf_text(port, roots["b"]) + "max-age soon\n")
        m.refused_reload()
        text = m.text()
        assert ("pith: %s:9: --max-age: 'soon' is not a number from 0 to 315360000" % conf) in text
        assert re.search(r"HUP: the new master \(pid \d+\) exited with status 2 before it served: "
                         r"the configuration above was not loaded; this one keeps serving", text), text
        # Nothing changed: the same master and workers, the old root.
        assert get(port).body == (roots["a"] / "index.html").read_bytes()
        assert sorted(proc_children(pid)) == workers
        assert read_pid(m.pidfile) == pid and not os.path.exists(str(m.pidfile) + ".oldbin")
        # systemd hears that the reload is over: READY=1 after RELOADING=1.
        m.notify.wait_for("RELOADING=1")
        m.notify.wait_for("READY=1")
        # A root that is missing is refused just as well, and named.
        conf.write_text(conf_text(port, roots["b"] / "gone"))
        m.refused_reload()
        assert ("pith: %s:6: site a.test: cannot serve '%s': No such file or directory"
                % (conf, roots["b"] / "gone")) in m.text()
        # Fixed, the next HUP takes it.
        conf.write_text(conf_text(port, roots["b"]))
        m.reload()
        assert get(port).body == (roots["b"] / "index.html").read_bytes()
    finally:
        m.close()


@pytest.mark.parametrize("conn", ["close", "keep-alive"])
def test_reloads_under_load_lose_nothing(roots, tmp_path, conn):
    port = free_port()
    conf = tmp_path / "pith.conf"
    conf.write_text(conf_text(port, roots["a"]))
    m = Master(tmp_path, conf)
    try:
        load = h2load("http://127.0.0.1:%d/" % port, conn)
        time.sleep(0.8)  # the load is running (h2load has no "started" signal)
        conf.write_text(conf_text(port, roots["b"]))
        m.reload()
        conf.write_text(conf_text(port, roots["a"]) + "bogus\n")
        m.refused_reload()
        conf.write_text(conf_text(port, roots["a"], workers=3))
        m.reload()
        assert load.poll() is None, "the load ended before the reloads did: not a test"
        out, ok, bad = h2load_result(load)
        assert bad == 0 and ok > 0, out
        assert len(wait_until(lambda: len(proc_children(m.pid)) == 3 and proc_children(m.pid),
                              what="3 workers")) == 3
    finally:
        m.close()


def test_a_reload_moves_the_ports(roots, tmp_path):
    """The file's port changes: the new one is bound, the old one closes once
    the old workers drain; the status port moves too."""
    port, port2, sport, sport2 = free_port(), free_port(), free_port(), free_port()
    conf = tmp_path / "pith.conf"
    conf.write_text(conf_text(port, roots["a"], extra="status 127.0.0.1:%d" % sport))
    m = Master(tmp_path, conf)
    try:
        assert get(port).status == 200
        conf.write_text(conf_text(port2, roots["b"], workers=1, extra="status 127.0.0.1:%d" % sport2))
        new = m.reload()
        assert get(port2).body == (roots["b"] / "index.html").read_bytes()
        with pytest.raises(ConnectionRefusedError):
            get(port)
        ports = set(listening_ports(new)) | {p for w in proc_children(new) for p in listening_ports(w)}
        assert port2 in ports and sport2 in ports and port not in ports and sport not in ports, ports
        with http_raw.Conn(sport2) as c:
            c.send(b"GET /healthz HTTP/1.1\r\n\r\n")
            assert c.read_response().status == 200
        assert len(proc_children(new)) >= 1
    finally:
        m.close()


def test_hup_without_config_is_unchanged(pith, docroot):
    """No --config: HUP reopens the log and reloads certificates in the same
    master and workers, as before."""
    s = pith()
    w = s.workers()
    os.kill(s.pid, signal.SIGHUP)
    time.sleep(0.5)
    assert s.workers() == w and pid_alive(s.pid)
    assert "HUP: reading" not in s.stderr_text()
    assert s.get("/index.html").status == 200

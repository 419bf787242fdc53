# SPDX-License-Identifier: MIT
"""pith --check: validates the options, the root, the listener and the
files, prints one readable summary of what pith would do on stdout and
exits 0, or says what is wrong on stderr and exits 2. It never serves,
daemonizes or leaves a file behind."""

import os
import socket
import subprocess

import pytest

from conftest import PITH_BIN
from sdutil import io_args


def check(*args, cwd=None):
    return subprocess.run([PITH_BIN, "--check"] + io_args() + list(args), capture_output=True,
                          text=True, timeout=30, cwd=cwd)


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    return root


def test_valid_configuration_prints_the_plan(site, tmp_path):
    log = tmp_path / "access.log"
    pidfile = tmp_path / "pith.pid"
    p = check("--addr", "127.0.0.1", "--port", "0", "--workers", "3", "--max-conns", "500",
              "--log", str(log), "--pidfile", str(pidfile), "--max-age", "0",
              "--immutable", "*.[0-9a-f]{8}.*", "--no-listing", "--daemon", str(site))
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert out.startswith("pith 0.1.0 --check: the configuration is valid; pith would\n")
    lines = dict(line.split(None, 1) if not line.startswith("  access") else
                 ("access", line.split("log", 1)[1]) for line in out.splitlines()[1:])
    assert lines["serve"].startswith(str(site) + " (paths resolved with ")
    assert lines["listen"] == "on   http://127.0.0.1:0/ (free now)"
    assert lines["workers"].startswith("3, ") and "500 connections each" in lines["workers"]
    assert "Cache-Control: no-cache; a year and immutable for '*.[0-9a-f]{8}.*'" in out
    assert "listing off" in out
    assert lines["access"].strip() == str(log)
    assert lines["pidfile"] == str(pidfile)
    assert lines["run"] == "as a daemon"
    # A check leaves nothing behind and detaches from nothing.
    assert not log.exists() or log.stat().st_size == 0
    assert not pidfile.exists()


@pytest.mark.parametrize("args,want", [
    (["/nonexistent-root"], "cannot serve '/nonexistent-root'"),
    (["--log", "/nonexistent-dir/access.log"], "cannot open the access log"),
    (["--pidfile", "/nonexistent-dir/pith.pid"], "cannot write the pidfile"),
    (["--addr", "not-an-address"], "is not a numeric IPv4 or IPv6 address"),
    (["--port", "70000"], "--port: '70000' is not a number from 0 to 65535"),
    (["--unix-mode", "999"], "--unix-mode: '999' is not an octal mode"),
    (["--bogus"], "unknown option '--bogus'"),
])
def test_invalid_configuration_exits_2(site, args, want):
    root = [] if any(a.startswith("/nonexistent-root") for a in args) else [str(site)]
    p = check(*(args + root))
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert want in p.stderr
    assert p.stdout == ""


def test_unix_socket_path(site, tmp_path):
    plain = tmp_path / "file"
    plain.write_text("x")
    p = check("--addr", "unix:%s" % plain, str(site))
    assert p.returncode == 2 and "it exists and is not a socket" in p.stderr
    path = tmp_path / "pith.sock"
    p = check("--addr", "unix:%s" % path, "--unix-mode", "660", str(site))
    assert p.returncode == 0, p.stderr
    assert "listen on   http://unix:%s:/ (mode 0660)" % path in p.stdout
    assert not path.exists()


def test_port_in_use_is_a_note_not_an_error(site):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    port = s.getsockname()[1]
    try:
        p = check("--addr", "127.0.0.1", "--port", str(port), str(site))
        assert p.returncode == 0, p.stderr
        assert "http://127.0.0.1:%d/ (in use now" % port in p.stdout
    finally:
        s.close()

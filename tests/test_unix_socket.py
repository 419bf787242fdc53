# SPDX-License-Identifier: MIT
"""--addr unix:PATH: a Unix socket with --unix-mode and --unix-owner, for a
local proxy. A stale socket file is replaced, a live one or any other file
is not; the start line shows nginx's spelling of the URL; the access log
names the peer "unix:"; the file is removed at a stop."""

import os
import pwd
import socket
import stat
import subprocess

import pytest

from sdutil import Launched


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    (root / "index.html").write_text("over a unix socket\n")
    return root


def curl(path, target="/"):
    return subprocess.run(["curl", "-sS", "--max-time", "10", "--unix-socket", path,
                           "http://localhost" + target], capture_output=True, text=True)


def test_serves_with_mode_and_log(site, tmp_path):
    path = str(tmp_path / "pith.sock")
    log = tmp_path / "access.log"
    p = Launched(["--addr", "unix:" + path, "--unix-mode", "0640", "--workers", "2",
                  "--log", str(log), str(site)], tmp=tmp_path)
    try:
        m = p.wait_start()
        assert m.group(2) == "http://unix:%s:/" % path
        st = os.lstat(path)
        assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o640
        for _ in range(20):
            out = curl(path)
            assert out.stdout == "over a unix socket\n", out.stderr
        assert p.stop() == 0
        lines = log.read_text().splitlines()
        assert len(lines) == 20
        assert all(line.startswith('unix: - - [') and '"GET / HTTP/1.1" 200 19' in line
                   for line in lines), lines[0]
    finally:
        p.cleanup()
    assert not os.path.exists(path), "the socket file outlived the server"


def test_stale_socket_is_replaced(site, tmp_path):
    path = str(tmp_path / "stale.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.close()  # the file stays, nobody listens
    p = Launched(["--addr", "unix:" + path, "--workers", "1", str(site)], tmp=tmp_path)
    try:
        p.wait_start()
        assert curl(path).stdout == "over a unix socket\n"
        assert p.stop() == 0
    finally:
        p.cleanup()


def test_live_socket_is_not_taken(site, tmp_path):
    path = str(tmp_path / "live.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(1)
    try:
        p = Launched(["--addr", "unix:" + path, "--workers", "1", str(site)], tmp=tmp_path)
        assert p.wait_exit() == 1
        assert "unix:%s is in use" % path in p.text()
        p.cleanup()
        assert os.path.exists(path)
    finally:
        s.close()


def test_other_file_is_not_replaced(site, tmp_path):
    path = tmp_path / "data.txt"
    path.write_text("precious\n")
    p = Launched(["--addr", "unix:%s" % path, "--workers", "1", str(site)], tmp=tmp_path)
    try:
        assert p.wait_exit() == 1
        assert "exists and is not a socket" in p.text()
        assert path.read_text() == "precious\n"
    finally:
        p.cleanup()


def test_owner(site, tmp_path):
    path = str(tmp_path / "owned.sock")
    nobody = pwd.getpwnam("nobody")
    p = Launched(["--addr", "unix:" + path, "--unix-owner", "nobody", "--unix-mode", "600",
                  "--workers", "1", str(site)], tmp=tmp_path)
    try:
        if os.geteuid() == 0:
            p.wait_start()
            st = os.lstat(path)
            assert (st.st_uid, st.st_gid) == (nobody.pw_uid, nobody.pw_gid)
            assert stat.S_IMODE(st.st_mode) == 0o600
            assert p.stop() == 0
        else:  # only root may give a file away
            assert p.wait_exit() == 1
            assert "cannot listen on unix:" in p.text()
    finally:
        p.cleanup()


def test_unknown_owner_exits_1(site, tmp_path):
    p = Launched(["--addr", "unix:%s/x.sock" % tmp_path, "--unix-owner", "nobody:no-such-group",
                  str(site)], tmp=tmp_path)
    try:
        assert p.wait_exit() == 1
        assert "--unix-owner: no such user or group: 'nobody:no-such-group'" in p.text()
    finally:
        p.cleanup()


@pytest.mark.parametrize("mode", ["", "8", "0800", "01777", "7777", "66x", "12345"])
def test_bad_mode_is_a_usage_error(site, tmp_path, mode):
    p = Launched(["--addr", "unix:%s/x.sock" % tmp_path, "--unix-mode", mode, str(site)],
                 tmp=tmp_path)
    try:
        assert p.wait_exit() == 2
        assert "--unix-mode: '%s' is not an octal mode" % mode in p.text()
        assert not os.path.exists(tmp_path / "x.sock")
    finally:
        p.cleanup()

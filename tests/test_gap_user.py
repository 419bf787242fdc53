# SPDX-License-Identifier: MIT
"""--user NAME started as root (README "Security model", DESIGN.md §4): every
worker runs with NAME's uid, gid and supplementary groups (real, effective,
saved and filesystem ids; no root group left), the master stays root, the
log opened before the drop keeps working, and an unknown user exits 1 with
one line. Observed from /proc and through the socket."""

import os
import pwd
import signal
import stat

import pytest

from conftest import run_pith
from gaputil import poll_until, proc_status

USER = "nobody"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="--user needs the tests to run as root")


@pytest.fixture
def world_root(tmp_path):
    """A document root the unprivileged user can reach (pytest's own tmp
    directories are 0700), with one file only root may read."""
    base = tmp_path / "world"
    root = base / "root"
    root.mkdir(parents=True)
    for d in (tmp_path, base, root):
        os.chmod(d, 0o755)
    # tmp_path's parents (pytest-of-root) are 0700: give the user a way in
    # by search permission only, as a real deployment would.
    p = tmp_path
    while str(p) != "/" and str(p).startswith("/tmp/"):
        os.chmod(p, os.stat(p).st_mode | stat.S_IXOTH)
        p = p.parent
    (root / "public.txt").write_bytes(b"readable by anyone\n")
    os.chmod(root / "public.txt", 0o644)
    (root / "private.txt").write_bytes(b"root only\n")
    os.chmod(root / "private.txt", 0o600)
    # The log lives in a directory the user cannot enter: only a log opened
    # before the drop can be written.
    logdir = base / "logs"
    logdir.mkdir()
    os.chmod(logdir, 0o700)
    return str(root), str(logdir / "access.log")


def _ids(status, key):
    return [int(x) for x in status[key]]


def test_workers_drop_to_user_master_stays_root(pith, world_root):
    root, log = world_root
    pw = pwd.getpwnam(USER)
    want_groups = set(os.getgrouplist(USER, pw.pw_gid))
    s = pith("--user", USER, "--log", log, root=root, workers=2)
    workers = s.wait_workers(2)
    assert len(workers) == 2, workers
    for w in workers:
        # A worker drops after fork, once its log is open: wait for it.
        poll_until(lambda: _ids(proc_status(w), "Uid")[0] != 0, 3.0)
        st = proc_status(w)
        # Uid/Gid: real, effective, saved set, filesystem.
        assert _ids(st, "Uid") == [pw.pw_uid] * 4, (w, st["Uid"])
        assert _ids(st, "Gid") == [pw.pw_gid] * 4, (w, st["Gid"])
        groups = set(_ids(st, "Groups"))
        assert groups == want_groups, (w, st["Groups"], want_groups)
        assert 0 not in groups
        # No capability survives the drop.
        assert int(st["CapEff"][0], 16) == 0 and int(st["CapPrm"][0], 16) == 0, st["CapEff"]
    master = proc_status(s.pid)
    assert _ids(master, "Uid") == [0] * 4, master["Uid"]
    assert _ids(master, "Gid")[:2] == [0, 0], master["Gid"]

    # What the workers can open follows from the drop: a file only root may
    # read is refused (403), a public one served.
    r = s.get("/public.txt")
    assert r.status == 200 and r.body == b"readable by anyone\n"
    r = s.get("/private.txt")
    assert r.status == 403, r
    # The log was opened before the drop: its lines arrive although the
    # user cannot enter its directory (flushed at least once a second).
    assert poll_until(lambda: os.path.exists(log) and b"/private.txt" in open(log, "rb").read(),
                      3.0), "no access log line from the unprivileged workers"


def test_restarted_worker_drops_too(pith, world_root):
    """A worker the master restarts drops privileges as the first did (the
    kill is deliberate, like test_process.py's restart tests)."""
    root, _ = world_root
    pw = pwd.getpwnam(USER)
    s = pith("--user", USER, root=root, workers=1, allow_worker_crash=True)  # killed on purpose
    first = s.worker()
    os.kill(first, signal.SIGKILL)
    again = s.wait_workers(1, timeout=5.0, exclude=(first,))
    assert again, "the master did not restart the worker"
    poll_until(lambda: _ids(proc_status(again[0]), "Uid")[0] != 0, 3.0)
    st = proc_status(again[0])
    assert _ids(st, "Uid") == [pw.pw_uid] * 4
    assert _ids(st, "Gid") == [pw.pw_gid] * 4
    assert s.get("/public.txt").status == 200


def test_unknown_user_exits_1(tmp_path):
    p = run_pith("--user", "no-such-user-pith-test", "--port", "0", "--addr", "127.0.0.1",
                 str(tmp_path))
    assert p.returncode == 1, p
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert "no-such-user-pith-test" in lines[0], lines[0]
    assert "serving" not in p.stderr
    assert p.stdout == ""

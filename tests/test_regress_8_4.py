# SPDX-License-Identifier: MIT
"""Regression test for issue 8, defect 4:

    "Log reopen does not work with `--user`. Workers reopen the log as the
    unprivileged user. After logrotate creates a root-owned file, the reopen
    fails and lines keep going to the rotated file. Fix it the way nginx
    does: the master opens the file and hands it to the workers, or creates
    it with the workers' owner. Test: as root with `--user nobody`, rotate,
    send HUP (and USR1), and new lines land in the new file."

Contract (the fixed server), started as root with `--user nobody --log
DIR/access.log` (DIR root-owned, mode 0755, so nobody may traverse it but not
create files in it): after a rotation and HUP or USR1 to the master, the
requests that follow are logged in DIR/access.log, whether logrotate created
a fresh root-owned 0644 file there (`create 0644 root root`) or only renamed
the old one away (then pith creates the file).
"""

import os
import pwd
import shutil
import signal
import stat
import tempfile
import time

import pytest

USER = "nobody"
FLUSH_WAIT = 6.0  # lines are flushed at least once a second


def _nobody():
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        return None


pytestmark = [
    pytest.mark.router_lacks("--user"),
    pytest.mark.skipif(os.geteuid() != 0, reason="--user needs the tests to run as root"),
    pytest.mark.skipif(_nobody() is None, reason="no user %r here" % USER),
]


@pytest.fixture
def logdir():
    # Not under pytest's tmp_path: its parents are 0700, and the workers
    # (as nobody) must reach the log by its path.
    d = tempfile.mkdtemp(prefix="pith-regress-8-4-", dir="/tmp")
    os.chmod(d, 0o755)
    st = os.stat(d)
    assert st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o755
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return b""


def _wait_for(path, needle, timeout=FLUSH_WAIT):
    deadline = time.monotonic() + timeout
    while True:
        if needle in _read(path):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def _logrotate_create(path):
    """What logrotate's `create 0644 root root` leaves behind: a new empty
    file owned by root, mode 0644, whatever the umask."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.fchown(fd, 0, 0)
    os.fchmod(fd, 0o644)
    os.close(fd)


def _uid(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Uid:"):
                return int(line.split()[2])  # the effective uid
    raise AssertionError("no Uid line for pid %d" % pid)


def _rotate_and_check(s, logdir, sig, create):
    log = os.path.join(logdir, "access.log")
    old = log + ".1"
    assert s.get("/before-rotate").status == 404
    # The situation under test: the worker (serving, so past its start-up)
    # runs as nobody, the master as root.
    assert _uid(s.worker()) == _nobody().pw_uid and _uid(s.pid) == 0
    assert _wait_for(log, b"/before-rotate"), "no line in the log before the rotation"
    os.rename(log, old)
    if create:
        _logrotate_create(log)
    before = len(s.stderr_text())
    s.signal(sig)
    # Keep making requests until one shows up in the new file: the signal
    # reaches the worker some time after kill() returns, and a line is
    # flushed within a second.
    deadline = time.monotonic() + FLUSH_WAIT
    i = 0
    found = False
    while not found and time.monotonic() < deadline:
        i += 1
        assert s.get("/after-rotate-%d" % i).status == 404
        time.sleep(0.2)
        found = b"/after-rotate-" in _read(log)
    said = s.stderr_text()[before:]
    assert s.proc.poll() is None, "the master died after the signal"
    assert found, ("after %s no request reached the new %s (%d sent); %s has:\n%r\n"
                   "stderr since the signal:\n%s" % (
                       signal.Signals(sig).name, log, i, old, _read(old)[-600:], said))
    assert b"/before-rotate" in _read(old)
    assert b"/before-rotate" not in _read(log)
    assert os.path.exists(log)
    # Later lines keep going to the new file, and the old one gets no more.
    old_size = len(_read(old))
    assert s.get("/later").status == 404
    assert _wait_for(log, b"/later"), "a later request is not in the new file"
    assert len(_read(old)) == old_size, "the rotated file still grows"


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGUSR1], ids=["HUP", "USR1"])
def test_reopen_after_logrotate_create(pith, logdir, sig):
    s = pith("--user", USER, "--log", os.path.join(logdir, "access.log"))
    _rotate_and_check(s, logdir, sig, create=True)


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGUSR1], ids=["HUP", "USR1"])
def test_reopen_after_rename_only(pith, logdir, sig):
    # No new file: pith itself must create DIR/access.log, which nobody
    # cannot do in a root-owned 0755 directory.
    s = pith("--user", USER, "--log", os.path.join(logdir, "access.log"))
    _rotate_and_check(s, logdir, sig, create=False)


def _batch_lands(s, log, tag, n=20):
    """Sends n requests tagged `tag`, waits for the flush, and tells whether
    every one of them is in the file log."""
    for k in range(n):
        assert s.get("/%s-%d" % (tag, k)).status == 404
    want = [b"/%s-%d " % (tag.encode(), k) for k in range(n)]
    deadline = time.monotonic() + 2.5  # one flush period and some
    while True:
        data = _read(log)
        if all(w in data for w in want):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def test_reopen_twice_with_two_workers(pith, logdir):
    # Both workers follow two rotations in a row. Fresh connections are
    # spread over both workers' listeners, so a batch of 20 lands entirely
    # in the new file only once both workers have reopened it.
    log = os.path.join(logdir, "access.log")
    s = pith("--user", USER, "--log", log, workers=2)
    assert len(s.wait_workers(2)) == 2
    for n in (1, 2):
        assert _batch_lands(s, log, "round%d-before" % n)
        rotated = "%s.%d" % (log, n)
        os.rename(log, rotated)
        _logrotate_create(log)
        s.signal(signal.SIGHUP)
        deadline = time.monotonic() + FLUSH_WAIT
        b = 0
        while True:
            b += 1
            if _batch_lands(s, log, "round%d-after%d" % (n, b)):
                break
            assert time.monotonic() < deadline, (
                "round %d: after HUP, requests still do not all reach the new file;\n"
                "stderr:\n%s" % (n, s.stderr_text()[-2000:]))
        size = len(_read(rotated))
        assert _batch_lands(s, log, "round%d-final" % n)
        assert len(_read(rotated)) == size, "round %d: the rotated file still grows" % n

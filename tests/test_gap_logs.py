# SPDX-License-Identifier: MIT
"""Log and pidfile failures (README "Logs", "Signals & exit codes"): a
pidfile or access-log path that cannot be written exits 1 with one line on
stderr and serves nothing; when writing the access log fails at run time
(--log /dev/full: every write is ENOSPC) pith keeps serving, and the failure
is reported once on stderr however many flushes fail."""

import os
import time

import pytest

from conftest import run_pith

BAD_PATHS = [
    ("/nonexistent-pith-dir/x", "No such file or directory"),  # a missing directory
    ("/proc/pith-test-x", None),  # /proc takes no new files
    (None, "Is a directory"),  # a directory (tmp_path)
]


@pytest.mark.parametrize("flag", ["--pidfile", "--log"])
@pytest.mark.parametrize("path,reason", BAD_PATHS)
def test_unwritable_path_exits_1(tmp_path, flag, path, reason):
    path = path or str(tmp_path)
    root = tmp_path / "root"
    root.mkdir()
    p = run_pith(flag, path, "--port", "0", "--addr", "127.0.0.1", "--workers", "1", str(root))
    assert p.returncode == 1, p
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert path in lines[0], lines[0]
    if reason:
        assert lines[0].endswith(reason), lines[0]
    assert "serving" not in p.stderr and p.stdout == ""
    # Nothing was left behind where the file was asked for.
    assert not os.path.exists(path) or os.path.isdir(path)


FAIL_LINE = 'write to the access log "/dev/full" failed: No space left on device'


def test_log_write_failure_reported_once_and_serving_goes_on(pith, docroot):
    s = pith("--log", "/dev/full")
    # Requests over about 3.5 s: the worker writes its buffered lines at
    # least once a second, so several writes fail.
    deadline = time.monotonic() + 3.5
    n = 0
    with s.conn() as c:
        while time.monotonic() < deadline:
            r = c.exchange("GET", "/1k.bin", {"User-Agent": "pith-test " + "u" * 200})
            assert r.status == 200 and r.body == docroot.files["1k.bin"]
            n += 1
            time.sleep(0.01)
    for _ in range(20):  # new connections too, and a 404 each
        assert s.get("/missing-%d" % n).status == 404
    # Past one more flush interval before counting.
    time.sleep(1.3)
    assert s.get("/index.html").status == 200
    err = s.stderr_text()
    assert err.count(FAIL_LINE) == 1, "want the failure reported once after %d requests:\n%s" % (
        n, err)
    # The stop flushes once more (and fails again): still one line.
    problems = s.stop()
    assert problems == []
    err = s.stderr_text()
    assert err.count(FAIL_LINE) == 1, err
    assert len([l for l in err.splitlines() if "access log" in l]) == 1, err

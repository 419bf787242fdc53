# SPDX-License-Identifier: MIT
"""--io: the event loop backend. auto picks io_uring where the kernel allows
it and otherwise falls back to epoll saying why in one line; a forced
backend that cannot run is a start-up failure (exit 1); the start line
names the backend that runs. The behaviour of each backend is the whole
suite, which `make test` runs once per backend (PITH_IO)."""

import re

import pytest

from conftest import PithServer, run_pith, uring_cannot_run


def _start_line_backend(server):
    m = re.search(r"\(\d+ workers?, ([^,]+), [^)]*\)", server.start_line)
    assert m, server.start_line
    return m.group(1)


def _uring_unavailable():
    """Why io_uring cannot run here, or None."""
    p = run_pith("--io", "uring", "--port", "0", "/nonexistent-pith-probe")
    m = re.search(r"io_uring cannot run here: (.*)", p.stderr)
    return m.group(1) if m else None


def test_io_bad_value_exits_2():
    p = run_pith("--io", "kqueue", ".")
    assert p.returncode == 2
    assert "--io" in p.stderr and "kqueue" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_io_epoll_named_in_start_line(docroot):
    s = PithServer(docroot.root, ["--io", "epoll"]).start()
    try:
        assert _start_line_backend(s) == "epoll"
        assert s.get("/").status == 200
    finally:
        assert s.stop() == []


@pytest.mark.full_only("io_uring (--io uring / auto)")
def test_io_uring_named_in_start_line(docroot):
    why = _uring_unavailable()
    if why:
        uring_cannot_run(why)  # a failure, unless PITH_ALLOW_NO_URING=1
    s = PithServer(docroot.root, ["--io", "uring"]).start()
    try:
        assert _start_line_backend(s) == "io_uring"
        assert s.get("/").status == 200
    finally:
        assert s.stop() == []


@pytest.mark.full_only("io_uring (--io uring / auto)")
def test_auto_falls_back_to_epoll_with_one_line(docroot):
    s = PithServer(docroot.root, [], env={"PITH_NO_URING": "1"})
    # The fixture's PITH_IO must not force a backend here: this is auto.
    s.argv = [a for i, a in enumerate(s.argv)
              if a != "--io" and (i == 0 or s.argv[i - 1] != "--io")]
    s.start()
    try:
        assert _start_line_backend(s) == "epoll"
        why = [l for l in s.stderr_text().splitlines() if "io_uring" in l]
        assert len(why) == 1, s.stderr_text()
        assert "disabled by PITH_NO_URING=1" in why[0] and "using epoll" in why[0]
        assert s.get("/index.html").status == 200
    finally:
        assert s.stop() == []


@pytest.mark.full_only("io_uring (--io uring / auto)")
def test_forced_uring_that_cannot_run_exits_1(docroot):
    p = run_pith("--io", "uring", "--port", "0", docroot.root, env={"PITH_NO_URING": "1"})
    assert p.returncode == 1
    assert "io_uring cannot run here" in p.stderr
    assert "serving" not in p.stderr

# SPDX-License-Identifier: MIT
"""Regression test for issue 8, defect 9:

    "No file-descriptor budget.
    - At start, compare RLIMIT_NOFILE with what a worker can need: max-conns +
      cache-entries + listeners + logs + slack. Raise the soft limit up to the
      hard one.
    - If it is still short, exit 2 with one line that names the flag to lower.
    - Today the shortage shows up later, as 503s and accept pauses."

Contract (the fixed server): the need is about 2*max_conns + cache_entries +
64 descriptors per worker. pith raises its soft limit towards the hard one;
when the hard limit is still short it exits 2 before the start line with
exactly one stderr line `pith: ...` that contains `file descriptors`,
`--max-conns` and `--cache-entries`. A limit that is big enough, or that can
be raised far enough, starts as before.
"""

import os
import resource
import signal
import subprocess

import pytest

from conftest import PITH_BIN, PITH_IO, SANITIZER_RE, START_RE, PithServer, _Reader, proc_children

pytestmark = pytest.mark.router_lacks("the descriptor budget (--max-conns, --cache-entries)")

DEFAULT_MAX_CONNS = 1024
DEFAULT_CACHE_ENTRIES = 1024
NEED_DEFAULTS = 2 * DEFAULT_MAX_CONNS + DEFAULT_CACHE_ENTRIES
# A hard limit this process may hand down (raising one needs CAP_SYS_RESOURCE,
# which even root may lack in a container).
HARD = min(resource.getrlimit(resource.RLIMIT_NOFILE)[1], 100000)


def prlimit_argv(soft, hard, args):
    return ["prlimit", "--nofile=%d:%d" % (soft, hard), "--", PITH_BIN] + list(args)


def run_limited(soft, hard, args, timeout=10.0):
    """Runs pith under a descriptor limit. Returns (exit status, stderr text);
    the status is None when pith started serving instead of exiting (it is
    then killed at once, without waiting for the timeout)."""
    p = subprocess.Popen(prlimit_argv(soft, hard, args), stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         start_new_session=True)
    err = _Reader(p.stderr)
    err.start()
    started = err.wait_for(lambda t: any(START_RE.match(l) for l in t.splitlines()), timeout)
    rc = None
    if started is None:
        try:
            rc = p.wait(5)  # stderr closed: the process is exiting
        except subprocess.TimeoutExpired:
            pass
    if rc is None:
        workers = proc_children(p.pid)
        os.killpg(p.pid, signal.SIGKILL)
        for w in workers:
            try:
                os.kill(w, signal.SIGKILL)
            except ProcessLookupError:
                pass
    p.wait(5)
    err.join(3)
    text = err.text()
    assert not SANITIZER_RE.search(text), "sanitizer report:\n" + text
    return rc, text


def start_limited(pith, soft, hard, *flags, workers=1):
    """Starts a server under prlimit through the conftest machinery, so the
    fixture stops it and checks for sanitizer reports. prlimit execs pith,
    so the started pid is the master's."""
    s = PithServer(pith.docroot.root, flags, workers=workers)
    s.argv = ["prlimit", "--nofile=%d:%d" % (soft, hard), "--"] + s.argv
    pith.servers.append(s)
    return s.start()


def nofile_limits(pid):
    with open("/proc/%d/limits" % pid) as f:
        for line in f:
            if line.startswith("Max open files"):
                soft, hard = line.split()[3:5]
                return int(soft), int(hard)
    raise AssertionError("no 'Max open files' in /proc/%d/limits" % pid)


def common_args(*flags):
    args = ["--port", "0", "--addr", "127.0.0.1", "--workers", "1"]
    if PITH_IO:
        args += ["--io", PITH_IO]
    return args + list(flags)


def test_short_hard_limit_is_a_usage_error(docroot):
    # 256 descriptors cannot hold 1024 connections: refuse at start, exit 2.
    rc, err = run_limited(256, 256, common_args("--max-conns", "1024", docroot.root))
    assert rc is not None, "pith started under a 256-descriptor limit with --max-conns 1024:\n" + err
    assert rc == 2, "exit status %r, stderr:\n%s" % (rc, err)
    lines = err.splitlines()
    assert len(lines) == 1 and err.endswith("\n"), "not one line:\n" + err
    line = lines[0]
    assert line.startswith("pith: "), line
    assert "file descriptors" in line, line
    assert "--max-conns" in line and "--cache-entries" in line, line
    assert not START_RE.match(line), line


def test_short_limit_with_defaults_is_a_usage_error(docroot):
    # The defaults (1024 connections, 1024 cache entries) need far more than
    # 256; the soft limit cannot be raised past the hard one.
    rc, err = run_limited(256, 256, common_args(docroot.root))
    assert rc == 2, "exit status %r (None: it started), stderr:\n%s" % (rc, err)
    assert len(err.splitlines()) == 1 and "file descriptors" in err, err
    assert not any(START_RE.match(l) for l in err.splitlines()), err


def test_soft_limit_raised_to_the_need(pith):
    # Soft 256, a roomy hard limit (100000 where allowed): pith raises its
    # soft limit, so every worker runs with enough descriptors for the defaults.
    if HARD < NEED_DEFAULTS + 100:
        pytest.skip("the hard descriptor limit here (%d) is too small for this test" % HARD)
    s = start_limited(pith, 256, HARD)
    for pid in [s.pid] + [s.worker()]:
        soft, hard = nofile_limits(pid)
        assert hard == HARD, (pid, soft, hard)
        assert soft >= NEED_DEFAULTS, "pid %d has a soft limit of %d descriptors, needs %d" % (
            pid, soft, NEED_DEFAULTS)
    assert s.get("/index.html").status == 200


def test_small_settings_start_under_a_small_limit(pith, docroot):
    # 2*50 + 50 + slack fits in 256: no refusal when the settings are small.
    s = start_limited(pith, 256, 256, "--max-conns", "50", "--cache-entries", "50")
    r = s.get("/index.html")
    assert r.status == 200 and r.body == docroot.files["index.html"]
    assert nofile_limits(s.worker()) == (256, 256)


def test_small_limit_message_names_both_flags_for_cache(docroot):
    # Few connections but a huge open-file cache: still short, and the line
    # still names both flags, so the operator sees which one to lower.
    rc, err = run_limited(256, 256, common_args("--max-conns", "10", "--cache-entries", "5000",
                                                docroot.root))
    assert rc == 2, "exit status %r (None: it started), stderr:\n%s" % (rc, err)
    line = err.strip()
    assert "\n" not in line and line.startswith("pith: "), err
    assert "--max-conns" in line and "--cache-entries" in line and "file descriptors" in line

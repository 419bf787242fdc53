# SPDX-License-Identifier: MIT
"""Access log: combined format, flushed promptly, one line per request
whatever the client sends, reopened on HUP/USR1, `--log -` to stdout."""

import calendar
import os
import re
import signal
import time

import pytest

COMBINED_RE = re.compile(
    r'^(?P<ip>\S+) - - \[(?P<d>\d{2})/(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)/'
    r'(?P<y>\d{4}):(?P<H>\d{2}):(?P<M>\d{2}):(?P<S>\d{2}) \+0000\] '
    r'"(?P<req>(?:[^"\\]|\\.)*)" (?P<status>\d{3}) (?P<size>\d+|-) '
    r'"(?P<ref>(?:[^"\\]|\\.)*)" "(?P<ua>(?:[^"\\]|\\.)*)"$'
)
MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
FLUSH_WAIT = 3.0


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return b""


def _wait_lines(path, pred, timeout=FLUSH_WAIT):
    """Waits until pred(list of complete lines) holds; returns the lines."""
    deadline = time.monotonic() + timeout
    while True:
        data = _read(path)
        lines = data.split(b"\n")[:-1]
        if pred(lines) or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def _line_time(m):
    return calendar.timegm((int(m["y"]), MONTHS.index(m["mon"]) + 1, int(m["d"]), int(m["H"]),
                            int(m["M"]), int(m["S"]), 0, 0, 0))


def test_combined_format(pith, tmp_path, docroot):
    log = tmp_path / "access.log"
    s = pith("--log", str(log))
    r = s.get("/index.html", headers=[("Referer", "http://ref.example/page"),
                                      ("User-Agent", "pith-test/1.0 (x)")])
    assert r.status == 200
    lines = _wait_lines(log, lambda ls: len(ls) >= 1)
    assert len(lines) == 1, lines
    m = COMBINED_RE.match(lines[0].decode("utf-8"))
    assert m, lines[0]
    assert m["ip"] == "127.0.0.1"
    assert m["req"] == "GET /index.html HTTP/1.1"
    assert m["status"] == "200"
    assert m["size"] == str(len(docroot.files["index.html"]))
    assert m["ref"] == "http://ref.example/page"
    assert m["ua"] == "pith-test/1.0 (x)"
    assert abs(_line_time(m) - time.time()) < 10


def test_log_fields_absent_and_statuses(pith, tmp_path):
    log = tmp_path / "access.log"
    s = pith("--log", str(log))
    with s.conn() as c:
        c.request("GET", "/nope")
        c.read_response()
        c.request("HEAD", "/index.html", version="HTTP/1.0", host=None)
        c.read_response("HEAD")
    lines = _wait_lines(log, lambda ls: len(ls) >= 2)
    assert len(lines) == 2, lines
    m1 = COMBINED_RE.match(lines[0].decode())
    m2 = COMBINED_RE.match(lines[1].decode())
    assert m1 and m2, lines
    assert (m1["req"], m1["status"], m1["ref"], m1["ua"]) == ("GET /nope HTTP/1.1", "404", "-", "-")
    assert (m2["req"], m2["status"]) == ("HEAD /index.html HTTP/1.0", "200")
    assert m2["size"] in ("0", "-")


def test_log_flushed_within_2s(pith, tmp_path):
    log = tmp_path / "access.log"
    s = pith("--log", str(log))
    with s.conn() as c:
        assert c.exchange("GET", "/style.css").status == 200
        # The connection stays open: the line must not wait for its close.
        t0 = time.monotonic()
        lines = _wait_lines(log, lambda ls: len(ls) >= 1, timeout=2.5)
        assert lines, "nothing in the log %.1f s after the request" % (time.monotonic() - t0)


# Each entry: (marker, raw request, must_be_logged)
HOSTILE = [
    ("q1", b'GET /q1-"quoted" HTTP/1.1\r\nHost: x\r\n'
           b'User-Agent: ua" 200 0 "forged\r\nReferer: ref"\\"x\r\n\r\n', True),
    ("q2", b"GET /q2-%0aforged%0d%0a HTTP/1.1\r\nHost: x\r\n"
           b"User-Agent: caf\xe9 \xff\\x1b\r\n\r\n", True),
    ("q3", b"GET /q3-\\ HTTP/1.1\r\nHost: x\r\nReferer: \\\"\r\n"
           b"User-Agent: trailing backslash\\\r\n\r\n", True),
    ("e1", b"GET /e1 HTTP/1.1\r\nHost: x\r\nUser-Agent: a\x1b[31mred\r\n\r\n", False),
    ("e2", b"GET /e2\x1b[2J HTTP/1.1\r\nHost: x\r\n\r\n", False),
    ("e3", b"GET /e3 HTTP/1.1\r\nHost: x\r\nUser-Agent: a\nb\r\n\r\n", False),
    ("e4", b"GET /e4 HTTP/1.1\nHost: x\n127.0.0.1 - - [01/Jan/2000:00:00:00 +0000] "
           b"\"GET /forged HTTP/1.1\" 200 1 \"-\" \"-\"\n\n", False),
    ("e5", b"GET /e5\r\nforged HTTP/1.1\r\nHost: x\r\n\r\n", False),
    ("e6", b"GET /e6 HTTP/1.1\r\nHost: x\r\nReferer: a\rb\r\n\r\n", False),
]


def test_hostile_bytes_cannot_forge_lines(pith, tmp_path):
    log = tmp_path / "access.log"
    s = pith("--log", str(log))
    for marker, req, _ in HOSTILE:
        with s.conn() as c:
            c.send(req)
            r = c.read_response()
            assert r.status in (200, 400, 404), (marker, r)
    # One more request, so that everything before it is surely flushed.
    s.get("/last-marker")
    lines = _wait_lines(log, lambda ls: any(b"last-marker" in l for l in ls))
    data = _read(log)
    assert data.endswith(b"\n")
    for l in lines:
        assert not re.search(rb"[\x00-\x1f\x7f]", l), "control byte in a log line: %r" % l
        assert COMBINED_RE.match(l.decode("utf-8", "replace")), "malformed log line: %r" % l
    for marker, _, must in HOSTILE:
        n = sum(1 for l in lines if (b"/" + marker.encode()) in l)
        if must:
            assert n == 1, "%s: %d lines:\n%s" % (marker, n, b"\n".join(lines).decode("latin-1"))
        else:
            assert n <= 1, "%s: %d lines:\n%s" % (marker, n, b"\n".join(lines).decode("latin-1"))
    assert not any(b'"GET /forged HTTP/1.1"' in l for l in lines)
    assert sum(1 for l in lines if b"last-marker" in l) == 1
    # Exactly one line per request, the rejected ones included.
    assert len(lines) == len(HOSTILE) + 1, b"\n".join(lines).decode("latin-1")


def test_quote_in_user_agent_is_escaped(pith, tmp_path):
    log = tmp_path / "access.log"
    s = pith("--log", str(log))
    s.get("/ua-test", headers=[("User-Agent", 'x" 200 0 "y')])
    lines = _wait_lines(log, lambda ls: len(ls) >= 1)
    assert len(lines) == 1
    m = COMBINED_RE.match(lines[0].decode())
    assert m, lines[0]
    assert m["status"] == "404"
    assert m["ua"] != "x" and "200 0" in m["ua"]


@pytest.mark.parametrize("sig", [signal.SIGUSR1, signal.SIGHUP])
def test_signal_reopens_log(pith, tmp_path, sig):
    log = tmp_path / "access.log"
    old = tmp_path / "access.log.1"
    s = pith("--log", str(log))
    s.get("/before-rotate")
    assert _wait_lines(log, lambda ls: len(ls) >= 1)
    os.rename(log, old)
    s.signal(sig)
    deadline = time.monotonic() + 5
    i = 0
    found = False
    while time.monotonic() < deadline and not found:
        i += 1
        assert s.get("/after-rotate-%d" % i).status == 404
        time.sleep(0.2)
        found = any(b"after-rotate" in l for l in _read(log).split(b"\n"))
    assert pid_alive_after(s)
    assert found, "no line in the new log file after the signal"
    assert b"before-rotate" in _read(old)
    assert b"before-rotate" not in _read(log)


def pid_alive_after(s):
    return s.proc.poll() is None


def test_log_to_stdout(pith):
    s = pith("--log", "-", stdout_pipe=True)
    s.get("/stdout-marker", headers=[("User-Agent", "ua-stdout")])
    text = s.out.wait_for(lambda t: "stdout-marker" in t, FLUSH_WAIT)
    assert text is not None, "no log line on stdout"
    line = [l for l in text.splitlines() if "stdout-marker" in l][0]
    m = COMBINED_RE.match(line)
    assert m and m["status"] == "404" and m["ua"] == "ua-stdout", line


def test_no_log_by_default_on_stdout(pith):
    s = pith(stdout_pipe=True)
    assert s.get("/quiet-marker").status == 404
    # Workers flush log lines at least once a second: wait well past that
    # (FLUSH_WAIT, as long as the tests above allow a line to take) before
    # concluding that nothing comes. Nothing at all is written to stdout.
    text = s.out.wait_for(lambda t: t != "", FLUSH_WAIT)
    assert text is None, "stdout without --log: %r" % text


@pytest.mark.parametrize("log", [None, "-"], ids=["no-log", "stdout"])
@pytest.mark.parametrize("sig", [signal.SIGUSR1, signal.SIGHUP])
def test_reopen_signal_without_a_log_file(pith, tmp_path, log, sig):
    """HUP/USR1 with no log file to reopen (none, or stdout) changes
    nothing: no error line, no file named "-" made in the working
    directory, and pith serves on."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    s = pith(*(["--log", log] if log else []), cwd=str(cwd), stdout_pipe=True)
    before = len(s.stderr_text())
    s.signal(sig)
    time.sleep(0.5)
    for _ in range(3):
        assert s.get("/index.html").status == 200
    assert s.stderr_text()[before:] == "", s.stderr_text()[before:]
    assert list(cwd.iterdir()) == [], list(cwd.iterdir())

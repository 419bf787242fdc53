# SPDX-License-Identifier: MIT
"""--log-format combined|json (issue 13, "observability"). combined, the
default, stays the standard combined format byte for byte, so GoAccess
(--log-format=COMBINED) parses every line; json is one object per line that
a strict JSON parser reads back exactly, whatever the client sent in the
target, the referer and the user agent (quotes, backslashes, tabs, invalid
UTF-8, valid multi-byte UTF-8), with the duration in microseconds and the
encoding sent."""

import json
import os
import re
import shutil
import subprocess

import pytest

from opsnet_util import v1, wait_lines

def _send(s, data):
    with s.conn() as c:
        c.send(data)
        return c.read_response()


def test_json_is_exact_on_hostile_input(pith, tmp_path, docroot):
    log = tmp_path / "access.log"
    s = pith("--log", str(log), "--log-format", "json")
    ua = b'a"b\\c\td \xff\xfe\xc3\xa9\xe2\x80\xa8\xed\xa0\x80 z'  # \xed\xa0\x80: a surrogate
    ref = b'http://x/\\u0000"}{"evil":1'
    r = _send(s, b'GET /index.html?q="\\" HTTP/1.1\r\nHost: x\r\nUser-Agent: ' + ua +
              b"\r\nReferer: " + ref + b"\r\n\r\n")
    assert r.status == 200
    r = _send(s, b"GET /index.html HTTP/1.0\r\n\r\n")
    assert r.status == 200
    r = _send(s, b"GET /x\x01 HTTP/1.1\r\nHost: x\r\n\r\n")  # rejected before a request line
    assert r.status == 400
    lines = wait_lines(log, 3)
    assert len(lines) == 3, lines
    objs = []
    for line in lines:
        line.decode("utf-8")  # every line is valid UTF-8 ...
        objs.append(json.loads(line))  # ... and strict JSON
    a, b, c = objs
    # Invalid UTF-8 bytes come out as U+00XX, valid sequences as themselves.
    assert a["user_agent"] == 'a"b\\c\td \u00ff\u00fe\u00e9\u2028\u00ed\u00a0\u0080 z', a
    assert a["referer"] == 'http://x/\\u0000"}{"evil":1'
    assert "evil" not in a
    assert a["target"] == '/index.html?q="\\"'
    assert a["method"] == "GET" and a["protocol"] == "HTTP/1.1" and a["status"] == 200
    assert a["bytes"] == len(docroot.files["index.html"])
    assert a["remote_addr"] == "127.0.0.1"
    assert a["encoding"] is None
    assert isinstance(a["duration_us"], int) and 0 <= a["duration_us"] < 10_000_000
    assert a["time"].endswith("Z") and len(a["time"]) == 20
    assert b["protocol"] == "HTTP/1.0" and b["referer"] is None and b["user_agent"] is None
    assert c["status"] == 400 and c["method"] is None and c["target"] is None
    assert c["protocol"] is None
    assert set(a) == {"time", "remote_addr", "method", "target", "protocol", "status", "bytes",
                      "referer", "user_agent", "duration_us", "encoding", "tls"}


def test_json_duration_counts_the_response(pith, tmp_path):
    """A response the client reads slowly takes longer than one it reads at
    once: the duration ends when the last byte went to the kernel. 12 MiB is
    more than the socket buffers hold (tcp_wmem's 4 MiB maximum and a 64 KiB
    receive buffer), so pith must wait for the client's sleep."""
    www = tmp_path / "www"
    www.mkdir()
    (www / "opsnet-big.bin").write_bytes(os.urandom(12 << 20))
    log = tmp_path / "access.log"
    s = pith("--log", str(log), "--log-format", "json", root=str(www))
    with s.conn(rcvbuf=65536) as c:
        c.send(b"GET /opsnet-big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        import time
        time.sleep(0.3)  # the socket fills; pith waits for the client
        assert c.read_response().status == 200
    line = json.loads(wait_lines(log, 1)[0])
    assert line["bytes"] == 12 << 20
    assert line["duration_us"] >= 250_000, line


def test_combined_default_and_goaccess(pith, tmp_path):
    """The default is the combined format exactly; GoAccess parses it all,
    the real client address (from a PROXY header) included."""
    goaccess = shutil.which("goaccess")
    if not goaccess:
        pytest.fail("goaccess is not installed (Debian package goaccess; scripts/deps check "
                    "installs it)")
    log = tmp_path / "access.log"
    s = pith("--log", str(log), "--proxy-protocol", "--trusted-proxy", "127.0.0.1")
    for i in range(3):
        r = _send(s, v1("203.0.113.%d" % (i + 1)) + b"GET /index.html HTTP/1.1\r\nHost: x\r\n"
                  b"Referer: http://ref.example/\r\nUser-Agent: Mozilla/5.0 \"q\" \\ \xff\r\n\r\n")
        assert r.status == 200
    r = _send(s, v1("2001:db8::5") + b"GET /nope HTTP/1.0\r\n\r\n")
    assert r.status == 404
    lines = wait_lines(log, 4)
    assert len(lines) == 4
    pat = re.compile(rb'^(\S+) - - \[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d \+0000\] '
                     rb'"([^"]*)" (\d{3}) (\d+) "([^"]*)" "([^"]*)"$')
    for line in lines:
        assert pat.match(line), line
    assert [l.split(b" ")[0] for l in lines] == [b"203.0.113.1", b"203.0.113.2", b"203.0.113.3",
                                                 b"2001:db8::5"]
    assert lines[0].endswith(b'"http://ref.example/" "Mozilla/5.0 \\x22q\\x22 \\x5C \\xFF"')
    out = tmp_path / "report.json"
    p = subprocess.run([goaccess, str(log), "--log-format=COMBINED", "--no-global-config",
                        "-o", str(out)], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p
    report = json.loads(out.read_text())
    general = report["general"]
    assert general["total_requests"] == 4 and general["valid_requests"] == 4, general
    assert general["failed_requests"] == 0, general
    hosts = sorted((h["data"], h["hits"]["count"]) for h in report["hosts"]["data"])
    assert hosts == [("2001:db8::5", 1), ("203.0.113.1", 1), ("203.0.113.2", 1),
                     ("203.0.113.3", 1)], hosts


def test_usage_error(tmp_path):
    from conftest import PITH_BIN
    p = subprocess.run([PITH_BIN, "--log-format", "xml", str(tmp_path)], capture_output=True,
                       text=True, timeout=10)
    assert p.returncode == 2 and "--log-format: 'xml' is not one of combined, json" in p.stderr

# SPDX-License-Identifier: MIT
"""Virtual hosts (issue 22): several sites on one port, each with its own
root, chosen by the request's host (Host, or the absolute-form target's
authority) after the usual Host checks; the default site for any other
host. Every answer is checked byte for byte against the right root, the
file cache never answers one site's path with another's bytes, and the
access log and /metrics say which site answered. Both loops, and
pith-tiny (sites need no library)."""

import json
import os
import re
import subprocess
import time

import pytest

import http_raw
from conftest import PITH_BIN, run_pith
from opsnet_util import metrics, status_port

SITES = ("a", "b", "c")


def make_root(base, name):
    root = base / name
    (root / "sub").mkdir(parents=True)
    files = {
        "index.html": ("<p>index of %s</p>\n" % name).encode(),
        "same.txt": ("same path, site %s\n" % name).encode(),
        # Larger than --cache-max-file below: sent from a descriptor.
        "big.bin": bytes([ord(name)]) * 200000,
        "sub/page.txt": ("sub page of %s\n" % name).encode(),
        "404.html": ("<h1>%s: not found</h1>\n" % name).encode(),
    }
    files["only-%s.txt" % name] = ("only in %s\n" % name).encode()
    for rel, data in files.items():
        (root / rel).write_bytes(data)
    return root, files


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    base = tmp_path_factory.mktemp("sites")
    return {n: make_root(base, n) for n in SITES}


@pytest.fixture(scope="module")
def three(pith_module, roots):
    """Three sites; a is the first and so the default."""
    args = []
    args += ["--site", "a.test,www.a.test=%s" % roots["a"][0]]
    args += ["--site", "b.test,*.b.test=%s" % roots["b"][0]]
    args += ["--site", "C.Test=%s" % roots["c"][0]]
    return pith_module(*args, "--cache-max-file", "65536", "--error-page", "404=/404.html",
                       root=False)


def get(server, target, host, **kw):
    with server.conn() as c:
        return c.exchange("GET", target, host=host, **kw)


@pytest.mark.parametrize("host,site", [
    ("a.test", "a"), ("www.a.test", "a"), ("A.TEST", "a"), ("a.test:8080", "a"),
    ("a.test.", "a"), ("www.a.test.:1", "a"),
    ("b.test", "b"), ("x.b.test", "b"), ("X-1.B.TEST:443", "b"),
    ("c.test", "c"), ("c.TEST.", "c"),
    # Any other host gets the default site (the first): nginx's default_server.
    ("unknown.test", "a"), ("127.0.0.1", "a"), ("y.x.b.test", "a"), ("b.test..", "a"),
    ("[::1]", "a"), ("", "a"),
])
def test_host_picks_the_site(three, roots, host, site):
    for rel in ("same.txt", "index.html", "sub/page.txt", "big.bin"):
        r = get(three, "/" + rel, host)
        assert r.status == 200, (host, rel, r.head_text())
        assert r.body == roots[site][1][rel], (host, rel)
    r = get(three, "/", host)
    assert r.status == 200 and r.body == roots[site][1]["index.html"]


def test_each_site_has_only_its_own_files(three, roots):
    for name in SITES:
        host = "%s.test" % name
        for other in SITES:
            r = get(three, "/only-%s.txt" % other, host)
            if other == name:
                assert r.status == 200 and r.body == roots[name][1]["only-%s.txt" % name]
            else:
                # The site's own error page (the top level's --error-page,
                # looked up beneath each site's root).
                assert r.status == 404, (host, other)
                assert r.body == roots[name][1]["404.html"], (host, other)


def test_cache_never_answers_with_another_sites_bytes(three, roots):
    """The same relative path on one keep-alive connection, alternating
    sites, many times (cache hits in memory and by descriptor): every answer
    is the asked site's file."""
    with three.conn() as c:
        for i in range(60):
            name = SITES[i % 3]
            rel = ("same.txt", "big.bin")[i % 2]
            c.request("GET", "/" + rel, host="%s.test" % name)
            r = c.read_response()
            assert r.status == 200 and r.body == roots[name][1][rel], (i, name, rel)
            assert r["ETag"]


def test_absolute_form_authority_wins_over_host(three, roots):
    r = get(three, "http://b.test/same.txt", "a.test")
    assert r.status == 200 and r.body == roots["b"][1]["same.txt"]
    r = get(three, "http://unknown.test/same.txt", "b.test")
    assert r.body == roots["a"][1]["same.txt"]


def test_host_checks_come_first(three):
    """A site is picked after the Host checks pith always makes: none on
    HTTP/1.1, two, or a bad one is still a 400."""
    for req in (b"GET /same.txt HTTP/1.1\r\n\r\n",
                b"GET /same.txt HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n",
                b"GET /same.txt HTTP/1.1\r\nHost: a test\r\n\r\n"):
        with three.conn() as c:
            c.send(req)
            assert c.read_response().status == 400, req


def test_http10_without_host_gets_the_default(three, roots):
    with three.conn() as c:
        c.send(b"GET /same.txt HTTP/1.0\r\n\r\n")
        r = c.read_response()
    assert r.status == 200 and r.body == roots["a"][1]["same.txt"]


def test_redirect_and_listing_stay_on_the_site(three, roots):
    r = get(three, "/sub", "c.test")
    assert r.status == 301 and r["Location"] == "/sub/"
    r = get(three, "/sub/", "c.test")  # no index: the listing of c's directory
    assert r.status == 200 and b"page.txt" in r.body


def test_curl_resolve_two_sites(three, roots):
    for name in ("a", "b"):
        url = "http://%s.test:%d/same.txt" % (name, three.port)
        out = subprocess.run(["curl", "-sS", "--resolve", "%s.test:%d:127.0.0.1" % (name, three.port),
                              url], capture_output=True, timeout=20)
        assert out.returncode == 0, out.stderr
        assert out.stdout == roots[name][1]["same.txt"]


def test_root_given_is_the_default_site(pith, roots, tmp_path):
    """ROOT beside --site is the site for every other host (a site without a
    name); without ROOT the first site is."""
    d = tmp_path / "default"
    d.mkdir()
    (d / "same.txt").write_bytes(b"the default root\n")
    s = pith("--site", "a.test=%s" % roots["a"][0], root=str(d))
    assert get(s, "/same.txt", "a.test").body == roots["a"][1]["same.txt"]
    assert get(s, "/same.txt", "other.test").body == b"the default root\n"
    assert "serving %s and 1 more site on" % d in s.start_line


def test_start_line_names_the_default_root(three, roots):
    assert re.search(r"serving %s and 2 more sites on http://" % re.escape(str(roots["a"][0])),
                     three.start_line), three.start_line


def test_each_root_must_exist(roots, tmp_path):
    p = run_pith("--port", "0", "--addr", "127.0.0.1", "--site", "a.test=%s" % roots["a"][0],
                 "--site", "b.test=%s" % (tmp_path / "missing"))
    assert p.returncode == 1
    assert ("pith: --site 'b.test=%s': cannot serve '%s': No such file or directory"
            % (tmp_path / "missing", tmp_path / "missing")) in p.stderr, p.stderr


def test_fallback_checked_in_every_root(roots, tmp_path):
    (tmp_path / "spa").mkdir()
    (tmp_path / "spa" / "shell.html").write_bytes(b"shell\n")
    p = run_pith("--port", "0", "--addr", "127.0.0.1", "--fallback", "/shell.html",
                 "--site", "spa.test=%s" % (tmp_path / "spa"), "--site", "a.test=%s" % roots["a"][0])
    assert p.returncode == 1
    assert ("--site 'a.test=%s': cannot serve the --fallback file beneath the root: shell.html"
            % roots["a"][0]) in p.stderr, p.stderr


@pytest.mark.parametrize("spec,msg", [
    ("a.test", "--site: 'a.test' is not NAMES=ROOT"),
    ("=/srv", "--site: '=/srv' is not NAMES=ROOT"),
    ("a.test=", "--site: 'a.test=' is not NAMES=ROOT"),
    ("a_b.test=/srv", "--site 'a_b.test=/srv': 'a_b.test' is not a host name"),
    ("a.test,,b.test=/srv", "--site 'a.test,,b.test=/srv': an empty name in the list"),
    ("*.*.test=/srv", "--site '*.*.test=/srv': '*.*.test' is not a host name"),
    ("a.test:80=/srv", "--site 'a.test:80=/srv': 'a.test:80' is not a host name"),
])
def test_site_usage_errors(spec, msg):
    p = run_pith("--site", spec, "--check")
    assert p.returncode == 2 and msg in p.stderr, p.stderr


def test_two_sites_may_not_share_a_name(roots):
    p = run_pith("--site", "a.test,x.test=%s" % roots["a"][0],
                 "--site", "b.test,X.TEST.=%s" % roots["b"][0], "--check")
    assert p.returncode == 2
    assert ("pith: --site 'b.test,X.TEST.=%s': 'x.test' is a name of another site already "
            "(--site 'a.test,x.test=%s')" % (roots["b"][0], roots["a"][0])) in p.stderr, p.stderr


def test_check_prints_every_site(roots):
    p = run_pith("--site", "a.test,www.a.test=%s" % roots["a"][0],
                 "--site", "*.b.test=%s" % roots["b"][0], "--addr", "127.0.0.1", "--port", "0",
                 "--check")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "  sites       2, chosen by the request's host" in out
    assert "  site        a.test, www.a.test (default)\n    serve       %s\n" % roots["a"][0] in out
    assert "  site        *.b.test\n    serve       %s\n" % roots["b"][0] in out


def test_access_log_names_the_host(pith, roots, tmp_path):
    log = tmp_path / "access.log"
    s = pith("--site", "a.test=%s" % roots["a"][0], "--site", "b.test=%s" % roots["b"][0],
             "--log", str(log), root=False)
    get(s, "/same.txt", "B.Test:8080")
    get(s, "/same.txt", "unknown.test")
    with s.conn() as c:
        c.send(b"GET /same.txt HTTP/1.0\r\n\r\n")
        c.read_response()
    lines = wait_lines(log, 3)
    # combined, then the host as nginx's $host (the default site's name when
    # the request named none)
    assert lines[0].endswith(b'"-" "-" "b.test"'), lines[0]
    assert lines[1].endswith(b'"-" "-" "unknown.test"'), lines[1]
    assert lines[2].endswith(b'"-" "-" "a.test"'), lines[2]


def test_json_log_has_a_host_field(pith, roots, tmp_path):
    log = tmp_path / "access.log"
    s = pith("--site", "a.test=%s" % roots["a"][0], "--log", str(log), "--log-format", "json",
             root=str(roots["c"][0]))
    get(s, "/same.txt", "a.test")
    with s.conn() as c:
        c.send(b"GET /same.txt HTTP/1.0\r\n\r\n")
        c.read_response()
    objs = [json.loads(l) for l in wait_lines(log, 2)]
    assert objs[0]["host"] == "a.test"
    assert objs[1]["host"] is None  # the default site has no name here


def wait_lines(path, n, timeout=5.0):
    deadline = time.monotonic() + timeout
    while True:
        lines = path.read_bytes().splitlines() if path.exists() else []
        if len(lines) >= n or time.monotonic() > deadline:
            assert len(lines) >= n, lines
            return lines
        time.sleep(0.05)


def test_metrics_count_requests_per_site(pith, roots):
    s = pith("--site", "a.test=%s" % roots["a"][0], "--site", "b.test=%s" % roots["b"][0],
             "--status", "127.0.0.1:0", root=False)
    sp = status_port(s)
    for host, n in (("a.test", 2), ("b.test", 3), ("other.test", 1)):
        for _ in range(n):
            assert get(s, "/same.txt", host).status == 200
    deadline = time.monotonic() + 5
    while True:
        m = metrics(sp)
        if m.get('pith_site_requests_total{site="b.test"}') == 3 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert m['pith_site_requests_total{site="a.test"}'] == 3  # the default got other.test
    assert m['pith_site_requests_total{site="b.test"}'] == 3


def test_one_site_logs_exactly_as_before(pith, docroot, tmp_path):
    """No site names: the combined line has no host field (the log format
    is unchanged for a server without sites)."""
    log = tmp_path / "access.log"
    s = pith("--log", str(log))
    s.get("/index.html", host="a.test")
    line = wait_lines(log, 1)[0]
    assert re.match(rb'^127\.0\.0\.1 - - \[[^]]+\] "GET /index\.html HTTP/1\.1" 200 \d+ "-" "-"$',
                    line), line

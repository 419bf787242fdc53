# SPDX-License-Identifier: MIT
"""The router profile answers as the full build does (issue 21, "Same
answers"): the full build (`pith`, PITH_FULL_BIN) and the router profile
(`pith-router`, PITH_ROUTER_BIN) serve the same root, get the same raw bytes
(paths with traversal, dotfiles, %2F and %00; ranges; conditionals;
methods; malformed heads; HTTP/1.0; pipelining), and their answers must
match: status line and every field in order (the Date value aside), and the
body, except the two the contract lets differ (the listing page, whose
framing fields still match) and several ranges, where the router answers as
the full build does to the same request without Range (200, whole file).
One module-scoped pair of servers; about 2 s. PITH_ROUTER_CMD runs the
router another way (make test-router-cross: "qemu-mips
build/router-mips/pith-router", a cross build under qemu-user)."""

import os
import re
import signal
import socket
import subprocess
import time

import pytest

import http_raw

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FULL_BIN = os.environ.get("PITH_FULL_BIN") or os.path.join(REPO, "pith")
ROUTER_BIN = os.environ.get("PITH_ROUTER_BIN") or os.path.join(REPO, "pith-router")
PORT_RE = re.compile(r"^pith \S+ serving .* on http://\S+:(\d+)/ \(", re.M)

TYPES = ["html", "css", "js", "mjs", "json", "wasm", "svg", "png", "jpg", "jpeg", "gif",
         "webp", "avif", "ico", "woff2", "txt", "xml", "pdf", "mp4", "webm", "map", "htm"]
BIG = 100000
HUGE_AT = (2 << 30) + 10
OLD = 1500000000  # every file's mtime: in the past, so no Last-Modified clamp to Date


def make_root(d):
    files = {
        "a.txt": b"hello\n",
        "empty.txt": b"",
        "big.bin": bytes(range(256)) * (BIG // 256) + b"x" * (BIG % 256),
        "A.txt": b"capital\n",
        "sp ace.html": b"<p>space</p>",
        "q&a<b>.txt": b"escaped\n",
        "noext": b"no extension",
        "f.unknownext": b"?",
        "d/index.html": b"<b>d</b>",
        "d/sub/index.htm": b"<i>sub</i>",
        "e/f1.txt": b"1",
        "e/.hidden": b"h",
        "e/sub/x.css": b"x{}",
        "idxdir/index.html/keep": b"an index that is a directory",
        ".secret": b"no",
        ".well-known/x.txt": b"well known",
        ".well-known/.y": b"no",
    }
    for t in TYPES:
        files["t/f." + t] = ("type " + t).encode()
    for name, data in files.items():
        p = os.path.join(d, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
    with open(os.path.join(d, "huge.bin"), "wb") as f:  # sparse: 32-bit offsets above 2 GiB
        f.seek(HUGE_AT)
        f.write(b"above two GiB")
        f.truncate(3 << 30)
    os.symlink("a.txt", os.path.join(d, "link.txt"))
    os.mkfifo(os.path.join(d, "fifo"))
    for dp, dns, fns in os.walk(d):
        for n in fns + dns:
            p = os.path.join(dp, n)
            if not os.path.islink(p):
                os.utime(p, (OLD, OLD))


def start(binary, root):
    cmd = [binary]
    if binary == ROUTER_BIN and os.environ.get("PITH_ROUTER_CMD"):
        cmd = os.environ["PITH_ROUTER_CMD"].split()
        binary = cmd[-1]
    if not os.path.exists(binary):
        pytest.fail("%s not built (make pith pith-router)" % binary, pytrace=False)
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "PITH_RESOLVE")}
    p = subprocess.Popen(cmd + ["--port", "0", "--addr", "127.0.0.1", "--workers", "1", root],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, env=env, start_new_session=True)
    line = b""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        line += p.stderr.readline()
        m = PORT_RE.search(line.decode("utf-8", "replace"))
        if m:
            return p, int(m.group(1))
    p.kill()
    pytest.fail("%s did not start: %r" % (binary, line), pytrace=False)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("diffroot"))
    make_root(root)
    procs = [start(FULL_BIN, root), start(ROUTER_BIN, root)]
    time.sleep(0.2)  # the workers are forked after the start line
    yield root, procs[0][1], procs[1][1]
    for p, _ in procs:
        os.killpg(p.pid, signal.SIGTERM)
    for p, _ in procs:
        assert p.wait(10) == 0


def exchange(port, data, close_wait=3.0):
    """Every response to data (sent at once), until the server closes."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(close_wait)
    s.sendall(data)
    got = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    methods = [m.group(1).decode() for m in re.finditer(rb"(?:^|\r\n\r\n)([A-Za-z]+) ", data)]
    out = []
    while got:
        m = methods[len(out)] if len(out) < len(methods) else "GET"
        r, got = http_raw.parse_response(got, m)
        out.append(r)
    return out


def is_listing(r):
    return (r.status == 200 and r.get("Cache-Control") == "no-cache"
            and r.get("Vary") == "Accept")


def canon(r, body=True):
    fields = [(n, "<date>" if n.lower() == "date" else v) for n, v in r.fields]
    return (r.version, r.status, r.reason, fields, r.body if body and not is_listing(r) else None)


def req(target="/a.txt", method="GET", headers=(), version="HTTP/1.1", host="localhost",
        close=True):
    lines = ["%s %s %s" % (method, target, version)]
    if host is not None:
        lines.append("Host: " + host)
    lines += ["%s: %s" % h for h in headers]
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


# ---- the cases --------------------------------------------------------------------------

PATHS = ["/", "/a.txt", "/A.txt", "/%41.txt", "/empty.txt", "/big.bin", "/d", "/d/", "/d?x=1",
         "/d/sub", "/d/sub/", "/e", "/e/", "/e/sub/x.css", "/nope", "/nope/", "/a.txt/",
         "/.secret", "/e/.hidden", "/.well-known/x.txt", "/.well-known/.y", "/.x/../a.txt",
         "/%2e%2e/a.txt", "/../a.txt", "/d/../a.txt", "/d/./index.html", "/a%2Fb", "/d%2Findex.html",
         "/a%00b", "/a.txt%00", "/%zz", "/%4", "/a.txt#frag", "//d", "/d\\x", "///a.txt",
         "/sp%20ace.html", "/q%26a%3Cb%3E.txt", "/link.txt", "/fifo", "/noext", "/f.unknownext",
         "/idxdir/", "/idxdir", "/d?", "/a.txt?x=%00", "*", "http://localhost/a.txt",
         "https://localhost/d", "http://u@localhost/a.txt", "http:///a.txt", "ftp://x/a.txt",
         "a.txt", "/" + "a/" * 2100, "/%252e%252e/a.txt", "/e/sub"] + ["/t/f." + t for t in TYPES]
METHODS = ["GET", "HEAD", "OPTIONS", "POST", "PUT", "DELETE", "PATCH", "CONNECT", "TRACE", "FOO",
           "get", "G@T"]
RANGES = ["bytes=0-0", "bytes=0-99", "bytes=99990-", "bytes=-1", "bytes=-100000", "bytes=-200000",
          "bytes=100000-", "bytes=99999-99999", "bytes=0-", "bytes=5-4", "bytes=", "items=0-1",
          "bytes=0-5,3-10", "bytes=0-5,6-10", "bytes=1-2x", "bytes=-0", "bytes = 0-1",
          "bytes=0-99999999999999999999999", "bytes=99999999999999999999999-"]
MULTI = ["bytes=0-1,5-9", "bytes=0-0,-1", "bytes=10-20,0-5", "bytes=0-,0-"]


def etag_and_lm(port, target):
    r = exchange(port, req(target, "HEAD"))[0]
    return r["ETag"], r["Last-Modified"]


def cases(port):
    """(id, bytes) for the generated requests; port: the full build's, for
    the validators the conditionals quote."""
    out = []
    for p in PATHS:
        out.append(("path %s" % p[:60], req(p)))
        out.append(("head %s" % p[:60], req(p, "HEAD")))
    for m in METHODS:
        for p in ("/a.txt", "/", "*", "/nope", "/.secret"):
            out.append(("method %s %s" % (m, p), req(p, m)))
    for rg in RANGES:
        for p in ("/big.bin", "/a.txt", "/empty.txt"):
            out.append(("range %s %s" % (rg, p), req(p, headers=[("Range", rg)])))
    for rg in ("bytes=%d-%d" % (HUGE_AT, HUGE_AT + 12), "bytes=-10", "bytes=%d-" % (3 << 30),
               "bytes=%d-%d" % (HUGE_AT - 5, HUGE_AT + 2)):
        out.append(("huge %s" % rg, req("/huge.bin", headers=[("Range", rg)])))
    out.append(("huge HEAD", req("/huge.bin", "HEAD")))
    out.append(("range on HEAD", req("/big.bin", "HEAD", [("Range", "bytes=0-9")])))
    out.append(("range on a listing", req("/e/", headers=[("Range", "bytes=0-9")])))
    etag, lm = etag_and_lm(port, "/big.bin")
    weak = "W/" + etag
    conds = [
        [("If-None-Match", etag)], [("If-None-Match", weak)], [("If-None-Match", '"nope"')],
        [("If-None-Match", "*")], [("If-None-Match", '"x", ' + etag)],
        [("If-None-Match", etag), ("If-None-Match", '"y"')],
        [("If-Modified-Since", lm)], [("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT")],
        [("If-Modified-Since", "Fri, 01 Jan 2100 00:00:00 GMT")], [("If-Modified-Since", "garbage")],
        [("If-Modified-Since", "Sunday, 06-Nov-94 08:49:37 GMT")],
        [("If-Modified-Since", "Sun Nov  6 08:49:37 1994")],
        [("If-None-Match", '"nope"'), ("If-Modified-Since", lm)],
        [("If-None-Match", etag), ("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT")],
        [("If-Match", '"nope"')], [("If-Match", "*")], [("If-Match", etag)], [("If-Match", weak)],
        [("If-Unmodified-Since", "Sun, 06 Nov 1994 08:49:37 GMT")], [("If-Unmodified-Since", lm)],
        [("If-Modified-Since", lm), ("If-Modified-Since", lm)],
        [("If-Range", etag), ("Range", "bytes=0-9")], [("If-Range", weak), ("Range", "bytes=0-9")],
        [("If-Range", '"other"'), ("Range", "bytes=0-9")], [("If-Range", lm), ("Range", "bytes=0-9")],
        [("If-Range", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Range", "bytes=0-9")],
        [("If-Range", etag), ("Range", "bytes=200000-")],
        [("If-None-Match", etag), ("Range", "bytes=0-9")],
        [("If-Match", '"nope"'), ("Range", "bytes=200000-")],
    ]
    for i, h in enumerate(conds):
        out.append(("cond %d %s" % (i, h[0][0]), req("/big.bin", headers=h)))
        out.append(("cond %d HEAD" % i, req("/big.bin", "HEAD", h)))
    out.append(("cond on index", req("/d/", headers=[("If-None-Match", "*")])))
    heads = [
        b"GET / HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: [::1\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a:80x\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost : x\r\n\r\n",
        b"GET / HTTP/1.1\nHost: x\n\n",
        b"GET / HTTP/1.1\r\nHost: x\rY: z\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nX: a\x01b\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: foo\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        b"POST /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
        b"POST /a.txt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"PUT /a.txt HTTP/1.1\r\nHost: x\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"GET / HTTP/2.0\r\nHost: x\r\n\r\n",
        b"GET / HTTP/1.2\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"GET / HTTP/1.10\r\nHost: x\r\n\r\n",
        b"GET / HTTQ/1.1\r\nHost: x\r\n\r\n",
        b"GET  / HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET / HTTP/1.1 \r\nHost: x\r\n\r\n",
        b"GET /a\x7fb HTTP/1.1\r\nHost: x\r\n\r\n",
        b"\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"\r\n" * 9 + b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /" + b"a" * 8200 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X%d: y\r\n" % i for i in range(101)) + b"\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"y" * 17000 + b"\r\n\r\n",
        b"GET /a.txt HTTP/1.0\r\n\r\n",
        b"GET /a.txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /d/ HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /a.txt HTTP/1.0\r\n\r\n",
        b"GET /e/ HTTP/1.0\r\n\r\n",
        b"HEAD /e/ HTTP/1.0\r\n\r\n",
        b"HEAD /e/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\nHEAD /big.bin HTTP/1.1\r\nHost: x\r\n\r\n"
        b"GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=-5\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
        b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\nGET /d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\nGET /e/ HTTP/1.1\r\nHost: x\r\n\r\n"
        b"GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        b"GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, close\r\n\r\n",
        b"GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: Close\r\n\r\n",
        b"GET /a.txt HTTP/1.1\r\nHost: x\r\nRange: bytes=0-1\r\nRange: bytes=2-3\r\nConnection: close\r\n\r\n",
        b"GET http://h:8080/a.txt HTTP/1.1\r\nHost: other\r\nConnection: close\r\n\r\n",
        b"GET /a.txt HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n",
        b"GET /a.txt HTTP/1.1\r\nhOsT: x\r\nconnection: close\r\n\r\n",
    ]
    for i, h in enumerate(heads):
        out.append(("head %d %r" % (i, h[:30]), h))
    return out


def test_same_answers(pair):
    _, full, router = pair
    diffs = []
    all_cases = cases(full)
    for name, data in all_cases:
        a, b = exchange(full, data), exchange(router, data)
        if [canon(r) for r in a] != [canon(r) for r in b]:
            diffs.append("%s\n  request: %r\n  full:   %s\n  router: %s"
                         % (name, data[:200], [canon(r) for r in a], [canon(r) for r in b]))
    assert not diffs, "%d of %d requests answered differently:\n%s" % (
        len(diffs), len(all_cases), "\n".join(diffs[:10]))
    assert len(all_cases) > 300


@pytest.mark.parametrize("rg", MULTI)
def test_several_ranges_get_the_whole_file(pair, rg):
    """RFC 9110 §14.2 lets a server ignore Range: the router sends what the
    full build sends without it (the full build: 206 multipart/byteranges,
    or 200 for what it ignores too)."""
    _, full, router = pair
    [b] = exchange(router, req("/big.bin", headers=[("Range", rg)]))
    [a] = exchange(full, req("/big.bin"))
    assert canon(b) == canon(a)
    assert b.status == 200 and len(b.body) == BIG


def test_listing_framing_and_names(pair):
    """The listing's body may differ; its fields match (checked above) and
    it lists what the full build lists: escaped links, no dotfiles."""
    _, full, router = pair
    [r] = exchange(router, req("/"))
    assert r.status == 200 and r["Transfer-Encoding"] == "chunked"
    body = r.body.decode()
    assert 'href="q%26a%3Cb%3E.txt">q&amp;a&lt;b&gt;.txt</a>' in body
    assert 'href="d/"' in body and 'href="sp%20ace.html"' in body
    assert ".secret" not in body and ".well-known" not in body and "<script" not in body
    assert "link.txt" not in body and "fifo" not in body


def test_above_two_gib(pair):
    """Offsets past 2^31 (sendfile64 and O_LARGEFILE on the 32-bit ABIs)."""
    _, _, router = pair
    [r] = exchange(router, req("/huge.bin", headers=[("Range", "bytes=%d-%d" % (HUGE_AT, HUGE_AT + 12))]))
    assert r.status == 206 and r.body == b"above two GiB", r.head_text()
    assert r["Content-Range"] == "bytes %d-%d/%d" % (HUGE_AT, HUGE_AT + 12, 3 << 30)

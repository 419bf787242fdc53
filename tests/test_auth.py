# SPDX-License-Identifier: MIT
"""Basic auth (RFC 7617; issue 22): `auth PREFIX FILE [REALM]` puts a path
prefix behind a password file of yescrypt, bcrypt or SHA-512 crypt hashes,
made here with tools that are not pith's (mkpasswd from Debian's whois,
openssl passwd). 401 with WWW-Authenticate for a missing or wrong
credential, the same whether the path exists or not, before any file is
opened; weak or plain lines refused at start with their file, line and
reason; failed sign-ins limited per client (429 + Retry-After) so that a
flood from one client does not delay another (measured); the file re-read
on SIGHUP. Both loops; the full build only (libxcrypt)."""

import base64
import re
import statistics
import subprocess
import threading
import time

import pytest

import http_raw
from conftest import run_pith, tls_pki
from opsnet_util import metrics, status_port
from conftest import free_port
from test_reload import Master
from tlsutil import tls_conn

pytestmark = pytest.mark.full_only("basic auth (libxcrypt)")

PASSWORDS = {"yes": "correct horse", "bee": "battery staple", "sha": "tr0ub4dor&3"}


def make_hash(kind, password):
    if kind == "yes":
        cmd = ["mkpasswd", "-m", "yescrypt", password]
    elif kind == "bee":
        cmd = ["mkpasswd", "-m", "bcrypt", password]
    else:
        cmd = ["openssl", "passwd", "-6", password]
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def users(tmp_path_factory):
    d = tmp_path_factory.mktemp("auth")
    lines = ["# made with mkpasswd and openssl passwd", ""]
    for user, password in PASSWORDS.items():
        lines.append("%s:%s" % (user, make_hash(user, password)))
    path = d / "users"
    path.write_text("\n".join(lines) + "\n")
    www = d / "www"
    (www / "private" / "sub").mkdir(parents=True)
    (www / "private" / "secret.txt").write_bytes(b"SECRET-behind-the-password\n")
    (www / "private" / ".hidden").write_bytes(b"SECRET-dotfile\n")
    (www / "private" / "sub" / "deep.txt").write_bytes(b"SECRET-deep\n")
    (www / "public.txt").write_bytes(b"public\n")
    (www / "privateer.txt").write_bytes(b"not under the prefix\n")
    return d, path, www


@pytest.fixture(scope="module")
def server(pith_module, users):
    d, path, www = users
    conf = d / "pith.conf"
    conf.write_text("root %s\nauth /private/ %s Staff only\n" % (www, path))
    return pith_module("--config", str(conf), "--status", "127.0.0.1:0", root=False)


def basic(user, password):
    return "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()


def get(s, target, auth=None, src=None, headers=None):
    h = list(headers or [])
    if auth is not None:
        h.append(("Authorization", auth))
    if src:
        import socket as so
        sock = so.socket()
        sock.settimeout(10)
        sock.bind((src, 0))
        sock.connect(("127.0.0.1", s.port))
        c = http_raw.Conn(0, sock=sock)
    else:
        c = s.conn()
    with c:
        return c.exchange("GET", target, h or None)


CHALLENGE = 'Basic realm="Staff only", charset="UTF-8"'


@pytest.mark.parametrize("user", sorted(PASSWORDS))
def test_each_hash_kind(server, user):
    r = get(server, "/private/secret.txt", basic(user, PASSWORDS[user]), src="127.0.0.10")
    assert r.status == 200 and r.body == b"SECRET-behind-the-password\n"
    r = get(server, "/private/secret.txt", basic(user, PASSWORDS[user] + "x"), src="127.0.0.11")
    assert r.status == 401 and r["WWW-Authenticate"] == CHALLENGE
    assert b"SECRET" not in r.body


@pytest.mark.parametrize("auth", [
    None,                               # no Authorization
    "Basic",                            # no credentials
    "Basic !!!!",                       # not base64
    "Basic " + base64.b64encode(b"yes").decode(),  # no ':'
    basic("nobody", "correct horse"),   # a user not in the file
    basic("YES", "correct horse"),      # user names are exact
    "Bearer abc",                       # another scheme
    basic("yes", "correct horse").replace("Basic", "Basic\t"),
])
def test_refused_credentials(server, auth):
    r = get(server, "/private/secret.txt", auth, src="127.0.0.12")
    assert r.status == 401 and r["WWW-Authenticate"] == CHALLENGE, r
    assert b"SECRET" not in r.body


def test_two_authorization_fields(server):
    ok = basic("yes", PASSWORDS["yes"])
    r = get(server, "/private/secret.txt", headers=[("Authorization", ok), ("Authorization", ok)])
    assert r.status == 401


@pytest.mark.parametrize("target,protected", [
    ("/private/secret.txt", True),
    ("/private/", True),
    ("/private", True),                      # the prefix's own directory
    ("/private/missing.txt", True),          # no probing of what is behind
    ("/private/sub/deep.txt", True),
    ("/private/.hidden", True),              # 401 first, then the dotfile rule
    ("/%70rivate/secret.txt", True),         # decoded once, like any request
    ("/public.txt/../private/secret.txt", True),
    ("/private/../public.txt", False),       # normalized out of the prefix
    ("/privateer.txt", False),
    ("/public.txt", False),
])
def test_what_the_prefix_covers(server, target, protected):
    r = get(server, target, src="127.0.0.13")
    if protected:
        assert r.status == 401, (target, r.head_text())
    else:
        assert r.status == 200, (target, r.head_text())


def test_same_answer_whether_the_path_exists(server):
    a = get(server, "/private/secret.txt", src="127.0.0.14")
    b = get(server, "/private/does-not-exist", src="127.0.0.14")
    drop = lambda r: [(n, v) for n, v in r.fields if n != "Date"]
    assert (a.status, drop(a), a.body) == (b.status, drop(b), b.body)


def test_signed_in_dotfile_and_missing(server):
    ok = basic("sha", PASSWORDS["sha"])
    assert get(server, "/private/.hidden", ok).status == 403
    assert get(server, "/private/missing.txt", ok).status == 404
    assert get(server, "/private/sub/deep.txt", ok).body == b"SECRET-deep\n"


def test_failures_are_limited_per_client(server):
    wrong = basic("bee", "wrong")
    for i in range(10):
        assert get(server, "/private/secret.txt", wrong, src="127.0.0.20").status == 401, i
    r = get(server, "/private/secret.txt", wrong, src="127.0.0.20")
    assert r.status == 429, r
    assert 0 < int(r["Retry-After"]) <= 60
    # Past the limit even a right password is not checked (written with the
    # scheme in lower case: an Authorization value no test has signed in
    # with, so not one a worker remembers, which would pass) ...
    fresh = basic("bee", PASSWORDS["bee"]).replace("Basic", "basic")
    r = get(server, "/private/secret.txt", fresh, src="127.0.0.20")
    assert r.status == 429
    # ... while another client signs in with it as always.
    r = get(server, "/private/secret.txt", fresh, src="127.0.0.21")
    assert r.status == 200
    m = metrics(status_port(server))
    assert m['pith_auth_total{result="limited"}'] >= 2
    assert m['pith_auth_total{result="failed"}'] >= 10


def test_a_flood_does_not_delay_another_client(pith, users, tmp_path):
    """One worker. Client F floods wrong passwords for yescrypt (about 50 ms
    of CPU each) as fast as it can; client G meanwhile fetches a public file
    and, signed in, a protected one. Past 10 failures F gets 429s that cost
    nothing, so G's delay stays that of a few checks; without the limit,
    F's requests would hold the worker for F's whole run."""
    d, path, www = users
    conf = tmp_path / "pith.conf"
    conf.write_text("root %s\nauth /private/ %s\n" % (www, path))
    s = pith("--config", str(conf), "--workers", "1", root=False)
    good = basic("yes", PASSWORDS["yes"])
    assert get(s, "/private/secret.txt", good, src="127.0.0.31").status == 200  # cached now

    def g_latencies(n):
        out = []
        for i in range(n):
            t = time.monotonic()
            r = get(s, "/public.txt" if i % 2 else "/private/secret.txt", good, src="127.0.0.31")
            out.append(time.monotonic() - t)
            assert r.status == 200
        return out

    before = g_latencies(40)
    statuses = []
    stop = threading.Event()

    def flood():
        c = None
        while not stop.is_set():
            with http_raw.Conn(s.port) as c:  # keep-alive, one connection at a time
                for _ in range(20):
                    c.request("GET", "/private/secret.txt",
                              headers={"Authorization": basic("yes", "wrong")})
                    statuses.append(c.read_response().status)
                    if stop.is_set():
                        break

    t = threading.Thread(target=flood)
    started = time.monotonic()
    t.start()
    time.sleep(0.3)
    during = g_latencies(200)
    stop.set()
    t.join(10)
    flood_s = time.monotonic() - started
    checks = statuses.count(401)
    print("\nflood: %d requests in %.2f s (%d checked, %d refused 429); other client: median "
          "%.2f ms before, %.2f ms during, max %.1f ms during"
          % (len(statuses), flood_s, checks, statuses.count(429),
             1000 * statistics.median(before), 1000 * statistics.median(during),
             1000 * max(during)))
    assert checks <= 10 and statuses.count(429) >= 100, statuses[:20]
    # The flood's CPU is its 10 checks (about 0.5 s): G's 200 requests, which
    # take a few hundred ms unloaded, are not spread over the flood's
    # seconds. Generous bounds: the machine is shared.
    assert sum(during) < 3.0, sum(during)
    assert statistics.median(during) < 0.05


def test_the_file_is_checked_at_start(tmp_path):
    www = tmp_path / "www"
    www.mkdir()
    bad = tmp_path / "users"
    rows = [
        ("ok1", make_hash("yes", "a"), None),
        ("md5", subprocess.run(["openssl", "passwd", "-1", "x"], capture_output=True, text=True).stdout.strip(),
         "an MD5 crypt hash ($1$) is refused: too weak"),
        ("apr", subprocess.run(["openssl", "passwd", "-apr1", "x"], capture_output=True, text=True).stdout.strip(),
         "Apache's MD5 hash ($apr1$) is refused: too weak"),
        ("des", subprocess.run(["mkpasswd", "-m", "descrypt", "x"], capture_output=True, text=True).stdout.strip(),
         "a DES crypt hash (or a 13-character password) is refused: too weak"),
        ("sha256", subprocess.run(["openssl", "passwd", "-5", "x"], capture_output=True, text=True).stdout.strip(),
         "a SHA-256 crypt hash ($5$) is refused"),
        ("old", subprocess.run(["mkpasswd", "-m", "bcrypt-a", "x"], capture_output=True, text=True).stdout.strip(),
         "an old bcrypt hash ($2a$, $2x$) is refused"),
        ("plain", "hunter2", "not a hash: a password in plain text is refused"),
        ("ok1", make_hash("sha", "b"), "named twice in the file"),
    ]
    bad.write_text("".join("%s:%s\n" % (u, h) for u, h, _ in rows) + "nocolon\n")
    conf = tmp_path / "pith.conf"
    conf.write_text("root %s\nauth /p/ %s\n" % (www, bad))
    p = run_pith("--config", conf, "--check")
    assert p.returncode == 2
    want = ["pith: %s:%d: user '%s': %s" % (bad, i + 1, u, why)
            for i, (u, h, why) in enumerate(rows) if why]
    got = p.stderr.splitlines()
    for w in want:
        assert any(l.startswith(w) for l in got), (w, p.stderr)
    assert "pith: %s:%d: not USER:HASH (no ':')" % (bad, len(rows) + 1) in got
    # A start refuses it the same way, before any worker.
    p = run_pith("--config", conf, "--port", "0")
    assert p.returncode == 2 and "is refused" in p.stderr
    conf.write_text("root %s\nauth /p/ %s/none\n" % (www, tmp_path))
    p = run_pith("--config", conf, "--check")
    assert p.returncode == 2
    assert ("pith: %s:2: auth: cannot read the password file %s/none: No such file or directory"
            % (conf, tmp_path)) in p.stderr, p.stderr


@pytest.mark.parametrize("value,msg", [
    ("private /u", "--auth: 'private /u' is not PREFIX FILE [REALM]"),
    ("/private/", "--auth: '/private/' is not PREFIX FILE [REALM]"),
    ("/.git/ /u", "--auth: '/.git/ /u': the prefix names a dotfile"),
    ("/p/ /u a\"b", "a realm is 1 to 64 visible ASCII characters"),
])
def test_usage(value, msg, tmp_path):
    conf = tmp_path / "pith.conf"
    conf.write_text("auth %s\n" % value)
    p = run_pith("--config", conf, "--check")
    assert p.returncode == 2 and msg in p.stderr, p.stderr


def test_plain_http_warns(users, tmp_path):
    d, path, www = users
    conf = tmp_path / "pith.conf"
    conf.write_text("root %s\nauth /private/ %s\n" % (www, path))
    from conftest import PithServer
    s = PithServer(None, ["--config", str(conf)]).start()
    try:
        assert re.search(r"pith: warning: site default asks for passwords \(/private/\) over plain "
                         r"HTTP on http://127\.0\.0\.1:\d+/: they travel in clear", s.stderr_text())
    finally:
        assert s.stop() == []
    cert, key = tls_pki()["ecdsa"]
    s = PithServer(None, ["--config", str(conf), "--tls-only", "--tls-port", "0",
                          "--tls-cert", cert, "--tls-key", key]).start()
    try:
        assert "warning" not in s.stderr_text()
        with tls_conn(s.tls_port, tls_pki(), host="localhost") as c:
            r = c.exchange("GET", "/private/secret.txt",
                           {"Authorization": basic("yes", PASSWORDS["yes"])})
            assert r.status == 200 and r.body == b"SECRET-behind-the-password\n"
            assert c.exchange("GET", "/private/secret.txt").status == 401
    finally:
        assert s.stop() == []


def test_per_site_rules(pith, users, tmp_path):
    d, path, www = users
    conf = tmp_path / "pith.conf"
    conf.write_text("auth / %s Everything\nsite shut.test {\n root %s\n}\n"
                    "site open.test {\n root %s\n auth /private/sub/ %s Sub\n}\n"
                    % (path, www, www, path))
    s = pith("--config", str(conf), root=False)
    with s.conn() as c:
        r = c.exchange("GET", "/public.txt", host="shut.test")
        assert r.status == 401 and r["WWW-Authenticate"] == 'Basic realm="Everything", charset="UTF-8"'
        # open.test names its own rule: the top level's is replaced.
        assert c.exchange("GET", "/private/secret.txt", host="open.test").status == 200
        r = c.exchange("GET", "/private/sub/deep.txt", host="open.test")
        assert r.status == 401 and 'realm="Sub"' in r["WWW-Authenticate"]


def test_a_sign_in_is_remembered_for_its_own_rule_only(pith, users, tmp_path):
    """Two rules with two password files, one worker: a worker remembers a
    good Authorization value (auth.c's credential cache), and what it
    remembers for /private/ (file A) must not open /admin/ (file B, where
    the same user has another password). The value that opened /private/
    gets 401 on /admin/ even right after, when it is in the cache; B's own
    password opens /admin/ and not /private/. A cache keyed without the
    rule would let A's sign-in through B's door."""
    d, path, www = users
    root = tmp_path / "www"
    (root / "private").mkdir(parents=True)
    (root / "admin").mkdir()
    (root / "private" / "p.txt").write_bytes(b"private\n")
    (root / "admin" / "a.txt").write_bytes(b"admin\n")
    file_a, file_b = tmp_path / "users-a", tmp_path / "users-b"
    file_a.write_text("kim:%s\n" % make_hash("sha", "for-private"))
    file_b.write_text("kim:%s\n" % make_hash("sha", "for-admin"))
    conf = tmp_path / "pith.conf"
    conf.write_text("root %s\nauth /private/ %s Private\nauth /admin/ %s Admin\n"
                    % (root, file_a, file_b))
    s = pith("--config", str(conf), root=False, workers=1)
    a, b = basic("kim", "for-private"), basic("kim", "for-admin")
    with s.conn() as c:
        r = c.exchange("GET", "/private/p.txt", {"Authorization": a})
        assert r.status == 200 and r.body == b"private\n"
        assert c.exchange("GET", "/private/p.txt", {"Authorization": a}).status == 200  # cached
        r = c.exchange("GET", "/admin/a.txt", {"Authorization": a})
        assert r.status == 401 and 'realm="Admin"' in r["WWW-Authenticate"], r
        assert b"admin" not in r.body
        assert c.exchange("GET", "/admin/a.txt", {"Authorization": b}).status == 200
        assert c.exchange("GET", "/admin/a.txt", {"Authorization": b}).status == 200  # cached
        assert c.exchange("GET", "/private/p.txt", {"Authorization": b}).status == 401


def test_hup_reads_the_password_file_again(users, tmp_path):
    d, path, www = users
    mine = tmp_path / "users"
    mine.write_text("kim:%s\n" % make_hash("sha", "first"))
    conf = tmp_path / "pith.conf"
    port = free_port()
    conf.write_text("addr 127.0.0.1\nport %d\nworkers 1\nroot %s\nauth /private/ %s\n"
                    % (port, www, mine))
    m = Master(tmp_path, conf)
    try:
        def status(pw):
            with http_raw.Conn(port) as c:
                return c.exchange("GET", "/private/secret.txt",
                                  {"Authorization": basic("kim", pw)}).status
        assert status("first") == 200
        mine.write_text("kim:%s\n" % make_hash("sha", "second"))
        m.reload()
        assert status("second") == 200 and status("first") == 401
        # A broken file: the old one stays, and the error log says why.
        mine.write_text("kim:second\n")
        m.refused_reload()
        assert ("pith: %s:1: user 'kim': not a hash: a password in plain text is refused" % mine) \
            in m.text()
        assert status("second") == 200
    finally:
        m.close()

# SPDX-License-Identifier: MIT
"""pith --config FILE (issue 22): every command-line option as a line of the
file, site blocks, include, the command line's precedence, and --check on
broken files, each with its exact message (file and line). Both loops, and
pith-tiny (which refuses the options of what it leaves out, in a file too)."""

import os
import re
import subprocess

import pytest

import tlsutil
from conftest import PITH_BIN, PITH_TINY, run_pith, tls_pki

# A valid and an invalid value for every option of --help (None: a flag).
# The invalid value's message must be the command line's, after FILE:LINE.
OPTIONS = {
    "port": ("0", "80x"),
    "addr": ("127.0.0.1", ""),
    "workers": ("2", "0"),
    "max-conns": ("100", "0"),
    "max-conns-per-client": ("8", "x"),
    "auth": ("/private/ @USERS@ Staff", "private /u"),
    "index": ("home.html", "a/b"),
    "no-listing": (None, "maybe"),
    "follow-symlinks": (None, "2"),
    "max-age": ("3600", "-1"),
    "immutable": ("*.[0-9a-f]{8}.*", "[a"),
    "cache-size": ("4", "5000"),
    "cache-max-file": ("1024", "x"),
    "cache-entries": ("10", "x"),
    "timeout-header": ("5", "0"),
    "timeout-keepalive": ("2", "0"),
    "timeout-send": ("9", "0"),
    "grace": ("1", "x"),
    "io": ("epoll", "poll"),
    "precompressed": ("off", ""),
    "log": ("@LOG@", ""),
    "log-format": ("json", "xml"),
    "proxy-protocol": (None, "x"),
    "trusted-proxy": ("10.0.0.0/8", "10.0.0.1/8"),
    "real-ip-header": ("X-Forwarded-For", "X Forwarded"),
    "status": ("127.0.0.1:0", "nowhere"),
    "pidfile": ("@PIDFILE@", ""),
    "daemon": (None, "x"),
    "user": ("root", ""),
    "unix-mode": ("660", "999"),
    "unix-owner": ("root", ""),
    "fallback": ("/index.html", "index.html"),
    "clean-urls": (None, "x"),
    "header": ("X-Frame-Options: DENY", "Date: now"),
    "cors": (None, "x"),
    "no-server-header": (None, "x"),
    "error-page": ("404=/index.html", "200=/x.html"),
    "no-sandbox": (None, "x"),
    "group": ("root", ""),
    "chroot": ("/", ""),
    "tls-cert": ("@CERT@", ""),
    "tls-key": ("@KEY@", ""),
    "tls-port": ("0", "x"),
    "tls-only": (None, "x"),
    "redirect-http": (None, "x"),
    "hsts": ("600", "0"),
    "timeout-handshake": ("3", "0"),
    "http2": ("off", "maybe"),
    "h2-max-streams": ("10", "0"),
    "http3": ("off", "maybe"),
    "h3-retry": ("on", "maybe"),
    "h3-alt-svc-max-age": ("60", "-1"),
    "acme": ("ops@example.org", "nope"),
    "acme-ca": ("https://127.0.0.1:14000/dir", "http://127.0.0.1/dir"),
    "acme-ca-root": ("@CERT@", ""),
    "acme-dir": ("@STATE@", ""),
    "quiet": (None, "x"),
    "site": ("@SITE@", "nosite"),
    "root": ("@ROOT@", ""),
}
# What each option needs beside it to be valid.
NEEDS = {
    "proxy-protocol": ["trusted-proxy 127.0.0.1"],
    "real-ip-header": ["trusted-proxy 127.0.0.1"],
    "group": ["user root"],
    "chroot": ["user root"],
    "tls-cert": ["tls-key @KEY@"],
    "tls-key": ["tls-cert @CERT@"],
    "tls-only": ["tls-cert @CERT@", "tls-key @KEY@"],
    "redirect-http": ["tls-cert @CERT@", "tls-key @KEY@", "tls-port 0"],
    "hsts": ["tls-cert @CERT@", "tls-key @KEY@"],
    "unix-mode": ["addr unix:@SOCK@"],
    "unix-owner": ["addr unix:@SOCK@"],
    "acme": ["site @SITE@", "acme-dir @STATE@"],
    "acme-ca": ["acme ops@example.org", "site @SITE@", "acme-dir @STATE@"],
    "acme-ca-root": ["acme ops@example.org", "site @SITE@", "acme-dir @STATE@"],
    "acme-dir": ["acme ops@example.org", "site @SITE@"],
}
FULL_ONLY = {"tls-cert", "tls-key", "tls-port", "tls-only", "redirect-http", "hsts",
             "timeout-handshake", "precompressed", "auth", "http2", "h2-max-streams", "http3", "h3-retry",
             "h3-alt-svc-max-age", "acme",
             "acme-ca", "acme-ca-root", "acme-dir"}
CMDLINE_ONLY = {"check", "help", "version", "config"}
# Full-only options pith-tiny's --help leaves out to keep its bytes (it
# refuses them with exit 2 all the same).
TINY_HELP_LACKS = {"acme", "acme-ca", "acme-ca-root", "acme-dir"}


@pytest.fixture
def www(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    (root / "index.html").write_bytes(b"<p>top index</p>\n")
    return root


def subst(text, www, tmp_path):
    cert, key = tls_pki()["ecdsa"]
    users = tmp_path / "users"
    if "@USERS@" in text and not users.exists():
        h = subprocess.run(["openssl", "passwd", "-6", "pw"], capture_output=True, text=True)
        users.write_text("u:%s\n" % h.stdout.strip())
    return (text.replace("@ROOT@", str(www)).replace("@LOG@", str(tmp_path / "a.log"))
            .replace("@PIDFILE@", str(tmp_path / "pith.pid")).replace("@CERT@", cert)
            .replace("@KEY@", key).replace("@SOCK@", str(tmp_path / "s.sock"))
            .replace("@SITE@", "a.test=%s" % www).replace("@USERS@", str(users))
            .replace("@STATE@", str(tmp_path / "acme")))


def write_conf(tmp_path, text, name="pith.conf"):
    p = tmp_path / name
    p.write_text(text)
    return p


def check(conf, *args):
    return run_pith("--config", conf, "--check", *args, timeout=30)


def cli_error(args):
    p = run_pith(*args, "--check", timeout=30)
    assert p.returncode == 2, (args, p.stdout, p.stderr)
    return p.stderr.strip().splitlines()[0]


def test_every_option_of_help_has_a_row():
    out = run_pith("--help").stdout
    names = set(re.findall(r"^ +(?:-[a-zA-Z], )?--([a-z][a-z0-9-]*)", out, re.M))
    want = set(OPTIONS) - (TINY_HELP_LACKS if PITH_TINY else set())
    assert names - CMDLINE_ONLY == want, names ^ want


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_every_option_is_accepted_in_the_file(name, www, tmp_path):
    if PITH_TINY and name in FULL_ONLY:
        pytest.skip("pith-tiny: full build only: TLS, precompressed variants, basic auth")
    good, bad = OPTIONS[name]
    lines = ["%s %s" % (name, good) if good is not None else name] + NEEDS.get(name, [])
    if name != "root":
        lines.append("root @ROOT@")
    p = check(write_conf(tmp_path, subst("\n".join(lines) + "\n", www, tmp_path)))
    assert p.returncode == 0, (lines, p.stderr)
    # A bad value: the command line's own message, after the file's name and line.
    lines[0] = "%s %s" % (name, bad)
    conf = write_conf(tmp_path, subst("\n".join(lines) + "\n", www, tmp_path))
    p = check(conf)
    assert p.returncode == 2, (lines, p.stdout)
    if good is None:
        want = "--%s: '%s' is not on or off (a flag is on when named alone)" % (name, bad)
    elif bad == "":
        want = "--%s needs a value" % name
    else:
        args = ["--%s" % name, bad] + [x for l in NEEDS.get(name, []) for x in
                                      subst("--" + l, www, tmp_path).split(" ", 1)]
        want = cli_error(args + ([str(www)] if name != "root" else []))[len("pith: "):]
    assert "pith: %s:1: %s\n" % (conf, want) in p.stderr, (want, p.stderr)


def test_a_flag_can_be_turned_off(pith, www, tmp_path):
    """A site block undoes a flag of the top level: 'no-listing off'."""
    (www / "d").mkdir()
    (www / "d" / "f.txt").write_bytes(b"f\n")
    conf = write_conf(tmp_path, "no-listing\nsite open.test {\n  root %s\n  no-listing off\n}\n"
                      "site shut.test {\n  root %s\n}\n" % (www, www))
    s = pith("--config", str(conf), root=False)
    assert s.get("/d/", host="open.test").status == 200
    assert s.get("/d/", host="shut.test").status == 403


def test_sites_from_blocks_and_includes(pith, tmp_path):
    roots = {}
    for n in ("a", "b", "c"):
        d = tmp_path / n
        d.mkdir()
        (d / "same.txt").write_bytes(("site %s\n" % n).encode())
        roots[n] = d
    (tmp_path / "sites-enabled").mkdir()
    # Read in byte order: 10-b before 20-c; dotfiles and other names are not read.
    (tmp_path / "sites-enabled" / "20-c.conf").write_text("site c.test {\n root %s\n}\n" % roots["c"])
    (tmp_path / "sites-enabled" / "10-b.conf").write_text(
        "site b.test, *.b.test {\n root %s\n header X-Site: b\n}\n" % roots["b"])
    (tmp_path / "sites-enabled" / ".hidden.conf").write_text("bogus\n")
    (tmp_path / "sites-enabled" / "c.conf.disabled").write_text("bogus\n")
    conf = write_conf(tmp_path, "# the top level\nheader X-Top: 1  # every site's\n"
                      "include sites-enabled/*.conf\n\nsite a.test {\n"
                      "    root \"%s\"\n    default\n}\n" % roots["a"])
    s = pith("--config", str(conf), root=False)
    r = s.get("/same.txt", host="x.b.test")
    assert r.body == b"site b\n" and r["X-Site"] == "b" and "X-Top" not in r
    r = s.get("/same.txt", host="c.test")
    assert r.body == b"site c\n" and r["X-Top"] == "1"
    # "default" made a, though it comes last, the site for any other host.
    assert s.get("/same.txt", host="unknown.test").body == b"site a\n"
    assert "serving %s and 2 more sites" % roots["a"] in s.start_line


def test_a_sites_immutable_list_replaces_the_top_levels(pith, www, tmp_path):
    """A site block's own `immutable` patterns replace the top level's, as
    its `header` list does (config_file_site): on that site a file that
    matches only the top level's pattern gets the ordinary max-age, one that
    matches the site's gets a year. A site that names none keeps the top
    level's. A merge of the two lists would make the first answer immutable."""
    for name in ("app.top.css", "app.site.css"):
        (www / name).write_bytes(b"body{}\n")
    conf = write_conf(tmp_path, "max-age 100\nimmutable *.top.css\n"
                      "site own.test {\n root %s\n immutable *.site.css\n}\n"
                      "site plain.test {\n root %s\n}\n" % (www, www))
    s = pith("--config", str(conf), root=False)
    year = "max-age=31536000, immutable"
    assert s.get("/app.top.css", host="own.test")["Cache-Control"] == "max-age=100"
    assert s.get("/app.site.css", host="own.test")["Cache-Control"] == year
    assert s.get("/app.top.css", host="plain.test")["Cache-Control"] == year
    assert s.get("/app.site.css", host="plain.test")["Cache-Control"] == "max-age=100"


def test_command_line_wins(pith, www, tmp_path):
    conf = write_conf(tmp_path, "max-age 100\nheader X-File: 1\nheader X-File2: 2\nroot /nonexistent\n"
                      "site own.test {\n root %s\n max-age 7\n}\n" % www)
    s = pith("--config", str(conf), "--max-age", "5", "--header", "X-Cli: 3", root=str(www))
    r = s.get("/index.html", host="other.test")
    # ROOT, --max-age and the --header list replace the file's top level ...
    assert r.status == 200 and r["Cache-Control"] == "max-age=5"
    assert r["X-Cli"] == "3" and "X-File" not in r and "X-File2" not in r
    # ... and a site's own setting still wins for that site.
    r = s.get("/index.html", host="own.test")
    assert r["Cache-Control"] == "max-age=7" and r["X-Cli"] == "3"


# Broken files: each row is the file's text and the exact lines --check
# writes about it (after "pith: FILE:"), in that order.
BROKEN = [
    ("port 80x\n", ["1: --port: '80x' is not a number from 0 to 65535"]),
    ("bogus 1\n", ["1: unknown option 'bogus' (the names are pith --help's, without --)"]),
    ("check\n", ["1: 'check' belongs on the command line, not in a configuration file"]),
    ("config other.conf\n", ["1: 'config' belongs on the command line, not in a configuration file"]),
    ("default\n", ["1: 'default' belongs inside a site block"]),
    ("Port 80\n", ["1: expected an option name (lowercase letters, digits and '-') and its value"]),
    ("--port 80\n", ["1: '--port': options are written without their dashes here"]),
    ("header \"X: y\n", ["1: a quote is not closed at the end of the value"]),
    ("header \"X: y\" z\n", ["1: text after a quoted value (a value is one quoted string, or none)"]),
    ("port 8080\x01\n", ["1: a control character (only tab is allowed)"]),
    ("}\n", ["1: '}' without a site block to close"]),
    ("site a.test\n", ["1: --site: 'a.test' is not NAMES=ROOT (e.g. 'example.com,www.example.com=/srv/www')"]),
    ("site {\n", ["1: a site block needs its names: 'site example.com {'"]),
    ("site a.test {\nroot @ROOT@\n", ["1: the site block is not closed (a '}' is missing)"]),
    ("site a.test {\nroot @ROOT@\nsite b.test {\n}\n}\n",
     ["3: a site block inside another (close it with '}' first)", "5: '}' without a site block to close"]),
    ("site a.test {\n  port 9\n  root @ROOT@\n}\n",
     ["2: 'port' is a setting of the whole server, not of a site (put it outside the site blocks)"]),
    ("site a.test {\n  cors maybe\n  root @ROOT@\n}\n",
     ["2: --cors: 'maybe' is not on or off (a flag is on when named alone)"]),
    ("site a.test {\n  max-age\n  root @ROOT@\n}\n", ["2: --max-age needs a value"]),
    ("site a.test {\n  index x\n}\n", ["1: site 'a.test' has no root (a block needs 'root DIR')"]),
    ("site a_b {\n  root @ROOT@\n}\n",
     ["1: site a_b: 'a_b' is not a host name (letters, digits, '-' and '.', an IPv6 address in "
      "brackets, or '*.' and a name)"]),
    ("site a.test {\n  root @ROOT@\n}\nsite b.test, A.TEST {\n  root @ROOT@\n}\n",
     ["4: site b.test, A.TEST: 'a.test' is a name of another site already (@CONF@:1: site a.test)"]),
    ("site a.test {\n root @ROOT@\n default\n}\nsite b.test {\n root @ROOT@\n default\n}\n",
     ["5: site b.test: 'default', but @CONF@:1: site a.test is the default site already"]),
    ("site a.test {\n  root @ROOT@\n  root @ROOT@\n}\n", ["3: ROOT given twice ('@ROOT@')"]),
    ("include nothere.conf\n", ["1: include: cannot read '@DIR@/nothere.conf': No such file or directory"]),
    ("include missing-dir/*.conf\n",
     ["1: include 'missing-dir/*.conf': cannot list its directory: No such file or directory"]),
    ("include */x.conf\n", ["1: include '*/x.conf': only the last part of a path may be a pattern"]),
    ("include\n", ["1: include: the value is empty"]),
    ("include pith.conf\n", ["1: include 'pith.conf': includes nest more than 8 deep"]),
    # every problem of a file, not only the first
    ("port x\nbogus\nsite a.test {\n  port 1\n  root @ROOT@\n}\n",
     ["1: --port: 'x' is not a number from 0 to 65535",
      "2: unknown option 'bogus' (the names are pith --help's, without --)",
      "4: 'port' is a setting of the whole server, not of a site (put it outside the site blocks)"]),
]


@pytest.mark.parametrize("text,want", BROKEN, ids=[str(i) for i in range(len(BROKEN))])
def test_check_names_each_problem(text, want, www, tmp_path):
    conf = tmp_path / "pith.conf"
    sub = lambda t: t.replace("@ROOT@", str(www)).replace("@CONF@", str(conf)).replace(
        "@DIR@", str(tmp_path))
    conf.write_text(sub(text))
    p = check(conf)
    assert p.returncode == 2, p.stdout
    got = [l for l in p.stderr.splitlines() if l.startswith("pith: %s" % conf)]
    assert got == ["pith: %s:%s" % (conf, sub(w)) for w in want], p.stderr
    assert p.stdout == ""


def test_missing_roots_named_with_their_blocks(tmp_path, www):
    conf = write_conf(tmp_path, "site a.test {\n root %s/nope-a\n}\n\nsite b.test {\n root %s\n}\n"
                      "site c.test {\n root %s/nope-c\n}\n" % (tmp_path, www, tmp_path))
    p = check(conf)
    assert p.returncode == 2
    assert p.stderr.splitlines() == [
        "pith: %s:1: site a.test: cannot serve '%s/nope-a': No such file or directory" % (conf, tmp_path),
        "pith: %s:8: site c.test: cannot serve '%s/nope-c': No such file or directory" % (conf, tmp_path),
        "pith: --check: the configuration is not valid"], p.stderr


def test_unreadable_file(tmp_path):
    p = run_pith("--config", tmp_path / "none.conf", "--check")
    assert p.returncode == 2
    assert p.stderr == ("pith: %s: cannot read the configuration file: No such file or directory\n"
                        % (tmp_path / "none.conf"))
    p = run_pith("--config", tmp_path, "--check")
    assert p.stderr == "pith: %s: cannot read the configuration file: not a regular file\n" % tmp_path
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # never opened for reading: a FIFO would hang the start
    p = run_pith("--config", fifo, "--check")
    assert p.stderr.endswith("not a regular file\n")


def test_tls_in_a_file_is_the_builds_choice(tmp_path, www):
    """pith-tiny refuses what it leaves out in a file as on its command line;
    the full build accepts it."""
    cert, key = tls_pki()["ecdsa"]
    conf = write_conf(tmp_path, "tls-cert %s\ntls-key %s\nroot %s\n" % (cert, key, www))
    p = check(conf)
    if PITH_TINY:
        assert p.returncode == 2
        assert p.stderr.splitlines()[:2] == [
            "pith: %s:1: --tls-cert: not in pith-tiny (TLS needs OpenSSL); use the full build" % conf,
            "pith: %s:2: --tls-key: not in pith-tiny (TLS needs OpenSSL); use the full build" % conf]
    else:
        assert p.returncode == 0, p.stderr
        assert "https on port 8443 (1 certificate, loaded)" in p.stdout


def test_check_prints_the_sites_of_the_file(tmp_path, www):
    conf = write_conf(tmp_path, "max-age 10\nsite a.test, *.a.test {\n root %s\n no-listing\n}\n"
                      % www)
    p = check(conf, "--addr", "127.0.0.1", "--port", "0")
    assert p.returncode == 0, p.stderr
    assert ("  site        a.test, *.a.test (default)\n    serve       %s\n"
            "    caching     Cache-Control: max-age=10\n"
            "    directories index index.html, listing off, symlinks refused (403)\n" % www) in p.stdout

# SPDX-License-Identifier: MIT
"""Site features (issue 14): --fallback, --clean-urls, --header, --cors,
--no-server-header, --error-page, through the live process (both loops)."""

import os
import subprocess

import pytest

from conftest import PITH_BIN, VERSION


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    files = {
        "index.html": b"<p>spa shell</p>\n",
        "about.html": b"<p>about</p>\n",
        "a b.html": b"<p>a b</p>\n",
        "app.js": b"console.log(1);\n",
        "style.css": b"body{}\n",
        "docs.html": b"<p>docs file</p>\n",
        "docs/index.html": b"<p>docs dir</p>\n",
        "v1.2.html": b"<p>v1.2</p>\n",
        "404.html": b"<h1>custom not found</h1>\n",
        "403.html": b"<h1>custom forbidden</h1>\n",
        ".secret": b"SECRET\n",
    }
    for name, data in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return root, files


def start_fails(root, *args):
    p = subprocess.run([PITH_BIN, "--port", "0", "--addr", "127.0.0.1", *args, str(root)],
                       capture_output=True, timeout=20)
    return p.returncode, p.stderr.decode(errors="replace")


# ---- --fallback -----------------------------------------------------------------------

def test_fallback_serves_the_shell_for_routes_without_extension(pith, site):
    root, files = site
    s = pith("--fallback", "/index.html", root=str(root))
    for target in ("/app/route", "/users/42", "/deep/route/"):
        r = s.get(target)
        assert r.status == 200, (target, r.head_text())
        assert r.body == files["index.html"]
        assert r["Cache-Control"] == "no-cache"
        assert r["Content-Type"].startswith("text/html")
    h = s.get("/app/route", method="HEAD")
    assert h.status == 200 and h.body == b""
    assert h["Content-Length"] == str(len(files["index.html"]))
    assert h["Cache-Control"] == "no-cache"


def test_fallback_never_for_extensions_dotfiles_or_other_methods(pith, site):
    root, files = site
    s = pith("--fallback", "/index.html", root=str(root))
    assert s.get("/missing.js").status == 404
    assert s.get("/route/file.png").status == 404
    assert s.get("/.env").status == 403
    assert s.get("/.well-known/route").status == 404
    assert s.get("/route", method="POST").status == 405
    # Files that exist keep their own caching.
    r = s.get("/app.js")
    assert r.status == 200 and r.body == files["app.js"]
    assert r["Cache-Control"] == "max-age=60"
    # The index itself, asked for by name, is an ordinary file.
    assert s.get("/index.html")["Cache-Control"] == "max-age=60"


def test_fallback_checked_at_start(site):
    root, _ = site
    rc, err = start_fails(root, "--fallback", "/nope.html")
    assert rc == 1 and "--fallback" in err and "nope.html" in err, err
    rc, err = start_fails(root, "--fallback", "/.secret")
    assert rc == 2 and "dotfile" in err, err
    rc, err = start_fails(root, "--fallback", "index.html")
    assert rc == 2 and "must start with '/'" in err, err
    rc, err = start_fails(root, "--fallback", "/docs/")
    assert rc == 2, err
    rc, err = start_fails(root, "--fallback", "/../outside.html")
    assert rc == 2, err


def test_fallback_refuses_a_link_out_of_the_root(site, tmp_path):
    root, _ = site
    (tmp_path / "outside.html").write_bytes(b"SECRET outside\n")
    os.symlink(str(tmp_path / "outside.html"), str(root / "shell.html"))
    rc, err = start_fails(root, "--fallback", "/shell.html")
    assert rc == 1, err
    rc, err = start_fails(root, "--follow-symlinks", "--fallback", "/shell.html")
    assert rc == 1, err


# ---- --clean-urls ---------------------------------------------------------------------

def test_clean_urls_serve_the_html_file(pith, site):
    root, files = site
    s = pith("--clean-urls", root=str(root))
    r = s.get("/about")
    assert r.status == 200 and r.body == files["about.html"]
    assert s.get("/a%20b").body == files["a b.html"]
    # A directory wins over NAME.html for /NAME (it exists).
    assert s.get("/docs").status == 301
    assert s.get("/about/").status == 404
    assert s.get("/nope").status == 404


def test_clean_urls_redirect_html_names(pith, site):
    root, files = site
    s = pith("--clean-urls", root=str(root))
    r = s.get("/about.html")
    assert r.status == 301 and r["Location"] == "/about", r.head_text()
    r = s.get("/about.html?x=1&y=%20")
    assert r.status == 301 and r["Location"] == "/about?x=1&y=%20"
    r = s.get("/a%20b.html")
    assert r["Location"] == "/a%20b"
    # "//about.html" must never become "//about" (another host).
    r = s.get("//about.html")
    assert r.status == 301 and r["Location"] == "/about"
    # /docs exists (a directory): docs.html is served as it is.
    r = s.get("/docs.html")
    assert r.status == 200 and r.body == files["docs.html"]
    # "v1.2.html" would clean to "/v1.2", which has an extension: no redirect.
    assert s.get("/v1.2.html").status == 200
    # Without the flag, nothing changes.


def test_without_clean_urls_nothing_changes(pith, site):
    root, files = site
    s = pith(root=str(root))
    assert s.get("/about").status == 404
    assert s.get("/about.html").status == 200


# ---- --header -------------------------------------------------------------------------

def test_header_on_success_and_redirects_not_errors(pith, site):
    root, files = site
    s = pith("--header", "X-Frame-Options: DENY", "--header", "*.js=X-Script:  yes ",
             "--clean-urls", root=str(root))
    r = s.get("/about.html", headers={})
    assert r.status == 301 and r["X-Frame-Options"] == "DENY"
    r = s.get("/app.js")
    assert r.status == 200 and r["X-Frame-Options"] == "DENY" and r["X-Script"] == "yes"
    assert "X-Script" not in s.get("/style.css")
    r304 = s.get("/app.js", headers={"If-None-Match": r["ETag"]})
    assert r304.status == 304 and r304["X-Script"] == "yes"
    r206 = s.get("/app.js", headers={"Range": "bytes=0-1"})
    assert r206.status == 206 and r206["X-Script"] == "yes"
    h = s.get("/app.js", method="HEAD")
    assert h["X-Script"] == "yes"
    e = s.get("/nope.js")
    assert e.status == 404 and "X-Frame-Options" not in e and "X-Script" not in e


@pytest.mark.parametrize("spec,why", [
    ("X-Bad\r\nInjected: 1: v", "token"),
    ("X-A: v\r\nInjected: 1", "visible ASCII"),
    ("X-A: caf\xe9", "visible ASCII"),
    ("Bad Name: v", "token"),
    (": v", "empty"),
    ("no colon", "NAME: VALUE"),
    ("Content-Length: 5", "writes this field"),
    ("transfer-encoding: chunked", "writes this field"),
    ("Server: x", "writes this field"),
    ("Cache-Control: no-store", "writes this field"),
    ("[a=X-A: v", "glob"),
])
def test_header_refused_at_start(site, spec, why):
    root, _ = site
    rc, err = start_fails(root, "--header", spec)
    assert rc == 2 and why in err, err


def test_header_with_nul_refused(site):
    root, _ = site
    # argv cannot carry a NUL: the value ends there, which leaves "X-A" (no colon).
    rc, err = start_fails(root, "--header", "X-A")
    assert rc == 2, err


# ---- --cors ---------------------------------------------------------------------------

def test_cors_on_get_head_and_errors(pith, site):
    root, _ = site
    s = pith("--cors", root=str(root))
    for method in ("GET", "HEAD"):
        r = s.get("/app.js", method=method, headers={"Origin": "https://a.example"})
        assert r["Access-Control-Allow-Origin"] == "*"
        assert "ETag" in r["Access-Control-Expose-Headers"]
    assert s.get("/nope")["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Origin" not in s.get("/app.js", method="POST")


def test_cors_preflight(pith, site):
    root, _ = site
    s = pith("--cors", root=str(root))
    r = s.get("/app.js", method="OPTIONS", headers={
        "Origin": "https://a.example", "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "range, x-evil\r\n".strip()})
    assert r.status == 204
    assert r["Access-Control-Allow-Origin"] == "*"
    assert r["Access-Control-Allow-Methods"] == "GET, HEAD, OPTIONS"
    assert "Range" in r["Access-Control-Allow-Headers"]
    assert "x-evil" not in r["Access-Control-Allow-Headers"].lower()  # never echoed
    assert int(r["Access-Control-Max-Age"]) > 0
    assert "Content-Length" not in r


def test_no_cors_by_default(pith, site):
    root, _ = site
    s = pith(root=str(root))
    assert "Access-Control-Allow-Origin" not in s.get("/app.js")
    assert "Access-Control-Allow-Methods" not in s.get("/", method="OPTIONS")


def test_cors_and_an_access_control_header_conflict(site):
    root, _ = site
    rc, err = start_fails(root, "--cors", "--header", "Access-Control-Allow-Origin: x")
    assert rc == 2 and "--cors" in err, err


# ---- --no-server-header ---------------------------------------------------------------

def test_no_server_header(pith, site):
    root, _ = site
    assert pith(root=str(root)).get("/app.js")["Server"] == "pith/" + VERSION
    s = pith("--no-server-header", root=str(root))
    for t in ("/app.js", "/nope", "/docs"):
        assert "Server" not in s.get(t)


# ---- --error-page ---------------------------------------------------------------------

def test_error_page_served_with_its_status(pith, site):
    root, files = site
    s = pith("--error-page", "404=/404.html", "--error-page", "403=/403.html", root=str(root))
    r = s.get("/nope")
    assert r.status == 404 and r.body == files["404.html"]
    assert r["Content-Type"].startswith("text/html")
    for name in ("ETag", "Last-Modified", "Accept-Ranges", "Cache-Control"):
        assert name not in r, r.head_text()
    h = s.get("/nope", method="HEAD")
    assert h.status == 404 and h.body == b"" and h["Content-Length"] == str(len(files["404.html"]))
    # A Range on a missing file does not turn the page into a 206.
    assert s.get("/nope", headers={"Range": "bytes=0-3"}).status == 404
    f = s.get("/.secret")
    assert f.status == 403 and f.body == files["403.html"]
    # The page itself, asked for, is an ordinary 200.
    assert s.get("/404.html").status == 200


def test_error_page_missing_falls_back_to_built_in(pith, site):
    root, _ = site
    s = pith("--error-page", "404=/gone.html", root=str(root))
    r = s.get("/nope")
    assert r.status == 404 and b"404 Not Found" in r.body


def test_error_page_405_keeps_allow(pith, site):
    root, files = site
    (root / "405.html").write_bytes(b"no such method here\n")
    s = pith("--error-page", "405=/405.html", root=str(root))
    r = s.get("/app.js", method="DELETE")
    assert r.status == 405 and r.body == b"no such method here\n"
    assert "GET" in r["Allow"]


@pytest.mark.parametrize("spec", ["200=/x.html", "400=/x.html", "404", "404=x.html",
                                  "404=/.hidden.html", "abc=/x.html", "416=/x.html"])
def test_error_page_refused_at_start(site, spec):
    root, _ = site
    rc, err = start_fails(root, "--error-page", spec)
    assert rc == 2, err

# SPDX-License-Identifier: MIT
"""Directories: trailing-slash redirects, index files, listings (escaping,
hidden entries), and the Location header's safety (DESIGN.md §2)."""

import html
import re
import urllib.parse

import pytest

from conftest import LISTED_NAMES

HREF_RE = re.compile(r"""href\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.I)
# What a percent-encoded href may contain once the HTML escaping is undone:
# no '#', '?', quotes, angle brackets, spaces, backslashes, controls or raw
# non-ASCII.
HREF_SAFE_RE = re.compile(r"^[A-Za-z0-9\-._~%/!$&'()*+,;=:@]*$")


def _hrefs(body):
    text = body.decode("utf-8", "replace")
    return [html.unescape(a or b) for a, b in HREF_RE.findall(text)]


def _last_segment(href):
    return urllib.parse.unquote(href.rstrip("/").rsplit("/", 1)[-1], errors="strict")


def _assert_safe_location(r):
    loc = r.get("Location")
    if loc is None:
        return
    assert "\r" not in loc and "\n" not in loc
    assert not loc.startswith("//"), loc
    assert not loc.startswith("/\\"), loc
    assert not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", loc), "absolute Location %r" % loc
    assert loc.startswith("/"), loc


@pytest.mark.parametrize("target,location", [
    ("/sub", "/sub/"),
    ("/sub/deeper", "/sub/deeper/"),
    ("/noindex", "/noindex/"),
    ("/sub?a=1", "/sub/?a=1"),
    ("/sub?a=1&b=%2F", "/sub/?a=1&b=%2F"),
    ("/dir%20with%20space", "/dir%20with%20space/"),
    ("/dir%20with%20space?q", "/dir%20with%20space/?q"),
    ("/pct%25dir%22q", "/pct%25dir%22q/"),
    ("/d%C3%A9j%C3%A0", "/d%C3%A9j%C3%A0/"),
])
def test_directory_without_slash_301(server, target, location):
    r = server.get(target)
    assert r.status == 301
    assert r["Location"] == location
    _assert_safe_location(r)


def test_directory_with_slash_serves_index(server, docroot):
    r = server.get("/sub/")
    assert r.status == 200
    assert r.body == docroot.files["sub/index.html"]
    assert r["Content-Type"].lower().startswith("text/html")


def test_root_serves_index(server, docroot):
    r = server.get("/")
    assert r.status == 200
    assert r.body == docroot.files["index.html"]


def test_dir_with_space_listing(server):
    r = server.get("/dir%20with%20space/")
    assert r.status == 200
    assert "file.txt" in [_last_segment(h) for h in _hrefs(r.body)]


@pytest.fixture(scope="module")
def listing(server):
    r = server.get("/noindex/")
    assert r.status == 200
    return r


@pytest.mark.router_lacks("the full listing page (the router's is a plain list)")
def test_listing_is_html(listing):
    assert listing["Content-Type"].lower().replace(" ", "") == "text/html;charset=utf-8"
    # Streamed (DESIGN.md §2): chunked over HTTP/1.1, never a Content-Length
    # (over HTTP/2 and HTTP/3 the stream's end ends it: no transfer coding
    # there).
    if listing.version in ("HTTP/2", "HTTP/3"):
        assert "Transfer-Encoding" not in listing, listing.head_text()
    else:
        assert listing["Transfer-Encoding"] == "chunked", listing.head_text()
    assert "Content-Length" not in listing, listing.head_text()
    assert listing.body.rstrip().lower().endswith(b"</html>")


@pytest.mark.parametrize("name", LISTED_NAMES + ["child"])
def test_listing_names_escaped_and_hrefs_encoded(listing, name):
    hrefs = [h for h in _hrefs(listing.body) if _last_segment(h) == name]
    assert hrefs, "no href for %r in the listing:\n%s" % (name, listing.body.decode("utf-8", "replace"))
    for h in hrefs:
        assert HREF_SAFE_RE.match(h), "href not percent-encoded: %r" % h
    # The name is shown as text (HTML-escaped in the source).
    assert name in html.unescape(listing.body.decode("utf-8"))


def test_listing_directory_href_has_trailing_slash(listing):
    assert any(h.endswith("child/") for h in _hrefs(listing.body))


def test_listing_has_no_raw_markup_from_names(listing):
    assert b"<script>.txt" not in listing.body
    assert b"<svg onload" not in listing.body
    assert b'"><svg' not in listing.body


@pytest.mark.parametrize("hidden", [".dotfile", "out_link", "out_dirlink"])
def test_listing_hides_dotfiles_and_links_leaving_root(listing, hidden):
    assert hidden.encode() not in listing.body


def test_no_listing_flag_403(pith, docroot):
    s = pith("--no-listing")
    assert s.get("/noindex/").status == 403
    r = s.get("/sub/")
    assert r.status == 200 and r.body == docroot.files["sub/index.html"]


def test_index_flag_honoured(pith, docroot):
    s = pith("--index", "other.html")
    r = s.get("/alt/")
    assert r.status == 200
    assert r.body == docroot.files["alt/other.html"]
    # The root has no other.html: it is listed, and the listing shows no
    # dotfile and no link leaving the root.
    r = s.get("/")
    assert r.status == 200
    names = {_last_segment(h) for h in _hrefs(r.body)}
    assert "index.html" in names and "sub" in names
    for bad in (".hidden", ".git", ".env", "link_out", "dirlink_out", ".well-known"):
        assert bad not in names


# -- Location safety ----------------------------------------------------------------

def test_double_slash_redirect_is_not_open(server):
    r = server.get("//sub")
    assert r.status == 301
    _assert_safe_location(r)
    assert r["Location"].endswith("sub/")


@pytest.mark.parametrize("target", ["//evil.example", "///evil.example", "/\\evil.example",
                                    "/%5cevil.example", "/%5Cevil.example", "//evil.example?x=1"])
def test_redirect_to_other_host_impossible(server, target):
    r = server.get(target)
    assert r.status == 301
    _assert_safe_location(r)
    assert "evil.example/" in r["Location"]


# Directories reached through a leading "//" (and dot-segments after it): a
# server that put the raw path in Location would send "//evil.example/",
# which a browser reads as another host.
@pytest.mark.parametrize("target,location", [
    ("///sub", "/sub/"),
    ("//evil.example/../evil.example", "/evil.example/"),
    ("//./evil.example", "/evil.example/"),
    ("//sub/../evil.example", "/evil.example/"),
    ("//%2e/evil.example", "/evil.example/"),
    ("///evil.example/../sub", "/sub/"),
])
def test_location_never_starts_with_double_slash(server, target, location):
    r = server.get(target)
    assert r.status == 301, r
    _assert_safe_location(r)
    assert r["Location"] == location


@pytest.mark.parametrize("target", ["/.//evil.example", "/sub/..//evil.example",
                                    "/./evil.example", "//evil.example/../evil.example"])
def test_location_resolves_to_this_host(server, target):
    # Dot-segments that a browser removes must not turn the Location into
    # "//evil.example/" after the fact; browsers read "\" as "/".
    r = server.get(target)
    assert r.status == 301, r
    _assert_safe_location(r)
    url = urllib.parse.urljoin("http://pith.test/", r["Location"].replace("\\", "/"))
    assert urllib.parse.urlsplit(url).netloc == "pith.test", (r["Location"], url)


def test_encoded_slash_in_redirect_candidate_400(server):
    r = server.get("/%2fsub")
    assert r.status == 400
    assert r.get("Location") is None


def test_location_has_no_crlf_from_name(server):
    r = server.get("/crlf%0D%0AX-Injected:%20yes")
    assert r.status == 301
    assert r.get("X-Injected") is None
    _assert_safe_location(r)
    assert urllib.parse.unquote(r["Location"]) == "/crlf\r\nX-Injected: yes/"

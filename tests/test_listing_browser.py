# SPDX-License-Identifier: MIT
"""The directory listing as a browser sees it: Debian's headless Chromium,
driven over the DevTools protocol (python3-websocket), renders pith's
listing of a directory full of hostile names; the test reads the DOM (every
name shown as text, no element or script injected, hrefs that lead back to
the files), sorts by clicking the column headers, checks the dark scheme,
and keeps screenshots in tests/artifacts/ (light and dark).

One Chromium serves the module, but every test gets the page freshly
loaded, with the default colour scheme and window, and only its own
events: no test depends on another or on their order."""

import urllib.request

import pytest

from conftest import LISTED_NAMES

pytest.importorskip("websocket", reason="python3-websocket is not installed")

from browserutil import CHROMIUM, Browser  # noqa: E402 (after the skip)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    try:
        yield b
    finally:
        b.close()


@pytest.fixture
def page(browser, server):
    """The listing of /noindex/, loaded for this test alone."""
    browser.open("http://127.0.0.1:%d/noindex/" % server.port)
    return browser


ROW_NAMES = """[].map.call(document.querySelectorAll('#listing tbody tr:not(.parent)'),
    function (r) { return r.cells[0].textContent; })"""


def test_listing_renders_every_name_as_text(page):
    names = page.eval(ROW_NAMES)
    shown = [n.rstrip("/") for n in names]
    for name in LISTED_NAMES:
        assert name in shown, "%r missing from %r" % (name, shown)
    assert ".dotfile" not in shown
    page.screenshot("listing.png")


def test_listing_injects_nothing(page):
    # A name like '"><svg onload=alert(1)>' must stay text: no svg, img or
    # extra script element may exist, and no dialog may have opened.
    assert page.eval("document.querySelectorAll('svg, img, iframe').length") == 0
    assert page.eval("document.scripts.length") == 1
    assert page.eval("document.title") == "Index of /noindex/"
    assert not [e for e in page.events if e.get("method") == "Page.javascriptDialogOpening"]


def test_listing_links_lead_to_the_files(page):
    hrefs = page.eval("""[].map.call(document.querySelectorAll('#listing tbody a'),
        function (a) { return [a.textContent, a.href]; })""")
    by_name = {text.rstrip("/"): href for text, href in hrefs}
    for name in LISTED_NAMES:
        url = by_name[name]
        # The browser resolved the href: fetching it must give the file.
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url) as r:
            assert r.status == 200
            assert r.read() == (b"a\n" if name == "a.txt" else
                                b"b\n" if name == "b.txt" else b"hostile name\n")


def test_listing_sorted_by_name_directories_first_then_by_click(page):
    names = page.eval(ROW_NAMES)
    dirs = [n for n in names if n.endswith("/")]
    assert names[:len(dirs)] == dirs, "directories must come first: %r" % names
    files = [n for n in names if not n.endswith("/")]
    assert files == sorted(files, key=str.lower), "sorted by name at load: %r" % names
    name_th = "document.querySelector('th[data-key=name]')"
    assert page.eval(name_th + ".getAttribute('aria-sort')") == "ascending"
    page.eval(name_th + ".querySelector('button').click()")
    desc = page.eval(ROW_NAMES)
    assert [n for n in desc if not n.endswith("/")] == sorted(files, key=str.lower, reverse=True)
    assert desc[:len(dirs)] == [d for d in desc if d.endswith("/")], "directories stay on top"
    assert page.eval(name_th + ".getAttribute('aria-sort')") == "descending"
    page.eval(name_th + ".querySelector('button').click()")
    assert page.eval(ROW_NAMES) == names


def test_listing_sort_by_size(page):
    page.eval("document.querySelector('th[data-key=size] button').click()")
    sizes = page.eval("""[].map.call(
        document.querySelectorAll('#listing tbody tr[data-dir="0"] td.num'),
        function (c) { return Number(c.dataset.v); })""")
    assert sizes == sorted(sizes), sizes


def test_listing_follows_dark_scheme(page):
    light = page.eval("getComputedStyle(document.body).backgroundColor")
    page.call("Emulation.setEmulatedMedia",
              features=[{"name": "prefers-color-scheme", "value": "dark"}])
    dark = page.eval("getComputedStyle(document.body).backgroundColor")
    assert light != dark
    assert dark == "rgb(13, 17, 23)"
    page.screenshot("listing-dark.png")


def test_listing_fits_a_phone(page):
    page.call("Emulation.setDeviceMetricsOverride", width=375, height=700,
              deviceScaleFactor=2, mobile=True)
    overflow = page.eval("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, "the page scrolls sideways on a phone by %d px" % overflow
    page.screenshot("listing-phone.png")

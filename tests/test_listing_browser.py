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

import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request

import pytest

from conftest import LISTED_NAMES

websocket = pytest.importorskip("websocket", reason="python3-websocket is not installed")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "artifacts")

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")


class Browser:
    """One headless Chromium and one page, spoken to over CDP."""

    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="pith-chromium-")
        # The flags keep Chromium off the network (this machine has none)
        # and fit a root user in a container.
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions", "--remote-debugging-port=0",
             "--user-data-dir=" + self.profile, "--window-size=1000,800", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and port is None:
            line = self.proc.stderr.readline()
            m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if m:
                port = int(m.group(1))
        assert port, "chromium did not start its DevTools endpoint"
        pages = json.load(urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
            "http://127.0.0.1:%d/json/list" % port, timeout=10))
        page = [p for p in pages if p.get("type") == "page"][0]
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30,
                                              suppress_origin=True)
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my_id:
                assert "error" not in msg, msg
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, name, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for e in self.events:
                if e.get("method") == name:
                    self.events.remove(e)
                    return e
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            self.events.append(json.loads(self.ws.recv()))
        raise AssertionError("no %s event" % name)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        assert "exceptionDetails" not in r, r
        return r["result"].get("value")

    def open(self, url):
        """Loads url afresh: the default media and window size, and no event
        left from an earlier page."""
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setEmulatedMedia", features=[])
        self.call("Emulation.clearDeviceMetricsOverride")
        self.call("Page.navigate", url="about:blank")
        self.wait_event("Page.loadEventFired")
        self.events = []
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")

    def screenshot(self, name):
        os.makedirs(ARTIFACTS, exist_ok=True)
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        path = os.path.join(ARTIFACTS, name)
        with open(path, "wb") as f:
            f.write(data)
        return data

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.kill()
            self.proc.wait(10)
            shutil.rmtree(self.profile, ignore_errors=True)


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

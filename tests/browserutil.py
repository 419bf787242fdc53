# SPDX-License-Identifier: MIT
"""Debian's headless Chromium, driven over the DevTools protocol
(python3-websocket): one browser and one page (test_listing_browser.py,
test_h2_browser.py, test_h3_chromium.py), and the pages of assets the HTTP/2
and HTTP/3 tests load. The importing test module skips itself when either is
missing (CHROMIUM is None, websocket unimportable)."""

import base64
import collections
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import threading
import time
import urllib.request
import zlib

try:
    import websocket
except ImportError:  # the test modules skip (pytest.importorskip there)
    websocket = None

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "artifacts")


class Browser:
    """One headless Chromium and one page, spoken to over CDP."""

    def __init__(self, extra_args=(), quic=False):
        self.profile = tempfile.mkdtemp(prefix="pith-chromium-")
        # The flags keep Chromium off the network (this machine has none)
        # and fit a root user in a container. QUIC stays off unless asked
        # for (quic=True: the HTTP/3 tests), so that the HTTP/1.1 and HTTP/2
        # tests see those protocols whatever Alt-Svc pith sends.
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
             "--enable-quic" if quic else "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions", "--remote-debugging-port=0",
             "--user-data-dir=" + self.profile, "--window-size=1000,800", *extra_args,
             "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and port is None:
            line = self.proc.stderr.readline()
            m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if m:
                port = int(m.group(1))
        assert port, "chromium did not start its DevTools endpoint"
        # Chromium's log goes on after that line: read it to the end, or a
        # full pipe would stop the browser; the tail is kept for messages.
        self.log = collections.deque(maxlen=50)
        threading.Thread(target=self._drain, daemon=True).start()
        pages = json.load(urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
            "http://127.0.0.1:%d/json/list" % port, timeout=10))
        page = [p for p in pages if p.get("type") == "page"][0]
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30,
                                              suppress_origin=True)
        self.next_id = 0
        self.events = []

    def _drain(self):
        for line in self.proc.stderr:
            self.log.append(line)

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


def png(size, rnd):
    """A valid PNG of about size bytes: random pixels do not compress."""
    width = 64
    rows = max(1, (size - 80) // (3 * width + 1))
    raw = b"".join(b"\0" + rnd.randbytes(3 * width) for _ in range(rows))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, rows, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 0)) + chunk(b"IEND", b""))


def text(size, rnd, before, after):
    """size bytes of valid CSS, JS or SVG: random words inside a comment."""
    words = []
    n = len(before) + len(after)
    while n < size:
        w = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(7)) + " "
        words.append(w)
        n += len(w)
    return (before + "".join(words) + after).encode()


def asset(kind, size, rnd):
    """An asset of about size bytes that a browser takes for kind (css, js,
    png, svg and json parse; text kinds compress, the others are random)."""
    if kind == "png":
        return png(size, rnd)
    if kind == "css":
        return text(size, rnd, "body{margin:0}/* ", " */\n")
    if kind == "js":
        return text(size, rnd, "window.loaded=(window.loaded||0)+1;/* ", " */\n")
    if kind == "svg":
        return text(size, rnd, '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1">'
                    "<!-- ", " --></svg>\n")
    if kind == "json":
        return text(size, rnd, '{"words": "', '"}\n')
    return rnd.randbytes(size)


def spki_pin(cert):
    """base64(SHA-256(SubjectPublicKeyInfo)) of cert, as Chromium takes it."""
    pub = subprocess.run(["openssl", "x509", "-in", cert, "-noout", "-pubkey"], check=True,
                         capture_output=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=pub,
                         check=True, capture_output=True).stdout
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def write_asset_page(root, files):
    """root/index.html: a tag for each asset a browser loads by itself (style
    sheets, scripts, images, a font), and a fetch() of every other one."""
    tags = []
    for path in files:
        kind = path.rsplit(".", 1)[1]
        if kind == "css":
            tags.append('<link rel="stylesheet" href="%s">' % path)
        elif kind == "js":
            tags.append('<script src="%s"></script>' % path)
        elif kind in ("png", "svg"):
            tags.append('<img src="%s" alt="">' % path)
        elif kind == "woff2":
            tags.append('<link rel="preload" as="font" type="font/woff2" crossorigin href="%s">'
                        % path)
    fetched = [p for p in files if p.rsplit(".", 1)[1] not in ("css", "js", "png", "svg",
                                                              "woff2")]
    page = ("<!doctype html><meta charset=utf-8><title>60 assets</title>\n%s\n<script>\n"
            "window.fetched = Promise.all(%r.map(p => fetch(p).then(r => r.arrayBuffer())));\n"
            "</script>\n" % ("\n".join(tags), fetched))
    with open(str(root / "index.html"), "w") as f:
        f.write(page)

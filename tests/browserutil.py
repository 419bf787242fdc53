# SPDX-License-Identifier: MIT
"""Debian's headless Chromium, driven over the DevTools protocol
(python3-websocket): one browser and one page (test_listing_browser.py,
test_h2_browser.py). The importing test module skips itself when either is
missing (CHROMIUM is None, websocket unimportable)."""

import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request

try:
    import websocket
except ImportError:  # the test modules skip (pytest.importorskip there)
    websocket = None

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "artifacts")


class Browser:
    """One headless Chromium and one page, spoken to over CDP."""

    def __init__(self, extra_args=()):
        self.profile = tempfile.mkdtemp(prefix="pith-chromium-")
        # The flags keep Chromium off the network (this machine has none)
        # and fit a root user in a container.
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
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

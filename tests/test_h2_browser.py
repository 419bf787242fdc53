# SPDX-License-Identifier: MIT
"""HTTP/2 as a browser speaks it (issue 20): Debian's headless Chromium
loads a page of 60 assets (1-50 KiB; stylesheets, scripts, images and
fonts by the page's own tags, JSON, text, wasm and other bytes by fetch)
over HTTPS from pith. The Resource Timing entries must say `h2` for every
asset, the browser's own loads must have decoded each file's size, and each
asset fetched again and hashed in the page (SHA-256, crypto.subtle) must
match the file. Chromium accepts the throwaway certificate by its key's pin
(--ignore-certificate-errors-spki-list), not by ignoring every error."""

import hashlib
import os
import random

import pytest

from conftest import tls_pki

pytest.importorskip("websocket", reason="python3-websocket is not installed")

from browserutil import CHROMIUM, Browser, asset, spki_pin, write_asset_page  # noqa: E402 (after the skip)

pytestmark = [pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed"),
              pytest.mark.full_only("HTTP/2")]

KINDS = ["css", "js", "png", "svg", "woff2", "json", "txt", "wasm", "bin", "xml"]
ASSETS = 60


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The page and its 60 assets; {path: bytes} of the assets."""
    root = tmp_path_factory.mktemp("h2browser")
    os.makedirs(root / "assets")
    rnd = random.Random(2019)
    files = {}
    for i in range(ASSETS):
        kind = KINDS[i % len(KINDS)]
        size = rnd.randrange(1024, 50 * 1024 + 1)
        files["/assets/a%02d.%s" % (i, kind)] = asset(kind, size, rnd)
    for path, data in files.items():
        with open(str(root) + path, "wb") as f:
            f.write(data)
    write_asset_page(root, files)
    return root, files


@pytest.fixture(scope="module")
def browser():
    cert, _ = tls_pki()["ecdsa"]
    b = Browser(["--ignore-certificate-errors-spki-list=" + spki_pin(cert)])
    try:
        yield b
    finally:
        b.close()


# Every asset fetched again (not from the cache) and hashed in the page.
DIGESTS = """(async () => {
  const hex = b => Array.from(new Uint8Array(b), x => x.toString(16).padStart(2, '0')).join('');
  const paths = %r;
  const out = {};
  await Promise.all(paths.map(async p => {
    const r = await fetch(p, {cache: 'no-store'});
    out[p] = [r.status, hex(await crypto.subtle.digest('SHA-256', await r.arrayBuffer()))];
  }));
  return out;
})()"""

ENTRIES = """performance.getEntriesByType('resource').map(e => [
    new URL(e.name).pathname, e.initiatorType, e.nextHopProtocol, e.decodedBodySize])"""


def test_a_page_of_60_assets_over_h2(browser, site, pith):
    root, files = site
    cert, key = tls_pki()["ecdsa"]
    s = pith("--tls-cert", cert, "--tls-key", key, "--tls-port", "0", root=root)
    browser.open("https://localhost:%d/" % s.tls_port)
    browser.call("Runtime.evaluate", expression="window.fetched", awaitPromise=True)
    assert browser.eval("document.title") == "60 assets"
    assert browser.eval("location.protocol") == "https:"
    assert browser.eval("window.loaded") == sum(p.endswith(".js") for p in files)
    entries = browser.eval(ENTRIES)
    first = {}
    for path, initiator, proto, decoded in entries:
        first.setdefault(path, (initiator, proto, decoded))
    assert sorted(p for p in first if p.startswith("/assets/")) == sorted(files)
    for path in files:
        initiator, proto, decoded = first[path]
        assert proto == "h2", (path, initiator, proto)
        assert decoded == len(files[path]), (path, initiator, decoded, len(files[path]))
    r = browser.call("Runtime.evaluate", expression=DIGESTS % sorted(files), awaitPromise=True,
                     returnByValue=True)
    assert "exceptionDetails" not in r, r
    digests = r["result"]["value"]
    want = {p: [200, hashlib.sha256(d).hexdigest()] for p, d in files.items()}
    assert digests == want
    again = [e for e in browser.eval(ENTRIES) if e[1] == "fetch"]
    assert len(again) >= len(files) and all(e[2] == "h2" for e in again), again

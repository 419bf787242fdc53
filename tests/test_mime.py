# SPDX-License-Identifier: MIT
"""Content-Type by extension: textual types carry charset=utf-8, unknown
and missing extensions are application/octet-stream, case-insensitive."""

import pytest

from conftest import MIME_FILES


def _norm(ct):
    return ";".join(p.strip() for p in ct.lower().split(";"))


# The router profile's table (src/core/mime_list.h, MIME_R).
ROUTER_TYPES = {"avif", "css", "gif", "htm", "html", "ico", "jpeg", "jpg", "js", "json", "map",
                "mjs", "mp4", "pdf", "png", "svg", "txt", "wasm", "webm", "webp", "woff2", "xml"}


@pytest.mark.parametrize("ext", [
    pytest.param(e, marks=() if e in ROUTER_TYPES else
                 pytest.mark.router_lacks("the 93-type MIME table")) for e in sorted(MIME_FILES)])
def test_mime_type(server, docroot, ext):
    r = server.get("/mime/f." + ext)
    assert r.status == 200
    assert r.body == docroot.files["mime/f." + ext]
    assert _norm(r["Content-Type"]) in [_norm(x) for x in MIME_FILES[ext]], r["Content-Type"]


def test_uppercase_extension(server):
    r = server.get("/mime/FILE.PNG")
    assert r.status == 200
    assert _norm(r["Content-Type"]) == "image/png"


@pytest.mark.parametrize("name", ["noext", "f.unknownext"])
def test_unknown_is_octet_stream(server, name):
    r = server.get("/mime/" + name)
    assert r.status == 200
    assert _norm(r["Content-Type"]) == "application/octet-stream"


@pytest.mark.router_lacks("the 93-type MIME table")
def test_last_extension_counts(server):
    r = server.get("/mime/archive.tar.gz")
    assert _norm(r["Content-Type"]) == "application/gzip"


def test_head_content_type_matches(server):
    for name in ("f.css", "f.png", "noext"):
        g = server.get("/mime/" + name)
        h = server.get("/mime/" + name, method="HEAD")
        assert g["Content-Type"] == h["Content-Type"]

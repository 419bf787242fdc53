# SPDX-License-Identifier: MIT
"""Regression: a redirect's Location never carries a raw backslash.

Found while hardening the suite (issue 9): `/sub/../\\evil.example` (a
directory named `\\evil.example` beneath the root) was redirected to the raw
path plus `/`. Browsers read a backslash as a slash (WHATWG URL), so the
Location resolved to `//evil.example/`, another resource than the directory
named; the contract wants Location percent-encoded. The raw path is now kept
only without backslashes; otherwise it is rebuilt from the normalized path."""

import pytest


@pytest.mark.parametrize("target,location", [
    (b"/sub/../\\evil.example", "/%5Cevil.example/"),
    (b"/sub/..\\", None),
])
def test_no_raw_backslash_in_location(server, target, location):
    r, _, _ = server.raw(b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    if location is None:
        assert "Location" not in r or "\\" not in r["Location"], r
        return
    assert r.status == 301, r
    assert "\\" not in r["Location"], r["Location"]
    assert r["Location"].upper() == location.upper(), r["Location"]

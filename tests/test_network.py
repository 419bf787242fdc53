# SPDX-License-Identifier: MIT
"""Listening addresses: --addr ::1, and the dual-stack default."""

import pytest

from conftest import ipv6_available
from http_raw import fetch

needs_ipv6 = pytest.mark.skipif(not ipv6_available(), reason="no IPv6 loopback here")


@needs_ipv6
def test_addr_ipv6_loopback(pith, docroot):
    s = pith(addr="::1")
    assert "http://[::1]:%d/" % s.port in s.start_line, s.start_line
    r = fetch(s.port, "/index.html", addr="::1", host="[::1]")
    assert r.status == 200 and r.body == docroot.files["index.html"]


def test_addr_ipv4_only(pith, docroot):
    s = pith(addr="127.0.0.1")
    assert "http://127.0.0.1:%d/" % s.port in s.start_line
    r = fetch(s.port, "/index.html")
    assert r.status == 200


@needs_ipv6
def test_default_address_dual_stack(pith, docroot):
    s = pith(addr=None)
    for addr in ("127.0.0.1", "::1"):
        r = fetch(s.port, "/index.html", addr=addr)
        assert r.status == 200 and r.body == docroot.files["index.html"], addr


def test_default_address_ipv4(pith, docroot):
    s = pith(addr=None)
    r = fetch(s.port, "/index.html", addr="127.0.0.1")
    assert r.status == 200 and r.body == docroot.files["index.html"]


@needs_ipv6
def test_log_shows_ipv6_client(pith, tmp_path):
    import time

    log = tmp_path / "a.log"
    s = pith("--log", str(log), addr="::1")
    fetch(s.port, "/v6-marker", addr="::1")
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and b"v6-marker" not in (log.read_bytes() if log.exists() else b""):
        time.sleep(0.05)
    assert log.read_bytes().startswith(b"::1 - - ["), log.read_bytes()

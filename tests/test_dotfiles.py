# SPDX-License-Identifier: MIT
"""Dotfiles: any segment starting with '.' is 403, except a leading
/.well-known/ (whose later segments are checked again)."""

import pytest

FORBIDDEN = ["/.hidden", "/.git/config", "/.git/", "/.git", "/.env", "/sub/.htpasswd", "/.hidden/",
             "/%2egit/config", "/%2Ehidden", "/sub/%2ehtpasswd", "/.well-known/.secret",
             "/.well-known/%2esecret", "/.nonexistent", "/noindex/.dotfile",
             "/sub/../.hidden", "/.well-known/../.hidden"]


@pytest.mark.parametrize("target", FORBIDDEN)
def test_dotfile_403(resolver_server, target):
    r = resolver_server.get(target)
    assert r.status == 403, r
    assert b"SECRET" not in r.body


def test_well_known_acme_200(resolver_server, docroot):
    r = resolver_server.get("/.well-known/acme-challenge/x")
    assert r.status == 200
    assert r.body == docroot.files[".well-known/acme-challenge/x"]


def test_well_known_only_at_the_start(resolver_server, docroot):
    docroot_rel = "sub/.well-known"
    assert docroot_rel not in docroot.files  # no such file: the rule answers first
    r = resolver_server.get("/sub/.well-known/acme-challenge/x")
    assert r.status == 403

# SPDX-License-Identifier: MIT
"""Symlinks: 403 by default; with --follow-symlinks only links that stay
beneath the root are followed. Both resolvers (openat2, component walk)."""

import pytest

from conftest import RESOLVERS, resolver_env


@pytest.fixture(scope="module", params=RESOLVERS)
def default_server(request, pith_module):
    s = pith_module(env=resolver_env(request.param))
    assert request.param in s.start_line, s.start_line
    return s


@pytest.fixture(scope="module", params=RESOLVERS)
def follow_server(request, pith_module):
    s = pith_module("--follow-symlinks", env=resolver_env(request.param))
    assert request.param in s.start_line, s.start_line
    return s


@pytest.mark.parametrize("target", ["/link_in", "/dirlink_in/page.txt", "/dirlink_in/",
                                    "/dirlink_in", "/link_out", "/dirlink_out/canary.txt",
                                    "/dirlink_out/", "/dangling", "/noindex/out_link",
                                    "/noindex/out_dirlink/canary.txt"])
def test_symlink_default_403(default_server, target):
    r = default_server.get(target)
    assert r.status == 403, r


def test_follow_link_in_200(follow_server, docroot):
    r = follow_server.get("/link_in")
    assert r.status == 200
    assert r.body == docroot.files["index.html"]


@pytest.mark.parametrize("target,rel", [("/dirlink_in/page.txt", "sub/page.txt"),
                                        ("/dirlink_in/", "sub/index.html"),
                                        ("/dirlink_in/deeper/file.txt", "sub/deeper/file.txt")])
def test_follow_dirlink_in_200(follow_server, docroot, target, rel):
    r = follow_server.get(target)
    assert r.status == 200
    assert r.body == docroot.files[rel]


@pytest.mark.parametrize("target", ["/link_out", "/dirlink_out/canary.txt", "/dirlink_out/x",
                                    "/dirlink_out/", "/noindex/out_link",
                                    "/noindex/out_dirlink/canary.txt"])
def test_follow_link_leaving_root_403(follow_server, target):
    r = follow_server.get(target)
    assert r.status == 403, r


def test_follow_dangling_not_served(follow_server):
    r = follow_server.get("/dangling")
    assert r.status in (403, 404)


def test_follow_does_not_bypass_dotfile_rule(follow_server):
    assert follow_server.get("/dirlink_in/.htpasswd").status == 403

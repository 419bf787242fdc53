# SPDX-License-Identifier: MIT
"""--immutable with several patterns (DESIGN.md §2 "--immutable GLOB matches
the file name | Cache-Control: max-age=31536000, immutable"; README
"Options"): each pattern marks the files whose last path segment it
matches, every other file keeps the default Cache-Control (max-age=60, or
no-cache with --max-age 0), and the limit is 8 patterns: 8 are accepted, a
9th is a usage error (exit 2, one line)."""

import pytest

from conftest import run_pith

IMMUTABLE = "max-age=31536000, immutable"

# Eight patterns, each with a file it alone matches and near misses.
PATTERNS = [
    "*.[0-9a-f]{8}.*",
    "*.woff2",
    "vendor-*",
    "v?.js",
    "[!a-z]*.css",
    "lit\\*eral",
    "exact.txt",
    "x{3}.bin",
]
FILES = {
    # name: the index of the one pattern that matches it, or None
    "app.0123abcd.js": 0,
    "app.0123abc.js": None,  # 7 hex digits
    "font.woff2": 1,
    "font.woff": None,
    "vendor-lib.js": 2,
    "my-vendor-lib.js": None,
    "v1.js": 3,
    "v10.js": None,
    "1main.css": 4,
    "main.css": None,
    "lit*eral": 5,  # the star is literal
    "litXeral": None,
    "exact.txt": 6,
    "exact.txt.bak": None,
    "xxx.bin": 7,
    "xx.bin": None,
    "sub/deep.0123abcd.png": 0,  # the last segment is matched, not the path
    "vendor-dir/plain.js": None,
}


@pytest.fixture(scope="module")
def iroot(tmp_path_factory):
    root = tmp_path_factory.mktemp("immutable8")
    for name in FILES:
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"content of " + name.encode() + b"\n")
    return str(root)


def _args(patterns):
    out = []
    for p in patterns:
        out += ["--immutable", p]
    return out


@pytest.mark.parametrize("max_age,default", [(None, "max-age=60"), ("0", "no-cache")])
def test_eight_patterns_each_applies(pith, iroot, max_age, default):
    extra = ["--max-age", max_age] if max_age else []
    s = pith(*(_args(PATTERNS) + extra), root=iroot)
    with s.conn() as c:
        for name, idx in FILES.items():
            target = "/" + name.replace("*", "%2A")
            r = c.exchange("GET", target)
            assert r.status == 200, (name, r)
            assert r.body == b"content of " + name.encode() + b"\n"
            want = IMMUTABLE if idx is not None else default
            assert r["Cache-Control"] == want, (name, r.head_text())
            # The same on a revalidation.
            r = c.exchange("GET", target, {"If-None-Match": r["ETag"]})
            assert r.status == 304 and r["Cache-Control"] == want, (name, r.head_text())


@pytest.mark.parametrize("i", range(len(PATTERNS)))
def test_each_pattern_alone(pith, iroot, i):
    """Pattern i alone marks only its own files: no pattern leaks into the
    next slot's matches."""
    s = pith("--immutable", PATTERNS[i], root=iroot)
    marked = {n for n in FILES if s.get("/" + n.replace("*", "%2A"))["Cache-Control"] == IMMUTABLE}
    assert marked == {n for n, idx in FILES.items() if idx == i}, PATTERNS[i]


def test_ninth_pattern_is_usage_error(tmp_path):
    p = run_pith(*(_args(PATTERNS + ["*.nine"]) + ["--port", "0", "--addr", "127.0.0.1",
                                                   str(tmp_path)]))
    assert p.returncode == 2, p
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert "--immutable" in lines[0] and "8" in lines[0], lines[0]
    assert "serving" not in p.stderr and p.stdout == ""

# SPDX-License-Identifier: MIT
"""Helpers for the precompressed-variant tests (tests/test_precomp_*.py):
compressible text, and variants made the way a site owner makes them, with
Debian's brotli and zstd command-line tools and Python's gzip module."""

import gzip
import os
import random
import shutil
import subprocess

import pytest

SUFFIX = {"br": ".br", "zstd": ".zst", "gzip": ".gz"}


def text(n, seed):
    """n bytes of compressible, file-specific text."""
    rnd = random.Random(seed)
    words = ["function ", "return ", "var x = %d;\n", "console.log(%d);\n", "if (a) {", "}\n"]
    out = []
    size = 0
    while size < n:
        w = rnd.choice(words)
        if "%d" in w:
            w = w % rnd.randrange(100)
        out.append(w)
        size += len(w)
    return "".join(out).encode()[:n]


def need_tools():
    for tool in ("brotli", "zstd"):
        if not shutil.which(tool):
            pytest.fail("%s(1) is missing: install the Debian package (scripts/deps)" % tool)


def make_variant(path, coding, out=None, level=None):
    """Writes path's variant for coding (to out, default beside it) with the
    real tool; returns its path. The tools keep path's mtime (brotli to the
    second, zstd and gzip exactly)."""
    out = out or path + SUFFIX[coding]
    if coding == "br":
        subprocess.run(["brotli", "-f", "-q", str(level if level is not None else 11), "-o", out,
                        path], check=True)
    elif coding == "zstd":
        subprocess.run(["zstd", "-q", "-f", "-%d" % (level or 19), path, "-o", out], check=True)
    else:
        with open(path, "rb") as f, open(out, "wb") as g:
            g.write(gzip.compress(f.read(), compresslevel=level or 9))
        st = os.stat(path)
        os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
    return out


def decode(coding, data):
    """The original bytes of a variant, by an independent decoder."""
    if coding == "gzip":
        return gzip.decompress(data)
    tool = ["brotli", "-d", "-c"] if coding == "br" else ["zstd", "-d", "-c", "-q"]
    return subprocess.run(tool, input=data, capture_output=True, check=True).stdout


def read(path):
    with open(path, "rb") as f:
        return f.read()

# SPDX-License-Identifier: MIT
"""Regression test for issue 8, defect 6:

    "A config error prints uninitialised bytes. With an overlong value (a
    300-character `--immutable`), config.c terminates the reason at `cap-1`
    instead of at its length."

config_parse() builds its reason in a 256-byte buffer on main()'s stack. When
a message that embeds the value does not fit (`--immutable: '<value>' is not
a valid pattern`, `--port: '<value>' is not a number ...`, `unknown option
'<arg>'`, `ROOT given twice ('<arg>')`, ...), the buffer is marked full, the
text stops before the value, and the reason is terminated at cap-1: the bytes
in between were never written.

On a fresh process those stack bytes happen to be zero, so the bug hides
behind an early NUL. The test therefore also runs pith with a preloaded
constructor that fills the stack below it with 0xAA before main() runs
(LD_BIND_NOW keeps the lazy-binding trampoline from zeroing that area again),
so whatever config.c leaves unwritten shows up as non-ASCII bytes.

Contract (the fixed server): exit status 2, nothing on stdout, and stderr is
exactly one line that starts with `pith: `, consists of printable ASCII
(0x20-0x7e) and ends with one newline, and names the flag.
"""

import os
import shutil
import subprocess

import pytest

from conftest import PITH_BIN, SANITIZER_RE, run_pith

LONG = 300

DIRTY_STACK_C = r"""
#include <string.h>
/* Runs before main(): writes 0xAA over 64 KiB of the stack below the
 * loader's frame, where main()'s locals will live. */
__attribute__((noinline)) static void fill(void)
{
    volatile unsigned char pad[65536];
    memset((void *)pad, 0xAA, sizeof pad);
    __asm__ volatile("" : : "r"(pad) : "memory");
}
__attribute__((constructor)) static void dirty_stack(void)
{
    fill();
}
"""

# (argument list, text the message must contain to name the flag)
CASES = {
    "immutable": (["--immutable", "a" * LONG], "--immutable"),
    "immutable-bracket": (["--immutable", "[" * LONG], "--immutable"),
    "immutable-eq": (["--immutable=" + "a" * LONG], "--immutable"),
    "port": (["--port", "9" * LONG], "--port"),
    "workers": (["--workers", "x" * LONG], "--workers"),
    "max-conns": (["--max-conns", "1" * LONG], "--max-conns"),
    "cache-entries": (["--cache-entries", "z" * LONG], "--cache-entries"),
    "timeout-header": (["--timeout-header", "7" * LONG], "--timeout-header"),
    "short-port": (["-p" + "x" * LONG], "--port"),
    "index": (["--index", "a/" * (LONG // 2)], "--index"),
    "io": (["--io", "u" * LONG], "--io"),
    "addr": (["--addr", "a" * LONG], "--addr"),
    "root-twice": (["/", "r" * LONG], "ROOT"),
    "unknown-long": (["--" + "x" * LONG], "unknown option"),
}


@pytest.fixture(scope="module")
def dirty_stack_so(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to build the stack-dirtying preload")
    d = tmp_path_factory.mktemp("dirty")
    src = d / "dirty_stack.c"
    src.write_text(DIRTY_STACK_C)
    so = d / "dirty_stack.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O0", "-o", str(so), str(src)], check=True,
                   capture_output=True)
    return str(so)


def preload_env(so):
    asan = os.environ.get("ASAN_OPTIONS", "")
    return {
        "LD_PRELOAD": so,
        "LD_BIND_NOW": "1",
        # The ASan runtime wants to come first; a preload ahead of it is fine here.
        "ASAN_OPTIONS": (asan + ":" if asan else "") + "verify_asan_link_order=0",
    }


def check_one_clean_line(p, names):
    assert p.returncode == 2, "exit status %r, stderr %r" % (p.returncode, p.stderr)
    assert p.stdout == b"", "stdout: %r" % p.stdout[:200]
    err = p.stderr
    assert err.startswith(b"pith: "), "stderr does not start with 'pith: ': %r" % err[:300]
    assert err.endswith(b"\n") and err.count(b"\n") == 1, "not exactly one line: %r" % err[:600]
    bad = sorted({b for b in err[:-1] if not 0x20 <= b <= 0x7E})
    assert not bad, "non-printable bytes %s in the message: %r" % (
        ", ".join("0x%02x" % b for b in bad), err[:600])
    assert names.encode() in err, "the message does not name %s: %r" % (names, err)


def run_raw(args, env=None):
    """Runs pith and returns stdout/stderr as bytes (run_pith decodes them,
    which would hide the very bytes under test)."""
    e = dict(os.environ)
    if env:
        e.update(env)
    p = subprocess.run([PITH_BIN] + args, stdin=subprocess.DEVNULL, capture_output=True,
                       env=e, timeout=10)
    assert not SANITIZER_RE.search(p.stderr.decode("latin-1")), p.stderr.decode("latin-1")
    return p


@pytest.mark.parametrize("case", sorted(CASES))
def test_overlong_value_plain(case):
    args, names = CASES[case]
    check_one_clean_line(run_raw(args), names)


@pytest.mark.parametrize("case", sorted(CASES))
def test_overlong_value_dirty_stack(case, dirty_stack_so):
    args, names = CASES[case]
    check_one_clean_line(run_raw(args, preload_env(dirty_stack_so)), names)


def test_preload_does_not_change_a_good_run(dirty_stack_so):
    # The preload itself must not break pith: --version still works with it.
    p = run_raw(["--version"], preload_env(dirty_stack_so))
    assert p.returncode == 0 and p.stdout.startswith(b"pith "), p
    assert run_pith("--version").returncode == 0

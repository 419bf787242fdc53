# SPDX-License-Identifier: MIT
"""`pith compress` (issue 11): the real binary writes .br/.zst/.gz variants,
which decode back to the originals with independent decoders (Python's gzip,
Debian's `brotli` and `zstd` tools); the walk's skipping rules, the 5% rule,
incremental runs, --out, --prune, --dry-run, failures (exit 1), usage
errors (exit 2), the progress bar on a terminal and plain lines off one.
The atomicity test (a live pith serving variants while they are rewritten)
is in test_compress_atomic.py."""

import gzip
import os
import pty
import random
import re
import select
import shutil
import signal
import stat
import subprocess
import tempfile
import time

import pytest

from conftest import PITH_BIN, SANITIZER_RE, run_pith

pytestmark = pytest.mark.full_only("pith compress (zlib, brotli and zstd)")

CODECS = {"br": ".br", "zstd": ".zst", "gzip": ".gz"}
SUFFIXES = tuple(CODECS.values())
WORDS = ("static file server pith request response header body cache variant brotli zstd "
         "gzip encoding accept content length range etag vary window level quality").split()


def text(n, seed):
    """n bytes of word salad: compressible like real text, different per seed."""
    rnd = random.Random(seed)
    out = []
    size = 0
    while size < n:
        w = rnd.choice(WORDS) + rnd.choice((" ", " ", " ", "\n", ", "))
        out.append(w)
        size += len(w)
    return "".join(out).encode()[:n]


def write(path, data, mtime=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def decode(path):
    """The bytes a variant decodes to, by a decoder that is not pith's."""
    if path.endswith(".gz"):
        with gzip.open(path, "rb") as f:
            return f.read()
    tool = ["brotli", "-d", "-c"] if path.endswith(".br") else ["zstd", "-d", "-c", "-q"]
    p = subprocess.run(tool + [path], capture_output=True, timeout=30)
    assert p.returncode == 0, "%s cannot decode %s: %s" % (tool[0], path, p.stderr)
    return p.stdout


def compress(*args, timeout=60.0):
    return run_pith("compress", *args, timeout=timeout)


def variants(root):
    """Relative paths of every file named like a variant under root."""
    out = []
    for d, dirs, files in os.walk(root):
        out += [os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(SUFFIXES)]
    return sorted(out)


def snapshot(root):
    """path -> (inode, mtime_ns, size) of every file under root."""
    out = {}
    for d, dirs, files in os.walk(root):
        for f in files:
            st = os.lstat(os.path.join(d, f))
            out[os.path.relpath(os.path.join(d, f), root)] = (st.st_ino, st.st_mtime_ns,
                                                              st.st_size)
    return out


@pytest.fixture
def site(tmp_path):
    """A small site: each compressible type, nested directories."""
    root = str(tmp_path / "site")
    files = {
        "index.html": text(3000, 1),
        "about.htm": text(900, 2),
        "css/site.css": text(5000, 3),
        "js/app.js": text(8000, 4),
        "js/mod.mjs": text(700, 5),
        "js/app.js.map": text(2000, 6),
        "data/list.json": text(1200, 7),
        "img/logo.svg": text(1500, 8),
        "feed.xml": text(1000, 9),
        "site.webmanifest": text(400, 10),
        "notes.md": text(600, 11),
        "table.csv": text(800, 12),
        "robots.txt": text(300, 13),
        "fonts/a.ttf": text(4000, 14),
        "fonts/b.otf": text(3000, 15),
        "favicon.ico": text(1100, 16),
        "app.wasm": text(2500, 17),
    }
    for rel, data in files.items():
        write(os.path.join(root, rel), data)
    return root, files


# -- round trip -------------------------------------------------------------------------

@pytest.mark.parametrize("level", ["max", "fast"])
def test_every_variant_decodes_to_the_original(site, level):
    root, files = site
    p = compress("--level", level, "--jobs", "2", root)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    want = sorted(rel + s for rel in files for s in SUFFIXES)
    assert variants(root) == want
    for rel, data in files.items():
        for s in SUFFIXES:
            v = os.path.join(root, rel + s)
            assert decode(v) == data, v
            assert os.path.getsize(v) <= len(data) * 0.95
            # The server ignores variants older than F; pith compress gives
            # each variant F's own mtime.
            assert os.stat(v).st_mtime_ns == os.stat(os.path.join(root, rel)).st_mtime_ns
    # The table counts every file once per coding.
    for name in CODECS:
        row = re.search(r"^%s +(\d+) +(\d+) +(\d+) " % name, p.stdout, re.M)
        assert row, p.stdout
        assert int(row.group(1)) == len(files)
        assert int(row.group(2)) == sum(len(d) for d in files.values())
        assert int(row.group(3)) == sum(os.path.getsize(os.path.join(root, r + CODECS[name]))
                                        for r in files)


def test_zstd_window_stays_within_8_mib(tmp_path):
    """A file larger than 8 MiB (long-distance matching on) still gets a
    window of at most 8 MiB, what browsers accept (RFC 9659)."""
    root = str(tmp_path / "big")
    # Nine copies of 1 MiB: zstd -19 finds the long matches at once (under
    # a second), and an uncapped window would be 16 MiB for this size.
    data = text(1024 * 1024, 99) * 9 + text(123, 5)
    write(os.path.join(root, "big.txt"), data)
    p = compress("--encodings", "zstd", root, timeout=120)
    assert p.returncode == 0, p.stderr
    v = os.path.join(root, "big.txt.zst")
    info = subprocess.run(["zstd", "-lv", v], capture_output=True, text=True, timeout=30)
    m = re.search(r"Window Size: *([\d.]+) (KiB|MiB|B)", info.stdout)
    assert m, info.stdout + info.stderr
    size = float(m.group(1)) * {"B": 1, "KiB": 1024, "MiB": 1024 * 1024}[m.group(2)]
    assert size <= 8 * 1024 * 1024, info.stdout
    # `zstd -d` with its default memory limit decodes it.
    assert decode(v) == data


def test_encodings_selects_the_codings(site):
    root, files = site
    p = compress("--encodings", "gzip,br", root)
    assert p.returncode == 0, p.stderr
    assert variants(root) == sorted(r + s for r in files for s in (".gz", ".br"))
    assert not re.search(r"^zstd ", p.stdout, re.M)


# -- what is skipped ----------------------------------------------------------------------

def test_skipping_rules(tmp_path):
    root = str(tmp_path / "s")
    outside = str(tmp_path / "outside")
    big = text(2000, 1)
    write(os.path.join(outside, "secret.js"), big)
    write(os.path.join(root, "real.js"), big)
    write(os.path.join(root, "exactly256.css"), text(256, 2))
    write(os.path.join(root, "tiny255.css"), text(255, 3))
    write(os.path.join(root, ".hidden.js"), big)
    write(os.path.join(root, ".git/config.txt"), big)
    write(os.path.join(root, "sub/.env.json"), big)
    write(os.path.join(root, ".well-known/security.txt"), big)
    write(os.path.join(root, "sub/.well-known/x.txt"), big)  # only ROOT/.well-known is served
    write(os.path.join(root, "photo.png"), big)
    write(os.path.join(root, "font.woff2"), big)
    write(os.path.join(root, "archive.tar.gz"), big)
    write(os.path.join(root, "blob"), big)
    write(os.path.join(root, "random.txt"), os.urandom(4000))  # fails the 5% rule
    os.symlink(os.path.join(outside, "secret.js"), os.path.join(root, "link.js"))
    os.symlink(outside, os.path.join(root, "linkdir"))
    os.mkfifo(os.path.join(root, "pipe.js"))  # never opened (it would block)
    p = compress("--jobs", "2", root)
    assert p.returncode == 0, p.stderr
    got = variants(root)
    want = sorted([n + s for n in ("real.js", "exactly256.css", ".well-known/security.txt")
                   for s in SUFFIXES] + ["archive.tar.gz"])
    assert got == want
    assert variants(outside) == []
    assert os.path.islink(os.path.join(root, "link.js"))
    assert "3 variants not kept (under 5% smaller)" in p.stdout, p.stdout
    assert re.search(r"^random\.txt: 4000 bytes; br not kept", p.stdout, re.M), p.stdout


def test_a_stale_variant_that_no_longer_pays_is_removed(tmp_path):
    """F changed into something incompressible: its old variants would be
    stale, so they go rather than stay (the 5% rule)."""
    root = str(tmp_path / "r")
    f = os.path.join(root, "data.txt")
    write(f, text(5000, 1), mtime=1_600_000_000)
    assert compress(root).returncode == 0
    assert variants(root) == sorted("data.txt" + s for s in SUFFIXES)
    write(f, os.urandom(5000), mtime=1_700_000_000)
    p = compress(root)
    assert p.returncode == 0, p.stderr
    assert variants(root) == []


# -- incremental ----------------------------------------------------------------------------

def test_second_run_touches_nothing(site):
    root, files = site
    assert compress("--jobs", "2", root).returncode == 0
    before = snapshot(root)
    p = compress("--jobs", "2", root)
    assert p.returncode == 0, p.stderr
    assert snapshot(root) == before
    assert "0 files compressed, %d up to date" % len(files) in p.stdout, p.stdout
    # A changed file (newer mtime) is redone, and only it.
    f = os.path.join(root, "css/site.css")
    write(f, text(5000, 42))
    os.utime(f, ns=(time.time_ns(), os.stat(f).st_mtime_ns + 10**9))
    p = compress(root)
    assert p.returncode == 0, p.stderr
    assert "1 file compressed, %d up to date" % (len(files) - 1) in p.stdout, p.stdout
    after = snapshot(root)
    changed = sorted(k for k in after if after[k] != before.get(k))
    assert changed == sorted(["css/site.css"] + ["css/site.css" + s for s in SUFFIXES])
    for s in SUFFIXES:
        assert decode(f + s) == text(5000, 42)


def test_a_file_replaced_by_an_older_copy_is_redone(tmp_path):
    """rsync -t or tar can put back an older F: its variants, now newer than
    F, would be served by the server with the wrong content; only an equal
    mtime counts as current."""
    root = str(tmp_path / "r")
    f = os.path.join(root, "a.js")
    write(f, text(3000, 1), mtime=1_700_000_000)
    assert compress(root).returncode == 0
    write(f, text(3000, 2), mtime=1_600_000_000)
    p = compress(root)
    assert p.returncode == 0, p.stderr
    assert "1 file compressed" in p.stdout
    for s in SUFFIXES:
        assert decode(f + s) == text(3000, 2)
        assert os.stat(f + s).st_mtime_ns == os.stat(f).st_mtime_ns


def test_jobs_1_and_n_give_identical_variants(site, tmp_path):
    root, files = site
    copy = str(tmp_path / "copy")
    shutil.copytree(root, copy)
    a = compress("--jobs", "1", root)
    b = compress("--jobs", "4", copy)
    assert a.returncode == b.returncode == 0
    for rel in variants(root):
        with open(os.path.join(root, rel), "rb") as x, open(os.path.join(copy, rel), "rb") as y:
            assert x.read() == y.read(), rel
    assert variants(root) == variants(copy)

    def table(out):
        return [l for l in out.splitlines() if re.match(r"(encoding|br|zstd|gzip) ", l)]
    assert table(a.stdout) == table(b.stdout)
    assert sorted(a.stdout.splitlines()[:-5]) == sorted(b.stdout.splitlines()[:-5])


def test_dry_run_writes_nothing(site):
    root, files = site
    before = snapshot(root)
    p = compress("--dry-run", root)
    assert p.returncode == 0, p.stderr
    assert snapshot(root) == before
    assert "would compress js/app.js (br, zstd, gzip)" in p.stdout
    assert len(re.findall(r"^would compress ", p.stdout, re.M)) == len(files)
    assert p.stdout.endswith("dry run: %d files would be compressed, 0 up to date, 0 variants "
                             "would be pruned, 0 failed\n" % len(files))


# -- --out DIR -------------------------------------------------------------------------------

def test_out_writes_a_mirror_tree(site, tmp_path):
    root, files = site
    out = str(tmp_path / "mirror")
    before = snapshot(root)
    p = compress("--out", out, root)
    assert p.returncode == 0, p.stderr
    assert snapshot(root) == before  # nothing beside the originals
    assert variants(out) == sorted(r + s for r in files for s in SUFFIXES)
    for rel, data in files.items():
        for s in SUFFIXES:
            assert decode(os.path.join(out, rel + s)) == data
            assert (os.stat(os.path.join(out, rel + s)).st_mtime_ns ==
                    os.stat(os.path.join(root, rel)).st_mtime_ns)
    mirror = snapshot(out)
    p = compress("--out", out, root)
    assert p.returncode == 0
    assert snapshot(out) == mirror
    assert "0 files compressed, %d up to date" % len(files) in p.stdout


def test_out_never_follows_a_symlink_in_the_mirror(site, tmp_path):
    root, files = site
    out = str(tmp_path / "mirror")
    elsewhere = str(tmp_path / "elsewhere")
    os.makedirs(out)
    os.makedirs(elsewhere)
    os.symlink(elsewhere, os.path.join(out, "css"))
    p = compress("--out", out, root)
    assert p.returncode == 1
    assert os.listdir(elsewhere) == []
    assert re.search(r"^pith compress: css/site\.css: cannot make its directory under --out",
                     p.stderr, re.M), p.stderr
    # Everything else is done.
    assert len(variants(out)) == 3 * (len(files) - 1)


# -- --prune ----------------------------------------------------------------------------------

def test_prune_removes_only_orphaned_variants(site):
    root, files = site
    assert compress(root).returncode == 0
    os.remove(os.path.join(root, "js/app.js"))
    shutil.rmtree(os.path.join(root, "fonts"))
    os.makedirs(os.path.join(root, "fonts"))
    for rel in ("fonts/a.ttf", "fonts/b.otf"):  # the variants stay, the originals do not
        for s in SUFFIXES:
            write(os.path.join(root, rel + s), gzip.compress(b"x" * 1000))
    keep = ["archive.tar.gz", "photo.png.br", "sub/readme.zst", ".old.js.gz", "js/app.js.bz2"]
    for k in keep:
        write(os.path.join(root, k), b"not a variant pith made")
    dry = compress("--prune", "--dry-run", root)
    assert dry.returncode == 0, dry.stderr
    assert "would remove js/app.js.br (app.js is gone)" in dry.stdout
    before = snapshot(root)
    p = compress("--prune", root)
    assert p.returncode == 0, p.stderr
    gone = sorted(set(before) - set(snapshot(root)))
    assert gone == sorted(r + s for r in ("js/app.js", "fonts/a.ttf", "fonts/b.otf")
                          for s in SUFFIXES)
    assert " 9 pruned" in p.stdout
    assert len(re.findall(r"^would remove ", dry.stdout, re.M)) == 9
    for k in keep:
        assert os.path.exists(os.path.join(root, k)), k


def test_prune_with_out(site, tmp_path):
    root, files = site
    out = str(tmp_path / "mirror")
    assert compress("--out", out, root).returncode == 0
    os.remove(os.path.join(root, "data/list.json"))
    shutil.rmtree(os.path.join(root, "img"))
    write(os.path.join(out, "README"), b"mine")
    p = compress("--out", out, "--prune", "--encodings", "br,gzip", root)
    assert p.returncode == 0, p.stderr
    left = variants(out)
    # Only the selected codings are pruned; the zstd variants stay.
    assert "data/list.json.zst" in left and "img/logo.svg.zst" in left
    for s in (".br", ".gz"):
        assert "data/list.json" + s not in left and "img/logo.svg" + s not in left
    assert os.path.exists(os.path.join(out, "README"))
    assert len(left) == 3 * len(files) - 4


# -- failures ----------------------------------------------------------------------------------

def _as_nobody():
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)


def test_an_unreadable_file_fails_and_the_rest_is_done():
    """open() fails with EACCES, for a file and for a directory. Root reads
    any file, so as root the tool
    runs as nobody (uid 65534), which then honestly cannot read a mode-000
    file; as any other user the mode alone does it."""
    base = tempfile.mkdtemp(prefix="pith-compress-", dir="/tmp")  # reachable by nobody
    try:
        os.chmod(base, 0o755)
        root = os.path.join(base, "site")
        for name, seed in (("a.js", 1), ("b.css", 2), ("c.html", 3), ("private/d.js", 4)):
            write(os.path.join(root, name), text(3000, seed))
        os.chmod(os.path.join(root, "b.css"), 0)
        pre = None
        if os.geteuid() == 0:
            for d, dirs, fs in os.walk(base):
                for n in dirs + fs + [""]:
                    os.chown(os.path.join(d, n), 65534, 65534)
            pre = _as_nobody
        os.chmod(os.path.join(root, "private"), 0)
        p = subprocess.run([PITH_BIN, "compress", root], capture_output=True, text=True,
                           timeout=60, preexec_fn=pre)
        assert not SANITIZER_RE.search(p.stderr), p.stderr
        assert p.returncode == 1, p.stdout + p.stderr
        assert sorted(p.stderr.strip().splitlines()) == [
            "pith compress: b.css: cannot open: Permission denied",
            "pith compress: private: cannot open the directory: Permission denied"]
        assert variants(root) == sorted(n + s for n in ("a.js", "c.html") for s in SUFFIXES)
        assert "2 files compressed" in p.stdout and "2 failed" in p.stdout
    finally:
        if os.path.isdir(os.path.join(base, "site", "private")):
            os.chmod(os.path.join(base, "site", "private"), 0o755)
        shutil.rmtree(base)


def test_a_variant_that_cannot_be_written_fails(site):
    """A directory where a variant must go: rename() fails (EISDIR), the
    file is named with the reason, the temporary file is gone, the rest is
    done."""
    root, files = site
    os.makedirs(os.path.join(root, "js/app.js.br"))
    p = compress(root)
    assert p.returncode == 1
    assert re.fullmatch(r"pith compress: js/app\.js\.br: cannot rename the temporary file to "
                        r"it: Is a directory\n", p.stderr), p.stderr
    assert len(variants(root)) == 3 * len(files) - 1
    assert [f for f in os.listdir(os.path.join(root, "js")) if f.startswith(".")] == []


def test_missing_root_exits_1(tmp_path):
    p = compress(str(tmp_path / "nope"))
    assert p.returncode == 1
    assert p.stderr.count("\n") == 1 and "cannot open ROOT" in p.stderr


BAD = [
    [],
    ["a", "b"],
    ["--level", "slow", "x"],
    ["--level"],
    ["--jobs", "0", "x"],
    ["--jobs", "257", "x"],
    ["--jobs", "2x", "x"],
    ["--jobs=", "x"],
    ["--encodings", "br,lzma", "x"],
    ["--encodings", "", "x"],
    ["--encodings", "br,", "x"],
    ["--out", "", "x"],
    ["--frobnicate", "x"],
    ["-j", "2", "x"],
]


@pytest.mark.parametrize("args", BAD, ids=[" ".join(a) or "empty" for a in BAD])
def test_usage_errors_exit_2_with_one_line(args):
    p = compress(*args)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stdout == ""
    assert p.stderr.startswith("pith compress: ") and p.stderr.count("\n") == 1, p.stderr


def test_help():
    p = compress("--help")
    assert p.returncode == 0 and p.stderr == ""
    for flag in ("--level fast|max", "--jobs N", "--out DIR", "--encodings", "--prune",
                 "--dry-run"):
        assert flag in p.stdout
    main = run_pith("--help")
    assert "pith compress" in main.stdout


# -- output on and off a terminal ------------------------------------------------------------

def run_on_pty(argv, timeout=60.0):
    """Runs argv with stdout and stderr on a pseudo-terminal; returns
    (exit status, everything written)."""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            r, _, _ = select.select([fd], [], [], 0.5)
            if not r:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        else:
            os.kill(pid, signal.SIGKILL)
            pytest.fail("pith compress on a terminal did not finish: %r" % out[-500:])
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode("utf-8", "replace")


def test_progress_bar_on_a_terminal_plain_lines_off_it(site, tmp_path):
    root, files = site
    copy = str(tmp_path / "copy")
    shutil.copytree(root, copy)
    rc, tty = run_on_pty([PITH_BIN, "compress", "--jobs", "2", root])
    assert rc == 0, tty
    assert not SANITIZER_RE.search(tty), tty
    # Redrawn in place: carriage return, erase line, the bar with its figures.
    draws = re.findall(r"\r\x1b\[K\[[#.]{20}\] (\d+)/(\d+) files  \S+ \S+/\S+ \S+  \S+ \S+/s  "
                       r"ETA \S+", tty)
    assert draws, repr(tty)
    assert all(int(t) == len(files) for _, t in draws)
    assert int(draws[-1][0]) == len(files)
    assert "js/app.js:" not in tty  # no per-file lines
    assert re.search(r"^br +%d " % len(files), tty, re.M)
    pipe = compress("--jobs", "2", copy)
    assert pipe.returncode == 0
    assert "\r" not in pipe.stdout + pipe.stderr and "\x1b" not in pipe.stdout + pipe.stderr
    lines = [l for l in pipe.stdout.splitlines() if re.match(r"\S+: \d+ bytes; ", l)]
    assert sorted(l.split(":")[0] for l in lines) == sorted(files)
    assert re.search(r"^br +%d " % len(files), pipe.stdout, re.M)


def test_file_modes_follow_the_original(tmp_path):
    root = str(tmp_path / "m")
    f = os.path.join(root, "a.js")
    write(f, text(2000, 1))
    os.chmod(f, 0o640)
    assert compress(root).returncode == 0
    for s in SUFFIXES:
        assert stat.S_IMODE(os.stat(f + s).st_mode) == 0o640


def test_sigint_finishes_the_files_in_flight_and_leaves_nothing_half_done(tmp_path):
    root = str(tmp_path / "many")
    files = {"f%02d.js" % i: text(60000, 500 + i) for i in range(20)}
    for name, data in files.items():
        write(os.path.join(root, name), data)
    p = subprocess.Popen([PITH_BIN, "compress", "--jobs", "1", root], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        first = p.stdout.readline()  # the first file is done: the run is under way
        assert re.match(r"f00\.js: 60000 bytes; ", first), first
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert not SANITIZER_RE.search(err), err
    assert p.returncode == 1, out + err
    assert re.fullmatch(r"pith compress: interrupted by signal 2: the files in flight were "
                        r"finished, the rest is not done\n", err), err
    done = sorted({v[:-len(s)] for v in variants(root) for s in SUFFIXES if v.endswith(s)})
    assert 1 <= len(done) < len(files), done
    for name in done:  # every variant there is whole, and each file has all three
        for s in SUFFIXES:
            assert decode(os.path.join(root, name + s)) == files[name]
    assert [f for f in os.listdir(root) if f.startswith(".")] == []
    # The next run completes the rest.
    q = compress("--jobs", "2", "--level", "fast", root, timeout=120)
    assert q.returncode == 0, q.stderr
    assert "%d files compressed, %d up to date" % (len(files) - len(done), len(done)) in q.stdout


def test_a_name_too_long_for_its_variants_fails_and_the_rest_is_done(tmp_path):
    """A file whose name leaves no room for ".br"/".zst" under NAME_MAX
    (255 bytes) can have no variant: it is named with the reason (exit 1);
    an honest failure that does not depend on who runs the test."""
    root = str(tmp_path / "r")
    long_name = "x" * 249 + ".js"  # 252 bytes: .br fits (255), .zst does not (256)
    write(os.path.join(root, long_name), text(2000, 1))
    write(os.path.join(root, "ok.css"), text(2000, 2))
    p = compress(root)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stderr == ("pith compress: %s: the name of its zstd variant would be longer than "
                        "255 bytes\n" % long_name)
    assert variants(root) == sorted("ok.css" + s for s in SUFFIXES)
    assert "1 file compressed" in p.stdout and "1 failed" in p.stdout


def test_variants_of_a_file_now_too_small_are_removed_when_stale(tmp_path):
    """F shrank under 256 bytes: it gets no new variants, and the old ones,
    made from other content, go (a newer one would otherwise be served)."""
    root = str(tmp_path / "r")
    f = os.path.join(root, "a.js")
    g = os.path.join(root, "b.js")
    write(f, text(3000, 1), mtime=1_700_000_000)
    write(g, text(3000, 2), mtime=1_700_000_000)
    assert compress(root).returncode == 0
    write(f, b"tiny", mtime=1_600_000_000)  # older than its variants (rsync -t)
    write(g, b"tiny too", mtime=1_800_000_000)  # newer
    dry = compress("--dry-run", root)
    assert "would remove a.js.br (stale: a.js is under 256 bytes now)" in dry.stdout
    assert len(variants(root)) == 6
    p = compress(root)
    assert p.returncode == 0, p.stderr
    assert variants(root) == []
    assert "removed b.js.zst (stale: b.js is under 256 bytes now)" in p.stdout
    assert " 6 pruned" in p.stdout

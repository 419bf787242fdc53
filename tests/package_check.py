# SPDX-License-Identifier: MIT
"""The Debian package (`make package-check`; not part of the per-loop test
passes, since it does not depend on the loop and takes about half a minute):
scripts/build-deb builds it with dpkg-buildpackage -us -uc -b
(DEB_BUILD_OPTIONS=nocheck) from a copy of the tree, lintian reports no
error, and the package's binary runs by hand and serves:

- always from `dpkg -x` (the package's files unpacked into a directory);
- where the test runs as root and no pith package is installed, also from
  a real `dpkg -i`, which the test then purges. There is no systemd here to
  start it under pith.socket; dist/systemd is checked by
  test_systemd_units.py."""

import glob
import os
import re
import signal
import subprocess
import urllib.request

import pytest

from conftest import REPO


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    out = tmp_path_factory.mktemp("deb")
    p = subprocess.run([os.path.join(REPO, "scripts", "build-deb"), str(out)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    changes = p.stdout.strip()
    debs = [d for d in glob.glob(os.path.join(out, "pith_*.deb"))]
    assert len(debs) == 1, os.listdir(out)
    return changes, debs[0]


def serve_and_get(binary, tmp_path):
    """Starts binary by hand on a free port; returns what GET / answered."""
    root = tmp_path / "www"
    root.mkdir(exist_ok=True)
    (root / "index.html").write_text("from the package\n")
    p = subprocess.Popen([binary, "--addr", "127.0.0.1", "--port", "0", "--workers", "1",
                          str(root)], stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()
        m = re.search(r"on http://127\.0\.0\.1:(\d+)/", line)
        assert m, line
        with urllib.request.urlopen("http://127.0.0.1:%s/" % m.group(1), timeout=10) as r:
            body = r.read().decode()
        p.send_signal(signal.SIGTERM)
        assert p.wait(15) == 0
        return body
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_lintian_reports_no_error(package):
    changes, _ = package
    p = subprocess.run(["lintian", "--fail-on", "error", changes], capture_output=True,
                       text=True, timeout=300)
    tags = [line for line in p.stdout.splitlines() if re.match(r"[EWIP]: ", line)]
    print("lintian: %s" % ("; ".join(tags) or "no tags"))
    assert p.returncode == 0 and not any(t.startswith("E: ") for t in tags), p.stdout + p.stderr


def test_contents_and_unpacked_binary_runs(package, tmp_path):
    _, deb = package
    listing = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True).stdout
    for path in ("./usr/bin/pith", "./usr/share/man/man1/pith.1.gz",
                 "./lib/systemd/system/pith.service", "./lib/systemd/system/pith.socket",
                 "./usr/share/doc/pith/copyright", "./etc/pith/pith.conf",
                 "./etc/pith/sites-enabled/"):
        assert path in listing, path
    root = tmp_path / "unpacked"
    subprocess.run(["dpkg-deb", "-x", deb, str(root)], check=True)
    binary = str(root / "usr" / "bin" / "pith")
    out = subprocess.run([binary, "--version"], capture_output=True, text=True)
    # Built with HTTP/3 (its libraries are in Build-Depends: ngtcp2 and
    # nghttp3 from bookworm-backports on Debian 12, main on Debian 13).
    assert re.fullmatch(r"pith 0\.1\.0\nHTTP/3: ngtcp2 [0-9.]+, nghttp3 [0-9.]+, GnuTLS [0-9.]+\n",
                        out.stdout), out.stdout
    unit = (root / "lib" / "systemd" / "system" / "pith.service").read_text()
    assert "\nExecStart=/usr/bin/pith --config /etc/pith/pith.conf\n" in unit
    assert "\nExecReload=/bin/kill -HUP $MAINPID\n" in unit
    assert serve_and_get(binary, tmp_path) == "from the package\n"
    # The configuration it installs is one pith takes (its root and log aside),
    # and dpkg keeps it as a conffile.
    conf = (root / "etc" / "pith" / "pith.conf").read_text()
    www = tmp_path / "srv-www"
    www.mkdir()
    mine = tmp_path / "pith.conf"
    mine.write_text(conf.replace("/srv/www", str(www)).replace("/var/log/pith", str(tmp_path))
                    .replace("include sites-enabled/",
                             "include %s/" % (root / "etc" / "pith" / "sites-enabled")))
    p = subprocess.run([binary, "--config", str(mine), "--check"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    conffiles = subprocess.run(["dpkg-deb", "-I", deb, "conffiles"], capture_output=True,
                               text=True).stdout
    assert "/etc/pith/pith.conf" in conffiles.split(), conffiles


def test_dpkg_install_and_run_by_hand(package, tmp_path):
    _, deb = package
    installed = subprocess.run(["dpkg-query", "-W", "-f=${Status}", "pith"],
                               capture_output=True, text=True).stdout
    if os.geteuid() != 0 or "installed" in installed:
        # A skip, not a pass: nothing was installed, nothing checked.
        pytest.skip("dpkg -i not tried: %s" % ("not root" if os.geteuid() else
                                               "a pith package is installed already"))
    subprocess.run(["dpkg", "-i", deb], check=True, capture_output=True, timeout=120)
    try:
        assert os.path.exists("/usr/bin/pith")
        # Installed, not enabled: nothing listens on port 80 because of us.
        assert not os.path.exists(
            "/etc/systemd/system/sockets.target.wants/pith.socket")
        assert serve_and_get("/usr/bin/pith", tmp_path) == "from the package\n"
        assert os.path.exists("/usr/share/man/man1/pith.1.gz")
        assert os.path.exists("/lib/systemd/system/pith.socket")
    finally:
        subprocess.run(["dpkg", "--purge", "pith"], check=True, capture_output=True, timeout=120)
    assert not os.path.exists("/usr/bin/pith")


def test_make_install_and_uninstall(tmp_path):
    dest = tmp_path / "dest"
    make = ["make", "-s", "-C", REPO, "DESTDIR=%s" % dest, "PREFIX=/opt/pith"]
    subprocess.run(make + ["install"], check=True, capture_output=True, timeout=600)
    files = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    assert files == ["opt/pith/bin/pith", "opt/pith/etc/pith/pith.conf",
                     "opt/pith/lib/systemd/system/pith.service",
                     "opt/pith/lib/systemd/system/pith.socket",
                     "opt/pith/share/man/man1/pith.1"]
    assert os.access(dest / "opt/pith/bin/pith", os.X_OK)
    unit = (dest / "opt/pith/lib/systemd/system/pith.service").read_text()
    assert "\nExecStart=/opt/pith/bin/pith --config /opt/pith/etc/pith/pith.conf\n" in unit
    assert "/usr/bin/pith" not in unit
    # A second install keeps a configuration that was changed.
    (dest / "opt/pith/etc/pith/pith.conf").write_text("root /srv/mine\n")
    subprocess.run(make + ["install"], check=True, capture_output=True, timeout=600)
    assert (dest / "opt/pith/etc/pith/pith.conf").read_text() == "root /srv/mine\n"
    subprocess.run(make + ["uninstall"], check=True, capture_output=True, timeout=60)
    left = [str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file()]
    assert left == ["opt/pith/etc/pith/pith.conf"]  # the user's configuration stays

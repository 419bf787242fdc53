# SPDX-License-Identifier: MIT
"""Automatic HTTPS (issue 35): when pith renews a certificate it holds, and
what it says when it cannot. A fake CA of the test's own (acmeutil.FakeACME:
HTTPS on loopback, a directory with or without renewalInfo, nothing issued)
and a stored certificate made here to the second (acmeutil.stored_pair):

- ARI (RFC 9773): pith asks for the certificate's renewal window by the
  RFC's identifier (base64url of the AKI, '.', of the serial's DER octets:
  the RFC's own example certificate), asks again no sooner than the CA's
  Retry-After, picks a moment inside the window and orders then, naming
  the certificate it replaces;
- without renewalInfo, or with an answer that is no window, it renews two
  thirds into the lifetime;
- a certificate that is about to expire (less than a sixth of its lifetime
  left: the README's stated margin) and cannot be renewed, the CA being
  down, is an error line; one with more left is not.

PITH_ACME_ARI_S=1 stands for the hour before the first question and the
defaults between them (docs/DESIGN.md §12, test knobs)."""

import re
import time

import pytest

from acmeutil import (RFC_ARI_ID, FakeACME, api_cert, log_time, rfc3339, stored_pair,
                      wait_for)
from conftest import free_port

pytestmark = pytest.mark.full_only("ACME")

KNOBS = {"PITH_ACME_ARI_S": "1", "PITH_ACME_BACKOFF_S": "300"}


@pytest.fixture
def www(tmp_path):
    d = tmp_path / "www"
    d.mkdir()
    (d / "who.txt").write_text("a\n")
    return d


def holding(tmp_path, name, not_before, not_after):
    """A state directory holding a certificate for name."""
    state = tmp_path / "state"
    (state / "certs").mkdir(parents=True)
    (state / "certs" / (name + ".pem")).write_text(
        stored_pair(tmp_path, name, not_before, not_after))
    return state


def start(pith, www, ca, state, *names):
    return pith(*[a for n in names for a in ("--site", "%s=%s" % (n, www))], "--tls-port", "0",
                *ca.args(state), root=False, env=KNOBS)


def test_ari_window_retry_after_and_the_certificate_replaced(pith, www, tmp_path):
    """The first answer puts the window a day away with Retry-After: 5;
    the second, no sooner, puts it 3 to 6 s ahead: pith orders inside it."""
    answers = {}

    def ari(n, cert_id):
        now = time.time()
        if n == 1:
            w, extra = (now + 86400, now + 2 * 86400), [("Retry-After", "5")]
        else:
            w, extra = (now + 3, now + 6), [("Retry-After", "3600")]
        answers[n] = w
        doc = {"suggestedWindow": {"start": rfc3339(w[0]), "end": rfc3339(w[1])},
               "explanationURL": "https://ca.example/why"}
        return 200, "application/json", (__import__("json").dumps(doc)).encode(), extra

    ca = FakeACME(tmp_path, ari)
    try:
        now = int(time.time())
        state = holding(tmp_path, "a.test", now - 86400, now + 89 * 86400)
        srv = start(pith, www, ca, state, "a.test")
        assert "acme: a.test: loaded the stored certificate" in srv.stderr_text()
        orders = wait_for(lambda: ca.requests("/order"), 30)
        assert orders, (srv.stderr_text(), ca.seen)
        asked = ca.requests("/ari/")
        assert len(asked) == 2, asked
        # The RFC's identifier for the RFC's certificate, unauthenticated GETs.
        assert all(a[1] == "GET" and a[2] == "/ari/" + RFC_ARI_ID for a in asked), asked
        # Retry-After: 5 was honoured (the knob's default would be 1 s).
        gap = asked[1][0] - asked[0][0]
        assert 4.0 <= gap <= 30.0, gap
        # The moment chosen is inside each window, and the order came then.
        text = srv.stderr_text()
        chosen = re.findall(r"acme: a\.test: the CA suggests renewing between (\S+ \S+ UTC) and "
                            r"(\S+ \S+ UTC); renewing at (\S+ \S+ UTC) \(the CA's explanation: "
                            r"https://ca\.example/why\)", text)
        assert len(chosen) == 2, text
        for (s, e, at), n in zip(chosen, (1, 2)):
            s, e, at = log_time(s), log_time(e), log_time(at)
            assert (s, e) == tuple(int(x) for x in answers[n]), (s, e, answers[n])
            assert s <= at <= e, (s, at, e)
        at = log_time(chosen[1][2])
        first = orders[0][0]
        assert at <= first + 0.05 and first <= at + 10, (at, first)
        assert int(answers[2][0]) <= first <= answers[2][1] + 10, (answers[2], first)
        # The order names the certificate it replaces (RFC 9773 §5); refused
        # with it, it is asked once more without.
        assert orders[0][3]["replaces"] == RFC_ARI_ID, orders[0]
        assert orders[0][3]["identifiers"] == [{"type": "dns", "value": "a.test"}]
        assert wait_for(lambda: len(ca.requests("/order")) == 2, 5), ca.seen
        assert "replaces" not in ca.requests("/order")[1][3]
        assert wait_for(lambda: "acme: a.test: no certificate this time" in srv.stderr_text(), 5)
        assert len(ca.requests("/ari/")) == 2  # Retry-After: 3600 holds it
    finally:
        ca.stop()


def _garbage(n, cert_id):
    return 200, "application/json", b'{"suggestedWindow": {"start": "soon", "end"', []


def _backwards(n, cert_id):
    now = time.time()
    doc = '{"suggestedWindow": {"start": "%s", "end": "%s"}}' % (rfc3339(now + 3),
                                                                rfc3339(now - 60))
    return 200, "application/json", doc.encode(), []


def _missing(n, cert_id):
    return 404, "application/problem+json", b'{"type": "urn:ietf:params:acme:error:malformed"}', []


FALLBACK = {
    "none": (None, r"the CA offers no renewal information \(RFC 9773\)"),
    "garbage": (_garbage, r"ari/%s: the answer is not JSON: " % re.escape(RFC_ARI_ID)),
    "backwards": (_backwards, r"no suggestedWindow with a start before its end"),
    "missing": (_missing, r"answered 404 with Content-Type 'application/problem\+json'"),
}


@pytest.mark.parametrize("mode", sorted(FALLBACK))
def test_no_usable_window_renews_at_two_thirds(pith, www, tmp_path, mode):
    """An 18 s certificate, two thirds at 12 s: renewalInfo is asked (where
    the directory lists it) and gives nothing usable; the order comes at
    two thirds, not sooner."""
    ari, why = FALLBACK[mode]
    ca = FakeACME(tmp_path, ari)
    try:
        nb = int(time.time()) - 7
        na = nb + 18
        state = holding(tmp_path, "a.test", nb, na)
        srv = start(pith, www, ca, state, "a.test")
        orders = wait_for(lambda: ca.requests("/acct"), 30)
        assert orders, (srv.stderr_text(), ca.seen)
        third = nb + 12
        assert third - 0.05 <= orders[0][0] <= third + 10, (third, orders[0][0])
        text = srv.stderr_text()
        m = re.search(r"acme: a\.test: .*%s.*; renewing at two thirds of its lifetime, (\S+ \S+ UTC)"
                      % why, text)
        assert m and log_time(m.group(1)) == third, text
        asked = ca.requests("/ari/")
        assert (len(asked) >= 1 and asked[0][0] < orders[0][0]) if ari else asked == [], asked
    finally:
        ca.stop()


def test_expiry_margin_is_an_error_when_the_ca_is_down(pith, www, tmp_path):
    """Three 60 s certificates, all past two thirds, the CA down: a.test
    (5 s left: under a sixth) and c.test (expired) get an error line at the
    failed attempt; b.test (15 s left) only the failure."""
    now = int(time.time())
    state = tmp_path / "state"
    (state / "certs").mkdir(parents=True)
    for name, nb in (("a.test", now - 55), ("b.test", now - 45), ("c.test", now - 70)):
        (state / "certs" / (name + ".pem")).write_text(stored_pair(tmp_path, name, nb, nb + 60))
    cert, _ = api_cert(str(tmp_path))
    down = "https://127.0.0.1:%d/dir" % free_port()  # nobody listens
    srv = pith(*[a for n in ("a", "b", "c") for a in ("--site", "%s.test=%s" % (n, www))],
               "--tls-port", "0", "--acme", "ops@example.org", "--acme-ca", down,
               "--acme-ca-root", cert, "--acme-dir", str(state), root=False, env=KNOBS)
    assert wait_for(lambda: all("acme: %s.test: no certificate this time" % n in srv.stderr_text()
                                for n in "abc"), 30), srv.stderr_text()
    text = srv.stderr_text()
    m = re.search(r"acme: error: a\.test: the certificate expires at (\S+ \S+ UTC) and could not "
                  r"be renewed", text)
    assert m and log_time(m.group(1)) == now + 5, text
    m = re.search(r"acme: error: c\.test: the certificate expired at (\S+ \S+ UTC) and could not "
                  r"be renewed", text)
    assert m and log_time(m.group(1)) == now - 10, text
    assert "error: b.test" not in text, text
    assert "the CA's directory" in text

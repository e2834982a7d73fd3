"""Console sessions and cookies, without a browser: expiry, rotation, CSRF, cookie flags."""

from __future__ import annotations

import io
import urllib.request

from starlette.datastructures import UploadFile

from agentmem.console.sessions import ANONYMOUS_IDLE_S, IDLE_S, LIFETIME_S, Caller, SessionStore
from tests.harness import Process

CALLER = Caller("ann", "user", frozenset({"memory.read"}))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_signing_in_replaces_the_session_id_and_signing_out_forgets_it() -> None:
    store = SessionStore()
    anonymous = store.anonymous(None)
    assert not anonymous.signed_in
    signed = store.sign_in(anonymous, "tok", CALLER)
    assert signed.id != anonymous.id and signed.csrf != anonymous.csrf
    assert store.get(anonymous.id) is None  # no fixation: the pre-sign-in id is dead
    assert store.get(signed.id) is signed
    store.sign_out(signed)
    assert store.get(signed.id) is None


def test_sessions_expire_when_idle_and_after_their_lifetime() -> None:
    clock = Clock()
    store = SessionStore(clock)
    s = store.sign_in(None, "tok", CALLER)
    clock.now += IDLE_S - 1
    assert store.get(s.id) is s  # activity keeps it alive…
    clock.now += IDLE_S + 1
    assert store.get(s.id) is None  # …idleness ends it
    s = store.sign_in(None, "tok", CALLER)
    for _ in range(int(LIFETIME_S // (IDLE_S - 1)) + 1):
        clock.now += IDLE_S - 1
        store.get(s.id)
    assert store.get(s.id) is None  # never longer than its lifetime
    a = store.anonymous(None)
    clock.now += ANONYMOUS_IDLE_S + 1
    assert store.get(a.id) is None


def test_csrf_token_must_match_exactly() -> None:
    s = SessionStore().anonymous(None)
    assert s.csrf_ok(s.csrf)
    assert not s.csrf_ok(None) and not s.csrf_ok("") and not s.csrf_ok(s.csrf[:-1] + "x")


def test_a_csrf_field_sent_as_a_file_is_refused_not_an_error() -> None:
    """A multipart form may carry `csrf_token` as a file upload: it matches nothing."""
    s = SessionStore().anonymous(None)
    upload = UploadFile(io.BytesIO(s.csrf.encode()), filename="csrf_token")
    assert not s.csrf_ok(upload)


def test_secure_cookies_are_host_bound_httponly_and_strict(tmp_path) -> None:
    # No gateway is needed to serve the sign-in page.
    proc = Process(
        ["console", "--listen", "127.0.0.1:0", "--addr", "127.0.0.1:9", "--secure-cookies"],
        {},
        tmp_path,
        "console",
    )
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{proc.port}/sign-in", timeout=10) as r:
            cookie = r.headers["set-cookie"]
            policy = r.headers["content-security-policy"]
        assert cookie.startswith("__Host-agentmem-console=")
        flags = {f.strip().lower() for f in cookie.split(";")[1:]}
        assert {"httponly", "secure", "samesite=strict", "path=/"} <= flags
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    finally:
        proc.terminate()

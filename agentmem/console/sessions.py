"""Server-side sessions: the browser holds only an opaque, random session id.

The person's credential stays in this process's memory, never in the cookie, so a copied
cookie is useless after sign-out or expiry, and nothing the browser stores can be decoded
into a credential. Every session, signed in or not, carries its own CSRF token (the
synchronizer-token pattern): forms embed it, and a POST without the matching token is
refused. Signing in replaces the session id (no fixation). Sessions live in one process;
a console restart signs everyone out.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

IDLE_S = 30 * 60
LIFETIME_S = 12 * 60 * 60
ANONYMOUS_IDLE_S = 15 * 60
MAX_SESSIONS = 10_000


@dataclass(frozen=True)
class Caller:
    principal_id: str
    kind: str
    scopes: frozenset[str]

    def may(self, scope: str) -> bool:
        return scope in self.scopes


@dataclass
class Session:
    id: str
    csrf: str
    created: float
    seen: float
    token: str = ""
    caller: Caller | None = None
    # The last event sequence this session's live view has seen (resume point).
    event_position: int = 0
    flashes: list[tuple[str, str]] = field(default_factory=list)

    @property
    def signed_in(self) -> bool:
        return bool(self.token) and self.caller is not None

    def may(self, scope: str) -> bool:
        """Whether the signed-in person's credential has `scope` (never when signed out)."""
        return self.caller is not None and self.caller.may(scope)

    def csrf_ok(self, presented: object) -> bool:
        """Whether a form's CSRF field (text, or whatever else the browser sent) matches."""
        return (
            isinstance(presented, str)
            and bool(presented)
            and (hmac.compare_digest(self.csrf, presented))
        )

    def flash(self, kind: str, text: str) -> None:
        self.flashes.append((kind, text))

    def take_flashes(self) -> list[tuple[str, str]]:
        out, self.flashes = self.flashes, []
        return out


class SessionStore:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()

    def _new(self) -> Session:
        now = self._clock()
        s = Session(
            id=secrets.token_urlsafe(32), csrf=secrets.token_urlsafe(32), created=now, seen=now
        )
        self._sessions[s.id] = s
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return s

    def get(self, session_id: str | None) -> Session | None:
        if not session_id:
            return None
        s = self._sessions.get(session_id)
        if s is None:
            return None
        now = self._clock()
        idle = IDLE_S if s.signed_in else ANONYMOUS_IDLE_S
        if now - s.seen > idle or now - s.created > LIFETIME_S:
            del self._sessions[session_id]
            return None
        s.seen = now
        self._sessions.move_to_end(session_id)
        return s

    def anonymous(self, session_id: str | None) -> Session:
        """The visitor's session, or a new one that is not signed in (for the sign-in form)."""
        return self.get(session_id) or self._new()

    def sign_in(self, old: Session | None, token: str, caller: Caller) -> Session:
        if old is not None:
            self._sessions.pop(old.id, None)
        s = self._new()
        s.token, s.caller = token, caller
        return s

    def sign_out(self, session: Session) -> None:
        self._sessions.pop(session.id, None)

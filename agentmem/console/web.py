"""What every page and form shares: the session cookie, CSRF checks, rendering, refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from google.protobuf.message import Message
from markupsafe import Markup
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.templating import Jinja2Templates

from agentmem.console import labels, turns
from agentmem.console.gateway import Gateway
from agentmem.console.gateway_values import GatewayError
from agentmem.console.sessions import Session, SessionStore
from agentmem.contract import validation
from agentmem.contract.errors import AgentmemError, invalid_field
from agentmem.contract.invisible import shown

HERE = Path(__file__).parent


def _shown(value: object) -> object:
    """`shown` for every string (markup stays markup: only invisible characters change)."""
    if isinstance(value, Markup):
        return Markup(shown(str(value)))
    return shown(value) if isinstance(value, str) else value


templates = Jinja2Templates(directory=HERE / "templates")
# Every string a page shows has its invisible characters (bidi controls, zero-width, tags)
# written as U+XXXX, so no stored text or name can read differently from what it is.
templates.env.finalize = _shown
templates.env.globals.update(labels.TEMPLATE_HELPERS)
templates.env.globals.update(folded=turns.shown, where=turns.where)  # long conversations
templates.env.filters["short"] = lambda s: (s[:12] + "…") if s and len(s) > 13 else s


class Console:
    """The console's state: the gateway connection, the sessions, the cookie policy."""

    def __init__(self, gateway: Gateway, secure_cookies: bool) -> None:
        self.gateway = gateway
        self.sessions = SessionStore()
        self.secure = secure_cookies
        # `__Host-` binds the cookie to this host and path /, and requires Secure.
        self.cookie = "__Host-agentmem-console" if secure_cookies else "agentmem-console"

    def session(self, request: Request) -> Session | None:
        return self.sessions.get(request.cookies.get(self.cookie))

    def set_cookie(self, response: Response, session: Session) -> None:
        response.set_cookie(
            self.cookie,
            session.id,
            httponly=True,
            secure=self.secure,
            samesite="strict",
            path="/",
        )

    def clear_cookie(self, response: Response) -> None:
        response.delete_cookie(
            self.cookie, path="/", secure=self.secure, httponly=True, samesite="strict"
        )


def console(request: Request) -> Console:
    found: Console = request.app.state.console
    return found


def signed_in(request: Request) -> Session:
    """The signed-in session of a page request; otherwise off to the sign-in page."""
    session = console(request).session(request)
    if session is None or not session.signed_in:
        raise HTTPException(303, headers={"Location": "/sign-in"})
    return session


async def form(request: Request, *, signed_in_only: bool = True) -> tuple[Session, Any]:
    """A POST's session and form, refused (403) without a session cookie or a matching
    CSRF token, and without an Origin of this site when the browser sends one."""
    origin = request.headers.get("origin")
    if origin is not None and urlsplit(origin).netloc != request.headers.get("host"):
        raise HTTPException(403, "cross-site request refused")
    session = console(request).session(request)
    if session is None or (signed_in_only and not session.signed_in):
        raise HTTPException(403, "sign in first")
    data = await request.form()
    if not session.csrf_ok(data.get("csrf_token")):
        raise HTTPException(403, "the form's CSRF token is missing or stale; reload the page")
    return session, data


def render(
    request: Request, name: str, session: Session | None, status: int = 200, **context: Any
) -> Response:
    return templates.TemplateResponse(
        request,
        name,
        {
            "session": session,
            "caller": session.caller if session else None,
            "csrf": session.csrf if session else "",
            "flashes": session.take_flashes() if session else [],
            **context,
        },
        status_code=status,
    )


def refused(
    request: Request, session: Session, err: GatewayError, back: str, **context: Any
) -> Response:
    """The service said no: say why, with the HTTP status that matches, and a way back."""
    if err.reason == "UNAUTHENTICATED":
        console(request).sessions.sign_out(session)
    return render(
        request,
        "refused.html",
        session,
        status=labels.HTTP_STATUS.get(err.code, 502),
        explanation=labels.refusal(err.reason, err.message, err.metadata),
        reason=err.reason,
        back=back,
        **context,
    )


def done(session: Session, text: str, to: str) -> Response:
    session.flash("ok", text)
    return RedirectResponse(to, status_code=303)


def integer(data: Any, name: str, message: type[Message]) -> int:
    """The form's field `name`, a whole number for the same field of the request `message`:
    0 or more and within what its proto type holds (`validation.integer`); else 400."""
    value = str(data.get(name, ""))
    try:
        if not value.isascii() or not value.isdigit():
            raise invalid_field(name, "must be a whole number")
        return validation.integer(value, message, name)
    except AgentmemError as e:
        rule = e.violations[0].description if e.violations else "is invalid"
        raise HTTPException(400, f"{name} {rule}") from None

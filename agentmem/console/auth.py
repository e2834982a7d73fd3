"""Sign-in with a credential (checked by the gateway itself) and sign-out."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from agentmem.console import labels
from agentmem.console.gateway_values import GatewayError
from agentmem.console.sessions import Caller
from agentmem.console.web import console, form, render

MAX_TOKEN = 4096


async def sign_in_page(request: Request) -> Response:
    c = console(request)
    session = c.session(request)
    if session is not None and session.signed_in:
        return RedirectResponse("/inbox", status_code=303)
    session = c.sessions.anonymous(request.cookies.get(c.cookie))
    response = render(request, "sign_in.html", session)
    c.set_cookie(response, session)
    return response


async def sign_in(request: Request) -> Response:
    c = console(request)
    session, data = await form(request, signed_in_only=False)
    token = str(data.get("api_key", "")).strip()
    error = ""
    if not token or len(token) > MAX_TOKEN or not token.isprintable():
        error = "Paste your credential."
    else:
        try:
            caps = await c.gateway.capabilities(token)
        except GatewayError as e:
            error = (
                "That credential was not accepted."
                if e.reason == "UNAUTHENTICATED"
                else labels.refusal(e.reason, e.message, e.metadata)
            )
    if error:
        return render(request, "sign_in.html", session, status=401, error=error)
    caller = Caller(
        principal_id=caps.caller.principal_id,
        kind=caps.caller.principal_kind,
        scopes=frozenset(caps.caller.scopes),
    )
    fresh = c.sessions.sign_in(session, token, caller)
    response = RedirectResponse("/inbox", status_code=303)
    c.set_cookie(response, fresh)
    return response


async def sign_out(request: Request) -> Response:
    c = console(request)
    session, _ = await form(request)
    c.sessions.sign_out(session)
    response = RedirectResponse("/sign-in", status_code=303)
    c.clear_cookie(response)
    return response

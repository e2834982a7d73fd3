"""The console's ASGI application: routes, security headers, the gateway connection."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentmem.console import auth, facts_page, insight, live, review, sources
from agentmem.console.gateway import Gateway
from agentmem.console.web import HERE, Console

# Scripts, styles and connections from this origin only; no framing; forms post here only.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # so forms carry a real Origin
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]
MAX_BODY = 64 * 1024


class SecurityHeaders:
    """Adds the headers above to every response; pages are never cached; bodies are capped."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length", b"0")
        if length.isdigit() and int(length) > MAX_BODY:
            await PlainTextResponse("request too large", status_code=413)(scope, receive, send)
            return
        static = scope["path"].startswith("/static/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", [])) + HEADERS
                if not static:
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def home(request: Request) -> Response:
    return RedirectResponse("/inbox", status_code=303)


async def favicon(request: Request) -> Response:
    """Browsers ask for /favicon.ico whatever the page names: the console's icon."""
    return RedirectResponse("/static/favicon.svg", status_code=301)


def create_app(gateway: Gateway, *, secure_cookies: bool = False) -> ASGIApp:
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await gateway.open()
        try:
            yield
        finally:
            await gateway.close()

    routes = [
        Route("/", home),
        Route("/favicon.ico", favicon),
        Route("/sign-in", auth.sign_in_page, methods=["GET"]),
        Route("/sign-in", auth.sign_in, methods=["POST"]),
        Route("/sign-out", auth.sign_out, methods=["POST"]),
        Route("/inbox", review.inbox),
        Route("/inbox/items", review.inbox_items),
        Route("/inbox/{source_id}/review", review.review, methods=["POST"]),
        Route("/events", live.events),
        Route("/sources", sources.source_list),
        Route("/sources/{source_id}", sources.source_detail),
        Route("/sources/{source_id}/classification", sources.classify, methods=["POST"]),
        Route("/sources/{source_id}/revoke", sources.revoke, methods=["POST"]),
        Route("/sources/{source_id}/erase", sources.erase_confirm, methods=["GET"]),
        Route("/sources/{source_id}/erase", sources.erase, methods=["POST"]),
        Route("/explain", insight.explain),
        Route("/facts", facts_page.facts),
        Route("/facts/{fact_id}/retract", facts_page.retract, methods=["POST"]),
        Route("/threads", insight.threads),
        Route("/threads/mode", insight.set_thread_mode, methods=["POST"]),
        Route("/activity", insight.activity),
        Route("/activity/verify", insight.verify, methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.console = Console(gateway, secure_cookies)
    return SecurityHeaders(app)

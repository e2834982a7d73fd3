"""Read-only views: why a query retrieves what it does, thread modes, and the audit trail
with its chain check (facts and profile: `facts_page`)."""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from agentmem.client import retrieval_status
from agentmem.console import excerpts, first_lines, labels
from agentmem.console.explained import explained
from agentmem.console.gateway_values import MODES, GatewayError
from agentmem.console.web import console, done, form, integer, refused, render, signed_in
from agentmem.v1 import audit_pb2, thread_mode_pb2

MAX_QUERY = 500


async def explain(request: Request) -> Response:
    session = signed_in(request)
    query = request.query_params.get("q", "").strip()[:MAX_QUERY]
    thread = request.query_params.get("thread", "").strip()
    limit = request.query_params.get("limit", "5")
    limit_n = int(limit) if limit.isdigit() and 0 < int(limit) <= 50 else 5
    result, lines, shown, behind = None, {}, {}, ""
    if query:
        gateway = console(request).gateway
        try:
            caps = await gateway.capabilities(session.token)
            behind = retrieval_status.behind(caps.retrieval)
            result = await gateway.explain(session.token, query, thread, limit_n)
            read = await first_lines.read(gateway, session, (e.source_id for e in result.entries))
        except GatewayError as e:
            return refused(request, session, e, back="/explain")
        lines = first_lines.from_sources(read.values())
        words = excerpts.pattern(query)
        shown = {e.source_id: explained(e, read.get(e.source_id), words) for e in result.entries}
    return render(
        request,
        "explain.html",
        session,
        query=query,
        thread=thread,
        limit=limit_n,
        result=result,
        lines=lines,
        shown=shown,
        reasons=labels.REASONS,
        behind=behind,
    )


async def threads(request: Request) -> Response:
    session = signed_in(request)
    thread = request.query_params.get("thread", "").strip()[:128]
    mode = None
    if thread:
        try:
            mode = await console(request).gateway.thread_mode(session.token, thread)
        except GatewayError as e:
            return refused(request, session, e, back="/threads")
    return render(request, "threads.html", session, thread=thread, mode=mode)


async def set_thread_mode(request: Request) -> Response:
    session, data = await form(request)
    thread = str(data.get("thread_id", ""))
    mode = str(data.get("mode", ""))
    back = "/threads?" + urlencode({"thread": thread})
    if mode not in MODES:
        return render(request, "refused.html", session, 400, explanation="Unknown mode.")
    try:
        await console(request).gateway.set_thread_mode(
            session.token,
            thread,
            integer(data, "expected_revision", thread_mode_pb2.SetThreadMemoryModeRequest),
            mode,
        )
    except GatewayError as e:
        return refused(request, session, e, back=back)
    return done(session, f"Memory is now {mode} for thread {thread}.", back)


async def activity(request: Request) -> Response:
    session = signed_in(request)
    target = request.query_params.get("target", "").strip()[:128]
    if not session.may("memory.admin"):
        return render(request, "activity.html", session, page=None, target=target, verified=None)
    gateway = console(request).gateway
    try:
        page = await gateway.receipts(session.token, target, request.query_params.get("page", ""))
        lines = await first_lines.lookup(gateway, session, _source_targets(page))
    except GatewayError as e:
        return refused(request, session, e, back="/inbox")
    return render(
        request, "activity.html", session, page=page, target=target, verified=None, lines=lines
    )


def _source_targets(page: audit_pb2.ListAuditReceiptsResponse) -> list[str]:
    return [r.target_id for r in page.receipts if r.target_kind == "source"]


async def verify(request: Request) -> Response:
    session, _ = await form(request)
    gateway = console(request).gateway
    try:
        verified = await gateway.verify_chain(session.token)
        page = await gateway.receipts(session.token)
        lines = await first_lines.lookup(gateway, session, _source_targets(page))
    except GatewayError as e:
        return refused(request, session, e, back="/activity")
    return render(
        request, "activity.html", session, page=page, target="", verified=verified, lines=lines
    )

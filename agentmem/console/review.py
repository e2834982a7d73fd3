"""The inbox: memories waiting for review, approve / reject by compare-and-swap."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from agentmem.console.gateway_values import DECISIONS, GatewayError
from agentmem.console.labels import enum, words
from agentmem.console.sessions import Session
from agentmem.console.web import console, done, form, integer, refused, render, signed_in
from agentmem.v1 import review_pb2, sources_pb2


async def _pending(
    request: Request, session: Session, page_token: str
) -> review_pb2.ListMemoriesResponse:
    return await console(request).gateway.memories(session.token, "pending_review", page_token)


async def inbox(request: Request) -> Response:
    session = signed_in(request)
    try:
        page = await _pending(request, session, request.query_params.get("page", ""))
    except GatewayError as e:
        return refused(request, session, e, back="/sources")
    return render(request, "inbox.html", session, page=page)


async def inbox_items(request: Request) -> Response:
    """The list alone, for the live refresh."""
    session = signed_in(request)
    try:
        page = await _pending(request, session, "")
    except GatewayError as e:
        return refused(request, session, e, back="/inbox")
    return render(request, "_inbox_items.html", session, page=page)


async def review(request: Request) -> Response:
    session, data = await form(request)
    source_id = request.path_params["source_id"]
    decision = str(data.get("decision", ""))
    if decision not in DECISIONS:
        return render(request, "refused.html", session, 400, explanation="Unknown decision.")
    expected = integer(data, "expected_revision", review_pb2.ReviewMemoryRequest)
    gateway = console(request).gateway
    try:
        await gateway.review(session.token, source_id, expected, decision)
    except GatewayError as e:
        if e.reason != "REVISION_MISMATCH":
            return refused(request, session, e, back="/inbox")
        # Show what changed between the page the person saw and now.
        try:
            now = await gateway.source(session.token, source_id, content=False)
            current = (
                str(now.revision),
                words(enum(sources_pb2.Status, now.status)),
                words(enum(sources_pb2.Classification, now.classification)),
            )
        except GatewayError:
            current = ("gone", "gone", "gone")
        seen = (
            str(expected),
            words(str(data.get("seen_status", ""))),
            words(str(data.get("seen_classification", ""))),
        )
        fields = ("Revision", "Review status", "Classification")
        return refused(
            request,
            session,
            e,
            back="/inbox",
            changed=list(zip(fields, seen, current, strict=True)),
        )
    verb = "Approved" if decision == "approve" else "Rejected"
    return done(session, f"{verb} memory {source_id}.", "/inbox")

"""Memories and sources: filter, inspect, cold ↔ active, revoke, erase, readback."""

from __future__ import annotations

import asyncio
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from agentmem.console import first_lines, labels, turns
from agentmem.console.gateway_values import CLASSIFICATIONS, GatewayError
from agentmem.console.web import console, done, form, integer, refused, render, signed_in
from agentmem.v1 import foreign_pb2, sources_pb2

FINAL_STATES = ("revoked", "erased")
SERVICE_FILTERS = ("state", "classification", "status", "kind", "thread")
PAGE_FILTERS = ("label", "save_intent_source")  # applied to the page the service returned


def _matches(source: sources_pb2.Source, wanted: dict[str, str]) -> bool:
    if wanted.get("save_intent_source") and (
        source.save_intent_source != wanted["save_intent_source"]
    ):
        return False
    label = wanted.get("label", "")
    if label:
        key, _, value = label.partition("=")
        if key not in source.labels or (value and source.labels[key] != value):
            return False
    return True


def _next(wanted: dict[str, str], token: str) -> str:
    return urlencode({**{k: v for k, v in wanted.items() if v}, "page": token}) if token else ""


async def source_list(request: Request) -> Response:
    session = signed_in(request)
    q = request.query_params
    wanted = {k: q.get(k, "").strip() for k in (*SERVICE_FILTERS, *PAGE_FILTERS)}
    gateway = console(request).gateway
    readable = first_lines.may_read(session)
    try:
        page = await gateway.sources(session.token, wanted, q.get("page", ""))
        details = await asyncio.gather(
            *(gateway.source(session.token, s.source_id, content=readable) for s in page.sources),
            return_exceptions=True,
        )
    except GatewayError as e:
        return refused(request, session, e, back="/inbox")
    rows = [d for d in details if not isinstance(d, BaseException) and _matches(d, wanted)]
    return render(
        request,
        "sources.html",
        session,
        rows=rows,
        lines=first_lines.from_sources(rows),
        wanted=wanted,
        choices=labels.filters(),
        next_page=urlencode(
            {**{k: v for k, v in wanted.items() if v}, "page": page.next_page_token}
        )
        if page.next_page_token
        else "",
    )


async def source_detail(request: Request) -> Response:
    session = signed_in(request)
    source_id = request.path_params["source_id"]
    gateway = console(request).gateway
    readable = session.may("memory.content.read")
    try:
        source = await gateway.source(session.token, source_id, content=readable)
        readback = await gateway.readback(session.token, source_id)
        history = (
            (await gateway.receipts(session.token, target_id=source_id, page_size=100)).receipts
            if session.may("memory.admin")
            else None
        )
    except GatewayError as e:
        return refused(request, session, e, back="/sources")
    # The retrieval state names the terminal phase first (revoked, erased): it says what
    # is final.
    state = labels.enum(sources_pb2.EffectiveRetrievalState, source.effective_retrieval_state)
    return render(
        request,
        "source.html",
        session,
        source=source,
        readback=readback,
        history=history,
        final=state if state in FINAL_STATES else "",
        passage=turns.parse(request.query_params.get("passage", "")),
    )


async def classify(request: Request) -> Response:
    session, data = await form(request)
    source_id = request.path_params["source_id"]
    classification = str(data.get("classification", ""))
    back = f"/sources/{source_id}"
    if classification not in CLASSIFICATIONS:
        return render(request, "refused.html", session, 400, explanation="Unknown classification.")
    try:
        await console(request).gateway.classify(
            session.token,
            source_id,
            integer(data, "expected_revision", sources_pb2.SetSourceClassificationRequest),
            classification,
        )
    except GatewayError as e:
        return refused(request, session, e, back=back)
    return done(session, f"Source {source_id} is now {classification}.", back)


async def revoke(request: Request) -> Response:
    session, data = await form(request)
    source_id = request.path_params["source_id"]
    back = f"/sources/{source_id}"
    try:
        await console(request).gateway.revoke(
            session.token, source_id, str(data.get("reason", ""))[:200]
        )
    except GatewayError as e:
        return refused(request, session, e, back=back)
    return done(session, f"Revoked source {source_id}; its readback is below.", back)


async def erase_confirm(request: Request) -> Response:
    session = signed_in(request)
    source_id = request.path_params["source_id"]
    try:
        source = await console(request).gateway.source(session.token, source_id, content=False)
    except GatewayError as e:
        return refused(request, session, e, back="/sources")
    # One principal's turns only (a partial erasure), when the page names them: those it
    # appended, and the messages it inserted the conversation with if it did.
    by = request.query_params.get("appended_by", "")
    turns = [t for t in source.appended_turns if t.appended_by == by] if by else []
    first = source.appended_turns[0].first_message if source.appended_turns else 0
    inserted = bool(by) and by == source.provenance.principal_id and first > 0
    others = any(t.appended_by != by for t in source.appended_turns)
    return render(
        request,
        "erase.html",
        session,
        source=source,
        appended_by=by if (turns or inserted) and (others or not inserted) else "",
        inserted=inserted,
        turns=len(turns) + inserted,
        messages=sum(t.message_count for t in turns) + (first if inserted else 0),
    )


async def erase(request: Request) -> Response:
    session, data = await form(request)
    source_id = request.path_params["source_id"]
    back = f"/sources/{source_id}"
    if data.get("confirm") != "erase":
        return render(
            request,
            "refused.html",
            session,
            400,
            explanation="Nothing was erased: tick the box to confirm first.",
            back=f"{back}/erase",
        )
    gateway = console(request).gateway
    by = str(data.get("appended_by", ""))
    try:
        erased = await gateway.erase(
            session.token,
            source_id,
            integer(data, "expected_revision", foreign_pb2.EraseSourceRequest),
            str(data.get("reason", ""))[:200],
            appended_by=by,
        )
        if by:  # the conversation stays: its page shows what is left
            text = (
                f"Erased {erased.turns_erased} turns ({erased.messages_erased} messages) "
                f"{by} wrote in source {source_id}; the rest of it stays."
            )
            return done(session, text, back)
        readback = await gateway.readback(session.token, source_id)
    except GatewayError as e:
        return refused(request, session, e, back=back)
    session.flash("ok", f"Erased source {source_id}.")
    return render(request, "erased.html", session, source_id=source_id, readback=readback)

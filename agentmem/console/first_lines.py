"""What a listed memory says, in one line, beside its id: for a person whose key may read
content (`memory.content.read`). Pages that list sources (memories and sources, "Why was
this retrieved?", activity) look them up here; without that scope they show ids only."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from agentmem.console.gateway import Gateway
from agentmem.console.gateway_values import GatewayError
from agentmem.console.sessions import Session
from agentmem.v1 import sources_pb2

MAX_CHARS = 90
MAX_LOOKUPS = 100  # per page: a long explanation shows its first sources' lines


def first_line(source: sources_pb2.Source) -> str:
    """The memory's first non-blank line (a conversation's first message, with its speaker),
    cut to about one line of a table; "" for an erased or a foreign source."""
    if source.content and source.source_kind != sources_pb2.SOURCE_KIND_FOREIGN:
        text = source.content
    elif source.messages:
        m = source.messages[0]
        text = f"{m.name or m.role}: {m.content}"
    else:
        return ""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= MAX_CHARS else line[: MAX_CHARS - 1].rstrip() + "…"


def may_read(session: Session) -> bool:
    return session.caller is not None and session.caller.may("memory.content.read")


async def read(
    gateway: Gateway, session: Session, source_ids: Iterable[str]
) -> dict[str, sources_pb2.Source]:
    """The sources with their content, by id (the first `MAX_LOOKUPS`; sources that cannot
    be read are left out; none without `memory.content.read`)."""
    if not may_read(session):
        return {}
    wanted = list(dict.fromkeys(source_ids))[:MAX_LOOKUPS]
    found = await asyncio.gather(
        *(gateway.source(session.token, sid, content=True) for sid in wanted),
        return_exceptions=True,
    )
    out = {}
    for sid, source in zip(wanted, found, strict=True):
        if isinstance(source, GatewayError):
            continue  # erased in between, or not this tenant's: the id alone is shown
        if isinstance(source, BaseException):
            raise source
        out[sid] = source
    return out


async def lookup(gateway: Gateway, session: Session, source_ids: Iterable[str]) -> dict[str, str]:
    """Each source's first line, by id (sources that cannot be read are left out)."""
    return from_sources((await read(gateway, session, source_ids)).values())


def from_sources(sources: Iterable[sources_pb2.Source]) -> dict[str, str]:
    """First lines of sources already read with their content."""
    return {s.source_id: line for s in sources if (line := first_line(s))}

"""`agentmem import`, one line at a time: a line already present on the server is
recognised, a new one is inserted, and a conversation the server holds fewer turns of gets
the turns it lacks.

A line is known as present in two ways, so that moving memories is never storing them twice:

- by its `source_id`: the server the line was exported from still holds that source (an
  export imported back where it came from, whoever inserted the memory and under whatever
  request id);
- by its insert's request id (`jsonl`): the line was imported before by the same person.

A conversation is the same one when one of the two holds the other's messages first: it
was appended to after the export (already present), or the line has turns the server's copy
lacks (they are appended, `EXTENDED`). A line whose memory was since revoked, erased or
rejected is never brought back (`ENDED`).
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import grpc

from agentmem.cli.jsonl import Line
from agentmem.client import Client
from agentmem.client.errors import (
    ApiError,
    InvalidArgument,
    PermissionDenied,
    ReplayedSourceNotActive,
)
from agentmem.client.methods import enum_name
from agentmem.client.values import message
from agentmem.v1 import sources_pb2

COLD = sources_pb2.CLASSIFICATION_COLD
# What the server says about a line, not about the import as a whole: the line is refused
# and the import may go on. Anything else (the server unreachable, the credential, a quota)
# stops the import.
LINE_CODES = frozenset(
    {
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.OUT_OF_RANGE,
        grpc.StatusCode.ALREADY_EXISTS,
    }
)
LINE_REASONS = frozenset({"MESSAGE_TOO_LARGE"})  # this line is over the transport's limit
ENDED_STATES = frozenset({"revoked", "erased", "rejected"})
STATUSES = ("active", "pending_review", "rejected", "erased")  # every source, listed


class Outcome(enum.Enum):
    IMPORTED = "imported"
    EXTENDED = "extended"  # a conversation there got the turns it lacked
    PRESENT = "already_present"
    ENDED = "not_restored"  # imported before and since revoked, erased or rejected: refused
    REFUSED = "refused"


@dataclass(frozen=True)
class Placed:
    line: int
    outcome: Outcome
    reason: str = ""  # a refusal's reason code, or the state an ended memory is in
    message: str = ""  # for a person; ids and reasons only, never the line's text


class Placer:
    def __init__(self, client: Client, present: Mapping[str, sources_pb2.SourceSummary]) -> None:
        self._client = client
        self._present = present

    def place(self, line: Line) -> Placed:
        """Where `line` goes. Raises `ApiError` for a failure that is not about the line."""
        try:
            if line.source_id in self._present:
                return self._known(line, self._present[line.source_id])
            return self._insert(line)
        except ApiError as e:
            if e.code() in LINE_CODES or e.reason in LINE_REASONS:
                return Placed(line.number, Outcome.REFUSED, e.reason or e.code().name, e.explain())
            raise

    def _known(self, line: Line, summary: sources_pb2.SourceSummary) -> Placed:
        """The server holds the source the line was exported from."""
        state = enum_name(
            sources_pb2.EffectiveRetrievalState,
            "EFFECTIVE_RETRIEVAL_STATE_",
            summary.effective_retrieval_state,
        )
        if state in ENDED_STATES:
            return _ended(line, state)
        return self._compare(line, summary.source_id, cold_again=False)

    def _insert(self, line: Line) -> Placed:
        try:
            r = self._client.insert_memory(**line.insert, timeout=60)
        except ReplayedSourceNotActive as e:
            # Imported before, and since changed: made cold as the line says, or no
            # longer what the line holds (revoked, erased, rejected...), never brought back.
            if e.state == "cold" and line.cold:
                return Placed(line.number, Outcome.PRESENT)
            return _ended(line, e.state)
        except InvalidArgument as e:
            made = e.metadata.get("source_id", "")
            if not (made and line.insert["messages"]):
                raise
            # Its request id made a conversation that differs: grown on either side?
            return self._compare(line, made, cold_again=True)
        if r.deduplicated:
            self._cold_again(line, r.source_id)
            return Placed(line.number, Outcome.PRESENT)
        if line.cold:
            self._client.set_source_classification(
                source_id=r.source_id, classification="cold", expected_revision=r.revision
            )
        return Placed(line.number, Outcome.IMPORTED)

    def _compare(self, line: Line, source_id: str, *, cold_again: bool) -> Placed:
        """The line against the server's source `source_id`: the same memory, the same
        conversation at another length, or another memory (refused). `cold_again`: the
        source was made by an import of this line, which may have stopped before making
        it cold."""
        messages: list[Mapping[str, Any]] = line.insert["messages"]
        source = self._client.get_source(source_id=source_id, include_content=bool(messages))
        if bool(messages) != (source.source_kind == sources_pb2.SOURCE_KIND_CONVERSATION):
            return _differs(line, source_id)
        if not messages:
            same = source.content_sha256 == _sha256(line.insert["content"])
            return Placed(line.number, Outcome.PRESENT) if same else _differs(line, source_id)
        theirs = list(source.messages)
        ours = [message(m, i) for i, m in enumerate(messages)]
        if ours[: len(theirs)] == theirs[: len(ours)]:
            if len(ours) <= len(theirs):  # it grew there after the export, or is the same
                if cold_again:
                    self._cold_again(line, source_id)
                return Placed(line.number, Outcome.PRESENT)
            self._client.append_messages(
                source_id=source_id,
                expected_revision=source.revision,
                messages=ours[len(theirs) :],
                save_intent=line.insert["save_intent"],
                save_intent_source=line.insert["save_intent_source"],
                save_intent_evidence=line.insert["save_intent_evidence"],
                request_id=f"{line.insert['request_id']}-{len(theirs)}",
                timeout=60,
            )
            return Placed(line.number, Outcome.EXTENDED)
        return _differs(line, source_id)

    def _cold_again(self, line: Line, source_id: str) -> None:
        """Imported before: make it cold as the line says, if that did not happen."""
        if not line.cold:
            return
        source = self._client.get_source(source_id=source_id)
        if source.classification != COLD:
            self._client.set_source_classification(
                source_id=source_id, classification="cold", expected_revision=source.revision
            )


def present_sources(client: Client, lines: Iterable[Line]) -> dict[str, sources_pb2.SourceSummary]:
    """The sources of the caller's tenant, by id (metadata only), when a line names one;
    empty when none does or the credential may not list them (memory.read)."""
    if not any(line.source_id for line in lines):
        return {}
    found: dict[str, sources_pb2.SourceSummary] = {}
    try:
        for status in STATUSES:
            token = ""
            while True:
                page = client.list_sources(
                    status=status, page_size=1000, page_token=token, timeout=60
                )
                found.update((s.source_id, s) for s in page.sources)
                token = page.next_page_token
                if not token:
                    break
    except PermissionDenied:
        return {}
    return found


def _ended(line: Line, state: str) -> Placed:
    return Placed(
        line.number,
        Outcome.ENDED,
        state,
        f"imported before and since {state}: not brought back",
    )


def _differs(line: Line, source_id: str) -> Placed:
    return Placed(
        line.number,
        Outcome.REFUSED,
        "DIFFERS",
        f"the server's {source_id}, which this line names or whose request id it carries, "
        "holds other text (import it under a new request_id to store it as well)",
    )


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()

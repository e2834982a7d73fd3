"""Every call the console makes: public gateway RPCs through the typed asyncio client
(`agentmem.AsyncClient`), each with the signed-in person's own token.

One connection is shared by every session; each call acts with its session's credential
(`AsyncClient.with_token`). The console never retries (a person sees a failure at once) and
a live stream ends at its first break (the browser reconnects). Failures become
`GatewayError` (`agentmem.console.gateway_values`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator, Sequence

from agentmem.client import NO_RETRY, AsyncClient
from agentmem.client.errors import ApiError
from agentmem.console.gateway_values import (
    CLASSIFICATIONS,
    DECISIONS,
    KINDS,
    LIVE_KINDS,
    MEMORY_FILTERS,
    MODES,
    STATES,
    STATUSES,
    decode,
)
from agentmem.v1 import (
    audit_pb2,
    capabilities_pb2,
    events_pb2,
    facts_pb2,
    foreign_pb2,
    retrieval_pb2,
    review_pb2,
    sources_pb2,
    thread_mode_pb2,
)

TIMEOUT_S = 15.0


@contextlib.contextmanager
def _decoded() -> Iterator[None]:
    try:
        yield
    except ApiError as e:
        raise decode(e) from None


class Gateway:
    """One channel to the gateway shared by every session; the token goes on each call."""

    def __init__(self, address: str, root_certificates: bytes | None = None) -> None:
        self.address = address
        self._client = AsyncClient(
            address,
            "",
            tls=bool(root_certificates),
            root_certificates=root_certificates,
            experimental=(),
            retry=NO_RETRY,
            timeout=TIMEOUT_S,
        )

    async def open(self) -> None:
        return None  # the connection is made on the first call

    async def close(self) -> None:
        await self._client.close()

    def _as(self, token: str) -> AsyncClient:
        return self._client.with_token(token)

    # Who is signed in
    async def capabilities(self, token: str) -> capabilities_pb2.GetCapabilitiesResponse:
        with _decoded():
            return await self._as(token).get_capabilities()

    # Review
    async def memories(
        self, token: str, status: str, page_token: str = "", page_size: int = 50
    ) -> review_pb2.ListMemoriesResponse:
        with _decoded():
            return await self._as(token).list_memories(
                status_filter=MEMORY_FILTERS[status], page_size=page_size, page_token=page_token
            )

    async def review(
        self, token: str, source_id: str, expected_revision: int, decision: str
    ) -> review_pb2.ReviewMemoryResponse:
        with _decoded():
            return await self._as(token).review_memory(
                source_id=source_id,
                expected_revision=expected_revision,
                decision=DECISIONS[decision],
            )

    # Sources
    async def sources(
        self, token: str, filters: dict[str, str], page_token: str = "", page_size: int = 25
    ) -> sources_pb2.ListSourcesResponse:
        with _decoded():
            return await self._as(token).list_sources(
                page_size=page_size,
                page_token=page_token,
                classification=CLASSIFICATIONS.get(filters.get("classification", "")),
                status=STATUSES.get(filters.get("status", "")),
                effective_state=STATES.get(filters.get("state", "")),
                source_kind=KINDS.get(filters.get("kind", "")),
                thread_id=filters.get("thread", ""),
            )

    async def source(self, token: str, source_id: str, content: bool) -> sources_pb2.Source:
        with _decoded():
            return await self._as(token).get_source(source_id=source_id, include_content=content)

    async def classify(
        self, token: str, source_id: str, expected_revision: int, classification: str
    ) -> sources_pb2.SetSourceClassificationResponse:
        with _decoded():
            return await self._as(token).set_source_classification(
                source_id=source_id,
                expected_revision=expected_revision,
                classification=CLASSIFICATIONS[classification],
            )

    async def revoke(
        self, token: str, source_id: str, reason: str
    ) -> foreign_pb2.RevokeSourceResponse:
        with _decoded():
            return await self._as(token).revoke_source(source_id=source_id, reason=reason)

    async def readback(self, token: str, source_id: str) -> foreign_pb2.ReadbackSourceResponse:
        with _decoded():
            return await self._as(token).readback_source(source_id=source_id)

    async def erase(
        self, token: str, source_id: str, expected_revision: int, reason: str, appended_by: str = ""
    ) -> foreign_pb2.EraseSourceResponse:
        """The whole source, or with `appended_by` that principal's appended turns of it."""
        with _decoded():
            return await self._as(token).erase_source(
                source_id=source_id,
                expected_revision=expected_revision,
                reason=reason,
                appended_by=appended_by,
            )

    # Retrieval, facts
    async def explain(
        self, token: str, query: str, thread_id: str, limit: int
    ) -> retrieval_pb2.ExplainRetrievalResponse:
        with _decoded():
            return await self._as(token).explain_retrieval(
                query=query, thread_id=thread_id, limit=limit
            )

    async def facts(
        self,
        token: str,
        query: str,
        save_intent_source: str,
        *,
        limit: int = 0,
        history: bool = False,
    ) -> facts_pb2.SearchFactsResponse:
        with _decoded():
            return await self._as(token).search_facts(
                query=query,
                save_intent_source=save_intent_source,
                limit=limit,
                include_superseded=history,
            )

    async def retract_fact(
        self, token: str, fact_id: str, reason: str
    ) -> facts_pb2.RetractFactResponse:
        with _decoded():
            return await self._as(token).retract_fact(fact_id=fact_id, reason=reason)

    async def profile(self, token: str, save_intent_source: str) -> facts_pb2.GetProfileResponse:
        with _decoded():
            return await self._as(token).get_profile(save_intent_source=save_intent_source)

    # Thread memory mode
    async def thread_mode(
        self, token: str, thread_id: str
    ) -> thread_mode_pb2.ReadThreadMemoryModeResponse:
        with _decoded():
            return await self._as(token).read_thread_memory_mode(thread_id=thread_id)

    async def set_thread_mode(
        self, token: str, thread_id: str, expected_revision: int, mode: str
    ) -> thread_mode_pb2.SetThreadMemoryModeResponse:
        with _decoded():
            return await self._as(token).set_thread_memory_mode(
                thread_id=thread_id, expected_revision=expected_revision, mode=MODES[mode]
            )

    # Activity
    async def receipts(
        self, token: str, target_id: str = "", page_token: str = "", page_size: int = 50
    ) -> audit_pb2.ListAuditReceiptsResponse:
        """Receipts newest first."""
        with _decoded():
            return await self._as(token).list_audit_receipts(
                target_id=target_id, page_size=page_size, page_token=page_token, newest_first=True
            )

    async def verify_chain(self, token: str) -> audit_pb2.VerifyAuditChainResponse:
        with _decoded():
            return await self._as(token).verify_audit_chain()

    # Live updates
    async def watch(
        self, token: str, after_sequence: int, kinds: Sequence[events_pb2.EventKind] = LIVE_KINDS
    ) -> AsyncIterator[events_pb2.Event]:
        """The tenant's events after `after_sequence`, until the caller stops reading or the
        stream breaks (no resuming: the page's event source reconnects)."""
        events = self._as(token).watch(
            after_sequence=after_sequence, kinds=list(kinds), give_up_after=0.0
        )
        try:
            with _decoded():
                async for event in events:
                    yield event
        finally:
            await events.aclose()  # the stream's call is cancelled now, not when collected

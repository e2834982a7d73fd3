"""Every call the console makes: public gateway RPCs with the signed-in person's own token.

This is the console's only gRPC module (no other module imports a stub), so it can be
swapped for the typed Python client in one place. Failures become `GatewayError`
(`agentmem.console.gateway_values`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

import grpc
from google.protobuf.message import Message

from agentmem.client_base import checked, make_stub
from agentmem.client_values import Reply
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


class Gateway:
    """One channel to the gateway shared by every session; the token goes on each call."""

    def __init__(self, address: str, credentials: grpc.ChannelCredentials | None = None) -> None:
        self.address = address
        self._credentials = credentials
        self._channel: grpc.aio.Channel | None = None
        self._stub: Any = None

    async def open(self) -> None:
        self._channel = (
            grpc.aio.secure_channel(self.address, self._credentials)
            if self._credentials
            else grpc.aio.insecure_channel(self.address)
        )
        self._stub = make_stub(self._channel)

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close(None)

    async def _call(self, method: str, request: Message, reply: type[Reply], token: str) -> Reply:
        try:
            result: object = await getattr(self._stub, method)(
                request, metadata=_auth(token), timeout=TIMEOUT_S
            )
        except grpc.RpcError as e:
            raise decode(e) from None
        return checked(method, result, reply)

    # Who is signed in
    async def capabilities(self, token: str) -> capabilities_pb2.GetCapabilitiesResponse:
        return await self._call(
            "GetCapabilities",
            capabilities_pb2.GetCapabilitiesRequest(),
            capabilities_pb2.GetCapabilitiesResponse,
            token,
        )

    # Review
    async def memories(
        self, token: str, status: str, page_token: str = "", page_size: int = 50
    ) -> review_pb2.ListMemoriesResponse:
        return await self._call(
            "ListMemories",
            review_pb2.ListMemoriesRequest(
                status_filter=MEMORY_FILTERS[status], page_size=page_size, page_token=page_token
            ),
            review_pb2.ListMemoriesResponse,
            token,
        )

    async def review(
        self, token: str, source_id: str, expected_revision: int, decision: str
    ) -> review_pb2.ReviewMemoryResponse:
        return await self._call(
            "ReviewMemory",
            review_pb2.ReviewMemoryRequest(
                source_id=source_id,
                expected_revision=expected_revision,
                decision=DECISIONS[decision],
            ),
            review_pb2.ReviewMemoryResponse,
            token,
        )

    # Sources
    async def sources(
        self, token: str, filters: dict[str, str], page_token: str = "", page_size: int = 25
    ) -> sources_pb2.ListSourcesResponse:
        f = sources_pb2.SourceFilter(
            classification=CLASSIFICATIONS.get(filters.get("classification", "")),
            status=STATUSES.get(filters.get("status", "")),
            effective_state=STATES.get(filters.get("state", "")),
            source_kind=KINDS.get(filters.get("kind", "")),
            thread_id=filters.get("thread", ""),
        )
        return await self._call(
            "ListSources",
            sources_pb2.ListSourcesRequest(page_size=page_size, page_token=page_token, filter=f),
            sources_pb2.ListSourcesResponse,
            token,
        )

    async def source(self, token: str, source_id: str, content: bool) -> sources_pb2.Source:
        return await self._call(
            "GetSource",
            sources_pb2.GetSourceRequest(source_id=source_id, include_content=content),
            sources_pb2.Source,
            token,
        )

    async def classify(
        self, token: str, source_id: str, expected_revision: int, classification: str
    ) -> sources_pb2.SetSourceClassificationResponse:
        return await self._call(
            "SetSourceClassification",
            sources_pb2.SetSourceClassificationRequest(
                source_id=source_id,
                expected_revision=expected_revision,
                classification=CLASSIFICATIONS[classification],
            ),
            sources_pb2.SetSourceClassificationResponse,
            token,
        )

    async def revoke(
        self, token: str, source_id: str, reason: str
    ) -> foreign_pb2.RevokeSourceResponse:
        return await self._call(
            "RevokeSource",
            foreign_pb2.RevokeSourceRequest(source_id=source_id, reason=reason),
            foreign_pb2.RevokeSourceResponse,
            token,
        )

    async def readback(self, token: str, source_id: str) -> foreign_pb2.ReadbackSourceResponse:
        return await self._call(
            "ReadbackSource",
            foreign_pb2.ReadbackSourceRequest(source_id=source_id),
            foreign_pb2.ReadbackSourceResponse,
            token,
        )

    async def erase(
        self, token: str, source_id: str, expected_revision: int, reason: str
    ) -> foreign_pb2.EraseSourceResponse:
        return await self._call(
            "EraseSource",
            foreign_pb2.EraseSourceRequest(
                source_id=source_id, expected_revision=expected_revision, reason=reason
            ),
            foreign_pb2.EraseSourceResponse,
            token,
        )

    # Retrieval, facts
    async def explain(
        self, token: str, query: str, thread_id: str, limit: int
    ) -> retrieval_pb2.ExplainRetrievalResponse:
        return await self._call(
            "ExplainRetrieval",
            retrieval_pb2.ExplainRetrievalRequest(query=query, thread_id=thread_id, limit=limit),
            retrieval_pb2.ExplainRetrievalResponse,
            token,
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
        return await self._call(
            "SearchFacts",
            facts_pb2.SearchFactsRequest(
                query=query,
                save_intent_source=save_intent_source,
                limit=limit,
                include_superseded=history,
            ),
            facts_pb2.SearchFactsResponse,
            token,
        )

    async def retract_fact(
        self, token: str, fact_id: str, reason: str
    ) -> facts_pb2.RetractFactResponse:
        return await self._call(
            "RetractFact",
            facts_pb2.RetractFactRequest(fact_id=fact_id, reason=reason),
            facts_pb2.RetractFactResponse,
            token,
        )

    async def profile(self, token: str, save_intent_source: str) -> facts_pb2.GetProfileResponse:
        return await self._call(
            "GetProfile",
            facts_pb2.GetProfileRequest(save_intent_source=save_intent_source),
            facts_pb2.GetProfileResponse,
            token,
        )

    # Thread memory mode
    async def thread_mode(
        self, token: str, thread_id: str
    ) -> thread_mode_pb2.ReadThreadMemoryModeResponse:
        return await self._call(
            "ReadThreadMemoryMode",
            thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id=thread_id),
            thread_mode_pb2.ReadThreadMemoryModeResponse,
            token,
        )

    async def set_thread_mode(
        self, token: str, thread_id: str, expected_revision: int, mode: str
    ) -> thread_mode_pb2.SetThreadMemoryModeResponse:
        return await self._call(
            "SetThreadMemoryMode",
            thread_mode_pb2.SetThreadMemoryModeRequest(
                thread_id=thread_id, expected_revision=expected_revision, mode=MODES[mode]
            ),
            thread_mode_pb2.SetThreadMemoryModeResponse,
            token,
        )

    # Activity
    async def receipts(
        self, token: str, target_id: str = "", page_token: str = "", page_size: int = 50
    ) -> audit_pb2.ListAuditReceiptsResponse:
        """Receipts newest first."""
        return await self._call(
            "ListAuditReceipts",
            audit_pb2.ListAuditReceiptsRequest(
                target_id=target_id, page_size=page_size, page_token=page_token, newest_first=True
            ),
            audit_pb2.ListAuditReceiptsResponse,
            token,
        )

    async def verify_chain(self, token: str) -> audit_pb2.VerifyAuditChainResponse:
        return await self._call(
            "VerifyAuditChain",
            audit_pb2.VerifyAuditChainRequest(),
            audit_pb2.VerifyAuditChainResponse,
            token,
        )

    # Live updates
    async def watch(
        self, token: str, after_sequence: int, kinds: Sequence[events_pb2.EventKind] = LIVE_KINDS
    ) -> AsyncIterator[events_pb2.Event]:
        """The tenant's events after `after_sequence`, until the caller stops reading."""
        call = self._stub.WatchEvents(
            events_pb2.WatchEventsRequest(after_sequence=after_sequence, kinds=list(kinds)),
            metadata=_auth(token),
        )
        try:
            async for response in call:
                yield response.event
        except grpc.RpcError as e:
            raise decode(e) from None
        finally:
            with contextlib.suppress(Exception):
                call.cancel()


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)

"""The client's methods for memory itself: capabilities, thread memory mode, inserting
memories, listing and reading sources and their classification (retrieval and review are in
`agentmem.client.retrieval` and `agentmem.client.review`).

Each method builds the request message and hands it to `self._call`, which sends it with
the client's credential, deadline and retries and returns the response (an `AsyncClient`'s
generated twin awaits it: `agentmem/client/async_memory.py`). Enum arguments take the short
lower-case name (`"disabled"`, `"cold"`, `"approve"`) or the proto value; anything else
raises `agentmem.InvalidArgument` naming the field before a call is made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from agentmem.client.values import Reply, enum_value, message, timestamp
from agentmem.v1 import (
    capabilities_pb2,
    common_pb2,
    sources_pb2,
    thread_mode_pb2,
)


class Caller:
    """What the methods need from a client: one call of a unary RPC by name, whose response
    is a `reply` message."""

    def _call(
        self, name: str, request: Message, reply: type[Reply], timeout: float | None
    ) -> Reply:
        raise NotImplementedError


class MemoryMethods(Caller):
    def get_capabilities(
        self, *, timeout: float | None = None
    ) -> capabilities_pb2.GetCapabilitiesResponse:
        """What the server offers: capabilities, the insert policy in force, who the
        credential is, and whether retrieval is by words only or by meaning too (and why)."""
        return self._call(
            "GetCapabilities",
            capabilities_pb2.GetCapabilitiesRequest(),
            capabilities_pb2.GetCapabilitiesResponse,
            timeout,
        )

    def read_thread_memory_mode(
        self, *, thread_id: str, timeout: float | None = None
    ) -> thread_mode_pb2.ReadThreadMemoryModeResponse:
        """A thread's memory mode and revision (a thread never set reads as the deployment's
        default at revision 0)."""
        return self._call(
            "ReadThreadMemoryMode",
            thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id=thread_id),
            thread_mode_pb2.ReadThreadMemoryModeResponse,
            timeout,
        )

    def set_thread_memory_mode(
        self,
        *,
        thread_id: str,
        mode: str | int,
        expected_revision: int,
        request_id: str = "",
        timeout: float | None = None,
    ) -> thread_mode_pb2.SetThreadMemoryModeResponse:
        """Enables or disables memory for a thread (`"enabled"` | `"disabled"`), if it is still
        at `expected_revision` (0 for a thread never set); else `RevisionMismatch`.
        `request_id`: correlates the change in the audit trail."""
        return self._call(
            "SetThreadMemoryMode",
            thread_mode_pb2.SetThreadMemoryModeRequest(
                thread_id=thread_id,
                mode=enum_value(common_pb2.MemoryMode, "MEMORY_MODE_", mode, "mode"),
                expected_revision=expected_revision,
                request_id=request_id,
            ),
            thread_mode_pb2.SetThreadMemoryModeResponse,
            timeout,
        )

    def insert_memory(
        self,
        *,
        content: str = "",
        messages: Sequence[sources_pb2.Message | Mapping[str, Any]] = (),
        thread_id: str = "",
        source_kind: str | int | None = None,
        save_intent: str = "",
        save_intent_source: str = "",
        save_intent_evidence: str = "",
        labels: Mapping[str, str] | None = None,
        request_id: str = "",
        validate_only: bool = False,
        observed_at: datetime | str | Timestamp | None = None,
        timeout: float | None = None,
    ) -> sources_pb2.InsertMemoryResponse:
        """Stores a memory: `content`, or a conversation as `messages` ({"role", "content",
        "name"?, "sent_at"?}). `save_intent` is explicit_user_request | user_confirmed |
        client_auto_save. A `request_id` makes the insert safe to retry (it is retried on
        UNAVAILABLE and returns the first result). `validate_only` checks and stores
        nothing. `observed_at`: when it was said or true (default: now)."""
        request = sources_pb2.InsertMemoryRequest(
            content=content,
            messages=[message(m, i) for i, m in enumerate(messages)],
            thread_id=thread_id,
            source_kind=enum_value(
                sources_pb2.SourceKind, "SOURCE_KIND_", source_kind, "source_kind"
            ),
            metadata=sources_pb2.InsertMetadata(
                save_intent=save_intent,
                save_intent_source=save_intent_source,
                save_intent_evidence=save_intent_evidence,
                labels=dict(labels or {}),
            ),
            request_id=request_id,
            validate_only=validate_only,
        )
        if observed_at is not None:
            request.observed_at.CopyFrom(timestamp(observed_at, "observed_at"))
        return self._call("InsertMemory", request, sources_pb2.InsertMemoryResponse, timeout)

    def list_sources(
        self,
        *,
        page_size: int = 0,
        page_token: str = "",
        classification: str | int | None = None,
        status: str | int | None = None,
        source_kind: str | int | None = None,
        thread_id: str = "",
        effective_state: str | int | None = None,
        timeout: float | None = None,
    ) -> sources_pb2.ListSourcesResponse:
        """Sources newest first, metadata only (never text). Without a status or state
        filter, pending, rejected and erased sources are left out. Follow
        `next_page_token` for more."""
        flt = sources_pb2.SourceFilter(
            classification=enum_value(
                sources_pb2.Classification, "CLASSIFICATION_", classification, "classification"
            ),
            status=enum_value(sources_pb2.Status, "STATUS_", status, "status"),
            source_kind=enum_value(
                sources_pb2.SourceKind, "SOURCE_KIND_", source_kind, "source_kind"
            ),
            thread_id=thread_id,
            effective_state=enum_value(
                sources_pb2.EffectiveRetrievalState,
                "EFFECTIVE_RETRIEVAL_STATE_",
                effective_state,
                "effective_state",
            ),
        )
        return self._call(
            "ListSources",
            sources_pb2.ListSourcesRequest(page_size=page_size, page_token=page_token, filter=flt),
            sources_pb2.ListSourcesResponse,
            timeout,
        )

    def get_source(
        self, *, source_id: str, include_content: bool = False, timeout: float | None = None
    ) -> sources_pb2.Source:
        """One source: its states, provenance, labels; its text with `include_content`
        (needs the memory.content.read scope)."""
        return self._call(
            "GetSource",
            sources_pb2.GetSourceRequest(source_id=source_id, include_content=include_content),
            sources_pb2.Source,
            timeout,
        )

    def set_source_classification(
        self,
        *,
        source_id: str,
        classification: str | int,
        expected_revision: int,
        request_id: str = "",
        timeout: float | None = None,
    ) -> sources_pb2.SetSourceClassificationResponse:
        """Marks a source `"active"` or `"cold"` (kept, never retrieved), if it is still at
        `expected_revision`; else `RevisionMismatch` with the current revision.
        `request_id`: correlates the change in the audit trail."""
        return self._call(
            "SetSourceClassification",
            sources_pb2.SetSourceClassificationRequest(
                source_id=source_id,
                classification=enum_value(
                    sources_pb2.Classification, "CLASSIFICATION_", classification, "classification"
                ),
                expected_revision=expected_revision,
                request_id=request_id,
            ),
            sources_pb2.SetSourceClassificationResponse,
            timeout,
        )

"""The client's method for sessions: a stored conversation grows by its next messages as
they happen (`append_messages`). Its asyncio twin is generated into
`agentmem/client/async_sessions.py`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentmem.client.memory import Caller
from agentmem.client.values import message
from agentmem.v1 import sources_pb2


class SessionMethods(Caller):
    def append_messages(
        self,
        *,
        source_id: str,
        expected_revision: int,
        messages: Sequence[sources_pb2.Message | Mapping[str, Any]],
        save_intent: str = "",
        save_intent_source: str = "",
        save_intent_evidence: str = "",
        request_id: str = "",
        timeout: float | None = None,
    ) -> sources_pb2.AppendMessagesResponse:
        """Appends `messages` ({"role", "content", "name"?, "sent_at"?}) to the stored
        conversation `source_id`, if it is still at `expected_revision` (else
        `RevisionMismatch` with the current revision); the reply's `revision` is the next
        append's `expected_revision`. The conversation's limits apply to what it becomes;
        what would hold an insert for review (an untrusted `save_intent`, the insert
        policy, instruction-like text) holds the conversation. Retried on UNAVAILABLE only
        with a `request_id` (a retry then returns the first result)."""
        return self._call(
            "AppendMessages",
            sources_pb2.AppendMessagesRequest(
                source_id=source_id,
                expected_revision=expected_revision,
                messages=[message(m, i) for i, m in enumerate(messages)],
                metadata=sources_pb2.InsertMetadata(
                    save_intent=save_intent,
                    save_intent_source=save_intent_source,
                    save_intent_evidence=save_intent_evidence,
                ),
                request_id=request_id,
            ),
            sources_pb2.AppendMessagesResponse,
            timeout,
        )

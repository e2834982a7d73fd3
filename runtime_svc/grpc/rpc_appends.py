"""The runtime's RPC that appends messages to a stored conversation (`services.appends`)."""

from __future__ import annotations

from agentmem.v1 import sources_pb2
from runtime_svc.domain.sources import SaveIntent
from runtime_svc.grpc import mapping
from runtime_svc.grpc.enums import STATUSES
from runtime_svc.grpc.servicer_base import CALLER, Context, ServicerBase
from runtime_svc.services.appends import AppendCommand


class AppendRpcs(ServicerBase):
    async def AppendMessages(
        self, request: sources_pb2.AppendMessagesRequest, context: Context
    ) -> sources_pb2.AppendMessagesResponse:
        md = request.metadata
        cmd = AppendCommand(
            source_id=request.source_id,
            expected_revision=request.expected_revision,
            messages=tuple(mapping.message(m) for m in request.messages),
            intent=SaveIntent(md.save_intent, md.save_intent_source, md.save_intent_evidence),
            labels=dict(md.labels),
        )
        done = await self._write(self._appends.append, CALLER.get(), cmd)
        return sources_pb2.AppendMessagesResponse(
            source_id=done.source.source_id,
            revision=done.revision,
            status=STATUSES.to_proto(done.source.status),
            receipt=mapping.receipt(done.receipt),
            message_count=done.message_count,
            save_intent_held=bool(done.held_reason),
            save_intent_held_reason=done.held_reason,
            hold_reason=done.hold_reason,
        )

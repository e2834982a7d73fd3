"""The `MessagesAppended` event as its public message."""

from __future__ import annotations

from agentmem.v1 import sources_pb2
from runtime_svc.domain.events import MessagesAppended
from runtime_svc.grpc.enums import STATUSES


def messages_appended(e: MessagesAppended) -> sources_pb2.MessagesAppended:
    return sources_pb2.MessagesAppended(
        source_id=e.source_id,
        revision=e.revision,
        appended=e.appended,
        message_count=e.message_count,
        status=STATUSES.to_proto(e.status),
    )

"""Domain values ↔ protobuf messages, for the runtime's servicer (enums: `grpc.enums`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from agentmem.v1 import (
    common_pb2,
    events_pb2,
    facts_pb2,
    foreign_pb2,
    retrieval_pb2,
    review_pb2,
    sources_pb2,
    thread_mode_pb2,
)
from runtime_svc.assembly import Part
from runtime_svc.domain import events as domain_events
from runtime_svc.domain.audit import Receipt
from runtime_svc.domain.facts import Fact
from runtime_svc.domain.passages import Range
from runtime_svc.domain.sources import Message, Source
from runtime_svc.domain.turns import AppendedTurn
from runtime_svc.grpc.appended_events import messages_appended
from runtime_svc.grpc.enums import (
    CLASSIFICATIONS,
    DECISIONS,
    KINDS,
    MODES,
    POLICIES,
    STATES,
    STATUSES,
    physical_erasure,
)


def timestamp(us: int) -> Timestamp | None:
    if not us:
        return None
    ts = Timestamp()
    ts.FromMicroseconds(us)
    return ts


def time_us(field: str, message: Any) -> int:
    """A request's optional Timestamp field in µs since the epoch (0: not given). The
    gateway checked its range (`validation.timestamp`); the arithmetic never raises."""
    if not message.HasField(field):
        return 0
    ts = getattr(message, field)
    return int(ts.seconds) * 1_000_000 + int(ts.nanos) // 1_000


def passage(r: Range | None, chars: Part | None = None) -> retrieval_pb2.Passage | None:
    if r is None:
        return None
    out = retrieval_pb2.Passage(message_start=r.start, message_end=r.end)
    if chars is not None:
        out.char_start, out.char_end = chars.start, chars.end
    return out


def citation(
    source_id: str, revision: int, r: Range | None, chars: Part | None = None
) -> retrieval_pb2.Citation:
    return retrieval_pb2.Citation(source_id=source_id, revision=revision, passage=passage(r, chars))


def message(m: sources_pb2.Message) -> Message:
    return Message(m.role, m.content, m.name, time_us("sent_at", m))


def receipt(r: Receipt | None) -> common_pb2.AuditReceipt | None:
    return None if r is None else receipt_of(r)


def receipt_of(r: Receipt) -> common_pb2.AuditReceipt:
    return common_pb2.AuditReceipt(
        receipt_id=r.receipt_id,
        sequence=r.sequence,
        at=timestamp(r.at_us),
        action=r.action,
        target_kind=r.target_kind,
        target_id=r.target_id,
        target_revision=r.target_revision,
        principal_id=r.principal_id,
        request_id=r.request_id,
        prev_hash=r.prev_hash,
        hash=r.hash,
        save_intent=r.save_intent,
        save_intent_held=r.save_intent_held,
        turns_erased=r.turns_erased,
        messages_erased=r.messages_erased,
    )


def appended_turns(found: Sequence[AppendedTurn]) -> list[sources_pb2.AppendedTurn]:
    return [
        sources_pb2.AppendedTurn(
            first_message=t.first_message,
            message_count=t.message_count,
            revision=t.revision,
            appended_by=t.principal_id,
            appender_kind=t.principal_kind,
            save_intent=t.trust.save_intent,
            save_intent_held=t.trust.save_intent_held,
            held=t.trust.held,
            hold_reason=t.trust.hold_reason,
        )
        for t in found
    ]


def source(
    s: Source, state: str, *, include_content: bool, turns: Sequence[AppendedTurn] = ()
) -> sources_pb2.Source:
    out = sources_pb2.Source(
        source_id=s.source_id,
        revision=s.revision,
        source_kind=KINDS.to_proto(s.kind.value),
        classification=CLASSIFICATIONS.to_proto(s.classification.value),
        status=STATUSES.to_proto(s.status.value),
        effective_retrieval_state=STATES.to_proto(state),
        created_at=timestamp(s.created_at_us),
        updated_at=timestamp(s.updated_at_us),
        thread_id=s.thread_id,
        provenance=sources_pb2.SourceProvenance(
            principal_id=s.provenance.principal_id,
            principal_kind=s.provenance.principal_kind,
            surface=s.provenance.surface,
            request_id=s.provenance.request_id,
            received_at=timestamp(s.created_at_us),
        ),
        save_intent=s.save_intent.intent,
        save_intent_source=s.save_intent.source,
        save_intent_held=s.save_intent_held,
        hold_reason=s.hold_reason,
        labels=s.labels,
        content_sha256="" if s.erased_at_us else s.body.sha256(),
        observed_at=timestamp(s.observed_at_us),
        appended_turns=appended_turns(turns),
    )
    if include_content:
        out.content = s.body.content
        out.messages.extend(
            sources_pb2.Message(
                role=m.role, content=m.content, name=m.name, sent_at=timestamp(m.sent_at_us)
            )
            for m in s.body.messages
        )
    return out


def event(logged: domain_events.LoggedEvent) -> events_pb2.Event:
    out = events_pb2.Event(
        sequence=logged.sequence, at=timestamp(logged.at_us), event_id=logged.event_id
    )
    e = logged.event
    if isinstance(e, domain_events.ThreadMemoryModeUpdated):
        out.thread_memory_mode_updated.CopyFrom(
            thread_mode_pb2.ThreadMemoryModeUpdated(
                thread_id=e.thread_id,
                previous_mode=MODES.to_proto(e.previous_mode),
                mode=MODES.to_proto(e.mode),
                revision=e.revision,
                effective_at=timestamp(e.effective_at_us),
            )
        )
    elif isinstance(e, domain_events.SourceClassificationUpdated):
        out.source_classification_updated.CopyFrom(
            sources_pb2.SourceClassificationUpdated(
                source_id=e.source_id,
                previous_classification=CLASSIFICATIONS.to_proto(e.previous_classification),
                classification=CLASSIFICATIONS.to_proto(e.classification),
                revision=e.revision,
                effective_at=timestamp(e.effective_at_us),
            )
        )
    elif isinstance(e, domain_events.MemoryReviewed):
        out.memory_reviewed.CopyFrom(
            review_pb2.MemoryReviewed(
                source_id=e.source_id,
                revision=e.revision,
                status=STATUSES.to_proto(e.status),
                decision=DECISIONS.to_proto(e.decision),
                reviewer_id=e.reviewer_id,
            )
        )
    elif isinstance(e, domain_events.InsertPolicyUpdated):
        out.insert_policy_updated.CopyFrom(
            review_pb2.InsertPolicyUpdated(
                previous_insert_policy=POLICIES.to_proto(e.previous_insert_policy),
                insert_policy=POLICIES.to_proto(e.insert_policy),
                revision=e.revision,
            )
        )
    elif isinstance(e, domain_events.ForeignSourceAdmitted):
        out.foreign_source_admitted.CopyFrom(
            foreign_pb2.ForeignSourceAdmitted(source_id=e.source_id, revision=e.revision)
        )
    elif isinstance(e, domain_events.ForeignSourceDenied):
        out.foreign_source_denied.CopyFrom(
            foreign_pb2.ForeignSourceDenied(source_id=e.source_id, reason=e.reason)
        )
    elif isinstance(e, domain_events.SourceRevoked):
        out.source_revoked.CopyFrom(
            foreign_pb2.SourceRevoked(
                source_id=e.source_id,
                revision=e.revision,
                effective_retrieval_state=STATES.to_proto(e.state),
            )
        )
    elif isinstance(e, domain_events.SourceErased):
        out.source_erased.CopyFrom(foreign_pb2.SourceErased(source_id=e.source_id))
    elif isinstance(e, domain_events.SourceErasureFinished):
        out.source_erasure_finished.CopyFrom(
            foreign_pb2.SourceErasureFinished(
                source_id=e.source_id,
                physical_erasure=physical_erasure(e.physical_erasure),
                scrubbed_at=timestamp(e.scrubbed_at_us),
            )
        )
    elif isinstance(e, domain_events.OwnerKeyRegistered):
        out.owner_key_registered.CopyFrom(
            foreign_pb2.OwnerKeyRegistered(owner_id=e.owner_id, key_id=e.key_id)
        )
    elif isinstance(e, domain_events.OwnerKeyRevoked):
        out.owner_key_revoked.CopyFrom(
            foreign_pb2.OwnerKeyRevoked(
                owner_id=e.owner_id, key_id=e.key_id, sources_affected=e.sources_affected
            )
        )
    elif isinstance(e, domain_events.AssentRevoked):
        out.assent_revoked.CopyFrom(
            foreign_pb2.AssentRevoked(
                source_id=e.source_id, assent_id=e.assent_id, revision=e.revision
            )
        )
    elif isinstance(e, domain_events.FactRetracted):
        out.fact_retracted.CopyFrom(
            facts_pb2.FactRetracted(fact_id=e.fact_id, source_id=e.source_id)
        )
    elif isinstance(e, domain_events.MessagesAppended):
        out.messages_appended.CopyFrom(messages_appended(e))
    elif isinstance(e, domain_events.TurnsErased):
        out.turns_erased.CopyFrom(
            sources_pb2.TurnsErased(
                source_id=e.source_id,
                revision=e.revision,
                appended_by=e.appended_by,
                turns_erased=e.turns_erased,
                messages_erased=e.messages_erased,
                message_count=e.message_count,
            )
        )
    elif isinstance(e, domain_events.MemoryInserted):
        out.memory_inserted.CopyFrom(
            sources_pb2.MemoryInserted(
                source_id=e.source_id,
                revision=e.revision,
                source_kind=KINDS.to_proto(e.source_kind),
                status=STATUSES.to_proto(e.status),
            )
        )
    return out


def memory(
    s: Source, *, include_content: bool, turns: Sequence[AppendedTurn] = ()
) -> review_pb2.Memory:
    out = review_pb2.Memory(
        source_id=s.source_id,
        revision=s.revision,
        source_kind=KINDS.to_proto(s.kind.value),
        status=STATUSES.to_proto(s.status.value),
        classification=CLASSIFICATIONS.to_proto(s.classification.value),
        received_at=timestamp(s.created_at_us),
        observed_at=timestamp(s.observed_at_us),
        inserted_by=s.provenance.principal_id,
        save_intent=s.save_intent.intent,
        save_intent_source=s.save_intent.source,
        save_intent_held=s.save_intent_held,
        hold_reason=s.hold_reason,
        save_intent_evidence=s.save_intent.evidence,
        thread_id=s.thread_id,
        labels=s.labels,
        appended_turns=appended_turns(turns),
    )
    if s.review is not None:
        out.reviewed_by = s.review.reviewer_id
        reviewed_at = timestamp(s.review.reviewed_at_us)
        if reviewed_at is not None:
            out.reviewed_at.CopyFrom(reviewed_at)
    if include_content:
        out.content = s.body.content
        out.messages.extend(
            sources_pb2.Message(
                role=m.role, content=m.content, name=m.name, sent_at=timestamp(m.sent_at_us)
            )
            for m in s.body.messages
        )
    return out


def fact(f: Fact) -> facts_pb2.Fact:
    t = f.triple
    return facts_pb2.Fact(
        fact_id=f.fact_id,
        statement=t.statement,
        subject=t.subject,
        predicate=t.predicate,
        object=t.object,
        confidence=f.confidence,
        confidence_reason=f.confidence_reason,
        save_intent=f.save_intent,
        save_intent_source=f.save_intent_source,
        source_id=f.source_id,
        source_revision=f.source_revision,
        passage=passage(f.passage),
        valid_from=timestamp(f.valid_from_us),
        valid_to=timestamp(f.valid_to_us),
        superseded_by=f.superseded_by,
        sentence_start=t.span.start if t.span else 0,
        sentence_end=t.span.end if t.span else 0,
    )

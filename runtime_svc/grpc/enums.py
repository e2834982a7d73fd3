"""Proto enums ↔ the domain's strings, by name: the domain's "pending_review" is
STATUS_PENDING_REVIEW, and so on."""

from __future__ import annotations

from typing import Generic, TypeVar, cast

from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

from agentmem.contract.errors import invalid_field
from agentmem.v1 import (
    common_pb2,
    events_pb2,
    foreign_pb2,
    retrieval_pb2,
    review_pb2,
    sources_pb2,
)

E = TypeVar("E", bound=int)


class EnumMap(Generic[E]):
    """Maps a proto enum (PREFIX_VALUE) to domain strings ("value") and back."""

    def __init__(self, enum: type[E], prefix: str) -> None:
        # At run time a generated enum is an `EnumTypeWrapper` (its stub: a class of ints).
        wrapper = cast(EnumTypeWrapper, enum)
        self._to: dict[str, E] = {
            n.removeprefix(prefix).lower(): cast(E, v)
            for n, v in wrapper.items()
            if not n.endswith("_UNSPECIFIED")
        }
        self._from: dict[int, str] = {v: k for k, v in self._to.items()}

    def to_proto(self, value: str) -> E:
        return self._to[value]

    def from_proto(self, field: str, value: int, *, optional: bool = False) -> str:
        if optional and value == 0:
            return ""
        try:
            return self._from[value]
        except KeyError:
            raise invalid_field(
                field, "must be one of the defined values (not UNSPECIFIED)"
            ) from None


MODES = EnumMap(common_pb2.MemoryMode, "MEMORY_MODE_")
KINDS = EnumMap(sources_pb2.SourceKind, "SOURCE_KIND_")
CLASSIFICATIONS = EnumMap(sources_pb2.Classification, "CLASSIFICATION_")
STATUSES = EnumMap(sources_pb2.Status, "STATUS_")
STATES = EnumMap(sources_pb2.EffectiveRetrievalState, "EFFECTIVE_RETRIEVAL_STATE_")
REASONS = EnumMap(retrieval_pb2.Reason, "REASON_")
PHYSICAL = EnumMap(foreign_pb2.PhysicalErasure, "PHYSICAL_ERASURE_")


def physical_erasure(state: str) -> foreign_pb2.PhysicalErasure:
    """The proto value of `domain.erasure.Physical` (unspecified: not erased)."""
    if state == "not_erased":
        return foreign_pb2.PHYSICAL_ERASURE_UNSPECIFIED
    return PHYSICAL.to_proto(state)


MATCHED_BY = EnumMap(retrieval_pb2.MatchedBy, "MATCHED_BY_")
EVENT_KINDS = EnumMap(events_pb2.EventKind, "EVENT_KIND_")
POLICIES = EnumMap(common_pb2.InsertPolicy, "INSERT_POLICY_")
DECISIONS = EnumMap(review_pb2.Decision, "DECISION_")

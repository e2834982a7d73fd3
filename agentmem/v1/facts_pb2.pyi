import datetime

from agentmem.v1 import common_pb2 as _common_pb2
from agentmem.v1 import retrieval_pb2 as _retrieval_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FactStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FACT_STATUS_UNSPECIFIED: _ClassVar[FactStatus]
    FACT_STATUS_ELIGIBLE: _ClassVar[FactStatus]
    FACT_STATUS_INELIGIBLE: _ClassVar[FactStatus]
    FACT_STATUS_ALL: _ClassVar[FactStatus]
FACT_STATUS_UNSPECIFIED: FactStatus
FACT_STATUS_ELIGIBLE: FactStatus
FACT_STATUS_INELIGIBLE: FactStatus
FACT_STATUS_ALL: FactStatus

class Fact(_message.Message):
    __slots__ = ("fact_id", "statement", "subject", "predicate", "object", "confidence", "confidence_reason", "save_intent", "save_intent_source", "source_id", "source_revision", "passage", "valid_from", "valid_to", "superseded_by", "sentence_start", "sentence_end")
    FACT_ID_FIELD_NUMBER: _ClassVar[int]
    STATEMENT_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    PREDICATE_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_REASON_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_SOURCE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_REVISION_FIELD_NUMBER: _ClassVar[int]
    PASSAGE_FIELD_NUMBER: _ClassVar[int]
    VALID_FROM_FIELD_NUMBER: _ClassVar[int]
    VALID_TO_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_BY_FIELD_NUMBER: _ClassVar[int]
    SENTENCE_START_FIELD_NUMBER: _ClassVar[int]
    SENTENCE_END_FIELD_NUMBER: _ClassVar[int]
    fact_id: str
    statement: str
    subject: str
    predicate: str
    object: str
    confidence: float
    confidence_reason: str
    save_intent: str
    save_intent_source: str
    source_id: str
    source_revision: int
    passage: _retrieval_pb2.Passage
    valid_from: _timestamp_pb2.Timestamp
    valid_to: _timestamp_pb2.Timestamp
    superseded_by: str
    sentence_start: int
    sentence_end: int
    def __init__(self, fact_id: _Optional[str] = ..., statement: _Optional[str] = ..., subject: _Optional[str] = ..., predicate: _Optional[str] = ..., object: _Optional[str] = ..., confidence: _Optional[float] = ..., confidence_reason: _Optional[str] = ..., save_intent: _Optional[str] = ..., save_intent_source: _Optional[str] = ..., source_id: _Optional[str] = ..., source_revision: _Optional[int] = ..., passage: _Optional[_Union[_retrieval_pb2.Passage, _Mapping]] = ..., valid_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., valid_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., superseded_by: _Optional[str] = ..., sentence_start: _Optional[int] = ..., sentence_end: _Optional[int] = ...) -> None: ...

class SearchFactsRequest(_message.Message):
    __slots__ = ("query", "save_intent_source", "save_intent", "status", "limit", "as_of", "include_superseded")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_SOURCE_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    query: str
    save_intent_source: str
    save_intent: str
    status: FactStatus
    limit: int
    as_of: _timestamp_pb2.Timestamp
    include_superseded: bool
    def __init__(self, query: _Optional[str] = ..., save_intent_source: _Optional[str] = ..., save_intent: _Optional[str] = ..., status: _Optional[_Union[FactStatus, str]] = ..., limit: _Optional[int] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., include_superseded: _Optional[bool] = ...) -> None: ...

class SearchFactsResponse(_message.Message):
    __slots__ = ("facts",)
    FACTS_FIELD_NUMBER: _ClassVar[int]
    facts: _containers.RepeatedCompositeFieldContainer[Fact]
    def __init__(self, facts: _Optional[_Iterable[_Union[Fact, _Mapping]]] = ...) -> None: ...

class GetProfileRequest(_message.Message):
    __slots__ = ("save_intent_source", "as_of")
    SAVE_INTENT_SOURCE_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    save_intent_source: str
    as_of: _timestamp_pb2.Timestamp
    def __init__(self, save_intent_source: _Optional[str] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ProfileEntry(_message.Message):
    __slots__ = ("key", "value", "confidence", "fact_ids", "since")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    FACT_IDS_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: str
    confidence: float
    fact_ids: _containers.RepeatedScalarFieldContainer[str]
    since: _timestamp_pb2.Timestamp
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ..., confidence: _Optional[float] = ..., fact_ids: _Optional[_Iterable[str]] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetProfileResponse(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[ProfileEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[ProfileEntry, _Mapping]]] = ...) -> None: ...

class AskRequest(_message.Message):
    __slots__ = ("question", "token_budget", "as_of")
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    question: str
    token_budget: int
    as_of: _timestamp_pb2.Timestamp
    def __init__(self, question: _Optional[str] = ..., token_budget: _Optional[int] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class AskProvenance(_message.Message):
    __slots__ = ("source_id", "source_revision", "fact_id", "save_intent", "passage", "valid_from", "valid_to")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_REVISION_FIELD_NUMBER: _ClassVar[int]
    FACT_ID_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_FIELD_NUMBER: _ClassVar[int]
    PASSAGE_FIELD_NUMBER: _ClassVar[int]
    VALID_FROM_FIELD_NUMBER: _ClassVar[int]
    VALID_TO_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    source_revision: int
    fact_id: str
    save_intent: str
    passage: _retrieval_pb2.Passage
    valid_from: _timestamp_pb2.Timestamp
    valid_to: _timestamp_pb2.Timestamp
    def __init__(self, source_id: _Optional[str] = ..., source_revision: _Optional[int] = ..., fact_id: _Optional[str] = ..., save_intent: _Optional[str] = ..., passage: _Optional[_Union[_retrieval_pb2.Passage, _Mapping]] = ..., valid_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., valid_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class AskResponse(_message.Message):
    __slots__ = ("answer", "answer_basis", "confidence", "citations", "provenance", "changed_at", "related")
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    ANSWER_BASIS_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    CHANGED_AT_FIELD_NUMBER: _ClassVar[int]
    RELATED_FIELD_NUMBER: _ClassVar[int]
    answer: str
    answer_basis: str
    confidence: float
    citations: _containers.RepeatedCompositeFieldContainer[_retrieval_pb2.Citation]
    provenance: _containers.RepeatedCompositeFieldContainer[AskProvenance]
    changed_at: _timestamp_pb2.Timestamp
    related: _containers.RepeatedCompositeFieldContainer[AskProvenance]
    def __init__(self, answer: _Optional[str] = ..., answer_basis: _Optional[str] = ..., confidence: _Optional[float] = ..., citations: _Optional[_Iterable[_Union[_retrieval_pb2.Citation, _Mapping]]] = ..., provenance: _Optional[_Iterable[_Union[AskProvenance, _Mapping]]] = ..., changed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., related: _Optional[_Iterable[_Union[AskProvenance, _Mapping]]] = ...) -> None: ...

class RetractFactRequest(_message.Message):
    __slots__ = ("fact_id", "reason")
    FACT_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    fact_id: str
    reason: str
    def __init__(self, fact_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class RetractFactResponse(_message.Message):
    __slots__ = ("fact_id", "receipt")
    FACT_ID_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_FIELD_NUMBER: _ClassVar[int]
    fact_id: str
    receipt: _common_pb2.AuditReceipt
    def __init__(self, fact_id: _Optional[str] = ..., receipt: _Optional[_Union[_common_pb2.AuditReceipt, _Mapping]] = ...) -> None: ...

class FactRetracted(_message.Message):
    __slots__ = ("fact_id", "source_id")
    FACT_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    fact_id: str
    source_id: str
    def __init__(self, fact_id: _Optional[str] = ..., source_id: _Optional[str] = ...) -> None: ...

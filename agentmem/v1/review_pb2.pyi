import datetime

from agentmem.v1 import common_pb2 as _common_pb2
from agentmem.v1 import sources_pb2 as _sources_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MemoryStatusFilter(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MEMORY_STATUS_FILTER_UNSPECIFIED: _ClassVar[MemoryStatusFilter]
    MEMORY_STATUS_FILTER_ACTIVE: _ClassVar[MemoryStatusFilter]
    MEMORY_STATUS_FILTER_PENDING_REVIEW: _ClassVar[MemoryStatusFilter]
    MEMORY_STATUS_FILTER_REJECTED: _ClassVar[MemoryStatusFilter]
    MEMORY_STATUS_FILTER_ALL: _ClassVar[MemoryStatusFilter]

class Decision(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_UNSPECIFIED: _ClassVar[Decision]
    DECISION_APPROVE: _ClassVar[Decision]
    DECISION_REJECT: _ClassVar[Decision]
MEMORY_STATUS_FILTER_UNSPECIFIED: MemoryStatusFilter
MEMORY_STATUS_FILTER_ACTIVE: MemoryStatusFilter
MEMORY_STATUS_FILTER_PENDING_REVIEW: MemoryStatusFilter
MEMORY_STATUS_FILTER_REJECTED: MemoryStatusFilter
MEMORY_STATUS_FILTER_ALL: MemoryStatusFilter
DECISION_UNSPECIFIED: Decision
DECISION_APPROVE: Decision
DECISION_REJECT: Decision

class ListMemoriesRequest(_message.Message):
    __slots__ = ("status_filter", "page_size", "page_token")
    STATUS_FILTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    status_filter: MemoryStatusFilter
    page_size: int
    page_token: str
    def __init__(self, status_filter: _Optional[_Union[MemoryStatusFilter, str]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class Memory(_message.Message):
    __slots__ = ("source_id", "revision", "source_kind", "status", "classification", "received_at", "inserted_by", "save_intent", "save_intent_source", "reviewed_by", "reviewed_at", "content", "messages", "save_intent_held", "hold_reason", "thread_id", "labels", "save_intent_evidence", "observed_at", "appended_turns")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_KIND_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    RECEIVED_AT_FIELD_NUMBER: _ClassVar[int]
    INSERTED_BY_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_SOURCE_FIELD_NUMBER: _ClassVar[int]
    REVIEWED_BY_FIELD_NUMBER: _ClassVar[int]
    REVIEWED_AT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_HELD_FIELD_NUMBER: _ClassVar[int]
    HOLD_REASON_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    OBSERVED_AT_FIELD_NUMBER: _ClassVar[int]
    APPENDED_TURNS_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    revision: int
    source_kind: _sources_pb2.SourceKind
    status: _sources_pb2.Status
    classification: _sources_pb2.Classification
    received_at: _timestamp_pb2.Timestamp
    inserted_by: str
    save_intent: str
    save_intent_source: str
    reviewed_by: str
    reviewed_at: _timestamp_pb2.Timestamp
    content: str
    messages: _containers.RepeatedCompositeFieldContainer[_sources_pb2.Message]
    save_intent_held: bool
    hold_reason: str
    thread_id: str
    labels: _containers.ScalarMap[str, str]
    save_intent_evidence: str
    observed_at: _timestamp_pb2.Timestamp
    appended_turns: _containers.RepeatedCompositeFieldContainer[_sources_pb2.AppendedTurn]
    def __init__(self, source_id: _Optional[str] = ..., revision: _Optional[int] = ..., source_kind: _Optional[_Union[_sources_pb2.SourceKind, str]] = ..., status: _Optional[_Union[_sources_pb2.Status, str]] = ..., classification: _Optional[_Union[_sources_pb2.Classification, str]] = ..., received_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., inserted_by: _Optional[str] = ..., save_intent: _Optional[str] = ..., save_intent_source: _Optional[str] = ..., reviewed_by: _Optional[str] = ..., reviewed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., content: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[_sources_pb2.Message, _Mapping]]] = ..., save_intent_held: _Optional[bool] = ..., hold_reason: _Optional[str] = ..., thread_id: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., save_intent_evidence: _Optional[str] = ..., observed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., appended_turns: _Optional[_Iterable[_Union[_sources_pb2.AppendedTurn, _Mapping]]] = ...) -> None: ...

class ListMemoriesResponse(_message.Message):
    __slots__ = ("memories", "next_page_token")
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    memories: _containers.RepeatedCompositeFieldContainer[Memory]
    next_page_token: str
    def __init__(self, memories: _Optional[_Iterable[_Union[Memory, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ReviewMemoryRequest(_message.Message):
    __slots__ = ("source_id", "expected_revision", "decision", "note", "request_id")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    expected_revision: int
    decision: Decision
    note: str
    request_id: str
    def __init__(self, source_id: _Optional[str] = ..., expected_revision: _Optional[int] = ..., decision: _Optional[_Union[Decision, str]] = ..., note: _Optional[str] = ..., request_id: _Optional[str] = ...) -> None: ...

class ReviewMemoryResponse(_message.Message):
    __slots__ = ("source_id", "status", "revision", "receipt")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    status: _sources_pb2.Status
    revision: int
    receipt: _common_pb2.AuditReceipt
    def __init__(self, source_id: _Optional[str] = ..., status: _Optional[_Union[_sources_pb2.Status, str]] = ..., revision: _Optional[int] = ..., receipt: _Optional[_Union[_common_pb2.AuditReceipt, _Mapping]] = ...) -> None: ...

class MemoryReviewed(_message.Message):
    __slots__ = ("source_id", "revision", "status", "decision", "reviewer_id")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    REVIEWER_ID_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    revision: int
    status: _sources_pb2.Status
    decision: Decision
    reviewer_id: str
    def __init__(self, source_id: _Optional[str] = ..., revision: _Optional[int] = ..., status: _Optional[_Union[_sources_pb2.Status, str]] = ..., decision: _Optional[_Union[Decision, str]] = ..., reviewer_id: _Optional[str] = ...) -> None: ...

class GetInsertPolicyRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetInsertPolicyResponse(_message.Message):
    __slots__ = ("insert_policy", "overridden", "revision")
    INSERT_POLICY_FIELD_NUMBER: _ClassVar[int]
    OVERRIDDEN_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    insert_policy: _common_pb2.InsertPolicy
    overridden: bool
    revision: int
    def __init__(self, insert_policy: _Optional[_Union[_common_pb2.InsertPolicy, str]] = ..., overridden: _Optional[bool] = ..., revision: _Optional[int] = ...) -> None: ...

class SetInsertPolicyRequest(_message.Message):
    __slots__ = ("expected_revision", "insert_policy", "request_id")
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    INSERT_POLICY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    expected_revision: int
    insert_policy: _common_pb2.InsertPolicy
    request_id: str
    def __init__(self, expected_revision: _Optional[int] = ..., insert_policy: _Optional[_Union[_common_pb2.InsertPolicy, str]] = ..., request_id: _Optional[str] = ...) -> None: ...

class SetInsertPolicyResponse(_message.Message):
    __slots__ = ("previous_insert_policy", "insert_policy", "revision", "receipt")
    PREVIOUS_INSERT_POLICY_FIELD_NUMBER: _ClassVar[int]
    INSERT_POLICY_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_FIELD_NUMBER: _ClassVar[int]
    previous_insert_policy: _common_pb2.InsertPolicy
    insert_policy: _common_pb2.InsertPolicy
    revision: int
    receipt: _common_pb2.AuditReceipt
    def __init__(self, previous_insert_policy: _Optional[_Union[_common_pb2.InsertPolicy, str]] = ..., insert_policy: _Optional[_Union[_common_pb2.InsertPolicy, str]] = ..., revision: _Optional[int] = ..., receipt: _Optional[_Union[_common_pb2.AuditReceipt, _Mapping]] = ...) -> None: ...

class InsertPolicyUpdated(_message.Message):
    __slots__ = ("previous_insert_policy", "insert_policy", "revision")
    PREVIOUS_INSERT_POLICY_FIELD_NUMBER: _ClassVar[int]
    INSERT_POLICY_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    previous_insert_policy: _common_pb2.InsertPolicy
    insert_policy: _common_pb2.InsertPolicy
    revision: int
    def __init__(self, previous_insert_policy: _Optional[_Union[_common_pb2.InsertPolicy, str]] = ..., insert_policy: _Optional[_Union[_common_pb2.InsertPolicy, str]] = ..., revision: _Optional[int] = ...) -> None: ...

import datetime

from agentmem.v1 import common_pb2 as _common_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SourceKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SOURCE_KIND_UNSPECIFIED: _ClassVar[SourceKind]
    SOURCE_KIND_MEMORY: _ClassVar[SourceKind]
    SOURCE_KIND_CONVERSATION: _ClassVar[SourceKind]
    SOURCE_KIND_FOREIGN: _ClassVar[SourceKind]
    SOURCE_KIND_LEGACY: _ClassVar[SourceKind]

class Classification(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLASSIFICATION_UNSPECIFIED: _ClassVar[Classification]
    CLASSIFICATION_ACTIVE: _ClassVar[Classification]
    CLASSIFICATION_COLD: _ClassVar[Classification]

class Status(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STATUS_UNSPECIFIED: _ClassVar[Status]
    STATUS_ACTIVE: _ClassVar[Status]
    STATUS_PENDING_REVIEW: _ClassVar[Status]
    STATUS_REJECTED: _ClassVar[Status]
    STATUS_ERASED: _ClassVar[Status]

class EffectiveRetrievalState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EFFECTIVE_RETRIEVAL_STATE_UNSPECIFIED: _ClassVar[EffectiveRetrievalState]
    EFFECTIVE_RETRIEVAL_STATE_ELIGIBLE: _ClassVar[EffectiveRetrievalState]
    EFFECTIVE_RETRIEVAL_STATE_COLD: _ClassVar[EffectiveRetrievalState]
    EFFECTIVE_RETRIEVAL_STATE_PENDING_REVIEW: _ClassVar[EffectiveRetrievalState]
    EFFECTIVE_RETRIEVAL_STATE_REJECTED: _ClassVar[EffectiveRetrievalState]
    EFFECTIVE_RETRIEVAL_STATE_REVOKED: _ClassVar[EffectiveRetrievalState]
    EFFECTIVE_RETRIEVAL_STATE_ASSENT_INVALID: _ClassVar[EffectiveRetrievalState]
    EFFECTIVE_RETRIEVAL_STATE_ASSENT_EXPIRED: _ClassVar[EffectiveRetrievalState]
    EFFECTIVE_RETRIEVAL_STATE_ERASED: _ClassVar[EffectiveRetrievalState]
SOURCE_KIND_UNSPECIFIED: SourceKind
SOURCE_KIND_MEMORY: SourceKind
SOURCE_KIND_CONVERSATION: SourceKind
SOURCE_KIND_FOREIGN: SourceKind
SOURCE_KIND_LEGACY: SourceKind
CLASSIFICATION_UNSPECIFIED: Classification
CLASSIFICATION_ACTIVE: Classification
CLASSIFICATION_COLD: Classification
STATUS_UNSPECIFIED: Status
STATUS_ACTIVE: Status
STATUS_PENDING_REVIEW: Status
STATUS_REJECTED: Status
STATUS_ERASED: Status
EFFECTIVE_RETRIEVAL_STATE_UNSPECIFIED: EffectiveRetrievalState
EFFECTIVE_RETRIEVAL_STATE_ELIGIBLE: EffectiveRetrievalState
EFFECTIVE_RETRIEVAL_STATE_COLD: EffectiveRetrievalState
EFFECTIVE_RETRIEVAL_STATE_PENDING_REVIEW: EffectiveRetrievalState
EFFECTIVE_RETRIEVAL_STATE_REJECTED: EffectiveRetrievalState
EFFECTIVE_RETRIEVAL_STATE_REVOKED: EffectiveRetrievalState
EFFECTIVE_RETRIEVAL_STATE_ASSENT_INVALID: EffectiveRetrievalState
EFFECTIVE_RETRIEVAL_STATE_ASSENT_EXPIRED: EffectiveRetrievalState
EFFECTIVE_RETRIEVAL_STATE_ERASED: EffectiveRetrievalState

class Message(_message.Message):
    __slots__ = ("role", "content", "name", "sent_at")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SENT_AT_FIELD_NUMBER: _ClassVar[int]
    role: str
    content: str
    name: str
    sent_at: _timestamp_pb2.Timestamp
    def __init__(self, role: _Optional[str] = ..., content: _Optional[str] = ..., name: _Optional[str] = ..., sent_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class InsertMetadata(_message.Message):
    __slots__ = ("save_intent", "save_intent_source", "save_intent_evidence", "labels")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SAVE_INTENT_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_SOURCE_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    save_intent: str
    save_intent_source: str
    save_intent_evidence: str
    labels: _containers.ScalarMap[str, str]
    def __init__(self, save_intent: _Optional[str] = ..., save_intent_source: _Optional[str] = ..., save_intent_evidence: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ...) -> None: ...

class InsertMemoryRequest(_message.Message):
    __slots__ = ("thread_id", "content", "messages", "source_kind", "metadata", "request_id", "validate_only", "observed_at")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SOURCE_KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    OBSERVED_AT_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    content: str
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    source_kind: SourceKind
    metadata: InsertMetadata
    request_id: str
    validate_only: bool
    observed_at: _timestamp_pb2.Timestamp
    def __init__(self, thread_id: _Optional[str] = ..., content: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., source_kind: _Optional[_Union[SourceKind, str]] = ..., metadata: _Optional[_Union[InsertMetadata, _Mapping]] = ..., request_id: _Optional[str] = ..., validate_only: _Optional[bool] = ..., observed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class InsertMemoryResponse(_message.Message):
    __slots__ = ("source_id", "revision", "status", "receipt", "deduplicated", "save_intent_held", "save_intent_held_reason", "hold_reason")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATED_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_HELD_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_HELD_REASON_FIELD_NUMBER: _ClassVar[int]
    HOLD_REASON_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    revision: int
    status: Status
    receipt: _common_pb2.AuditReceipt
    deduplicated: bool
    save_intent_held: bool
    save_intent_held_reason: str
    hold_reason: str
    def __init__(self, source_id: _Optional[str] = ..., revision: _Optional[int] = ..., status: _Optional[_Union[Status, str]] = ..., receipt: _Optional[_Union[_common_pb2.AuditReceipt, _Mapping]] = ..., deduplicated: _Optional[bool] = ..., save_intent_held: _Optional[bool] = ..., save_intent_held_reason: _Optional[str] = ..., hold_reason: _Optional[str] = ...) -> None: ...

class SourceSummary(_message.Message):
    __slots__ = ("source_id", "revision", "source_kind", "classification", "status", "effective_retrieval_state")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_KIND_FIELD_NUMBER: _ClassVar[int]
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_RETRIEVAL_STATE_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    revision: int
    source_kind: SourceKind
    classification: Classification
    status: Status
    effective_retrieval_state: EffectiveRetrievalState
    def __init__(self, source_id: _Optional[str] = ..., revision: _Optional[int] = ..., source_kind: _Optional[_Union[SourceKind, str]] = ..., classification: _Optional[_Union[Classification, str]] = ..., status: _Optional[_Union[Status, str]] = ..., effective_retrieval_state: _Optional[_Union[EffectiveRetrievalState, str]] = ...) -> None: ...

class SourceFilter(_message.Message):
    __slots__ = ("classification", "status", "effective_state", "source_kind", "thread_id")
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_STATE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_KIND_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    classification: Classification
    status: Status
    effective_state: EffectiveRetrievalState
    source_kind: SourceKind
    thread_id: str
    def __init__(self, classification: _Optional[_Union[Classification, str]] = ..., status: _Optional[_Union[Status, str]] = ..., effective_state: _Optional[_Union[EffectiveRetrievalState, str]] = ..., source_kind: _Optional[_Union[SourceKind, str]] = ..., thread_id: _Optional[str] = ...) -> None: ...

class ListSourcesRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "filter")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    filter: SourceFilter
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., filter: _Optional[_Union[SourceFilter, _Mapping]] = ...) -> None: ...

class ListSourcesResponse(_message.Message):
    __slots__ = ("sources", "next_page_token")
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    sources: _containers.RepeatedCompositeFieldContainer[SourceSummary]
    next_page_token: str
    def __init__(self, sources: _Optional[_Iterable[_Union[SourceSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetSourceRequest(_message.Message):
    __slots__ = ("source_id", "include_content")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_CONTENT_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    include_content: bool
    def __init__(self, source_id: _Optional[str] = ..., include_content: _Optional[bool] = ...) -> None: ...

class SourceProvenance(_message.Message):
    __slots__ = ("principal_id", "principal_kind", "surface", "request_id", "received_at")
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_KIND_FIELD_NUMBER: _ClassVar[int]
    SURFACE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    RECEIVED_AT_FIELD_NUMBER: _ClassVar[int]
    principal_id: str
    principal_kind: str
    surface: str
    request_id: str
    received_at: _timestamp_pb2.Timestamp
    def __init__(self, principal_id: _Optional[str] = ..., principal_kind: _Optional[str] = ..., surface: _Optional[str] = ..., request_id: _Optional[str] = ..., received_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class AppendedTurn(_message.Message):
    __slots__ = ("first_message", "message_count", "revision", "appended_by", "appender_kind", "save_intent", "save_intent_held", "held", "hold_reason")
    FIRST_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    APPENDED_BY_FIELD_NUMBER: _ClassVar[int]
    APPENDER_KIND_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_HELD_FIELD_NUMBER: _ClassVar[int]
    HELD_FIELD_NUMBER: _ClassVar[int]
    HOLD_REASON_FIELD_NUMBER: _ClassVar[int]
    first_message: int
    message_count: int
    revision: int
    appended_by: str
    appender_kind: str
    save_intent: str
    save_intent_held: bool
    held: bool
    hold_reason: str
    def __init__(self, first_message: _Optional[int] = ..., message_count: _Optional[int] = ..., revision: _Optional[int] = ..., appended_by: _Optional[str] = ..., appender_kind: _Optional[str] = ..., save_intent: _Optional[str] = ..., save_intent_held: _Optional[bool] = ..., held: _Optional[bool] = ..., hold_reason: _Optional[str] = ...) -> None: ...

class Source(_message.Message):
    __slots__ = ("source_id", "revision", "source_kind", "classification", "status", "effective_retrieval_state", "created_at", "updated_at", "thread_id", "provenance", "save_intent", "save_intent_source", "labels", "content_sha256", "content", "messages", "observed_at", "save_intent_held", "hold_reason", "appended_turns")
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
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_RETRIEVAL_STATE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_SOURCE_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    CONTENT_SHA256_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    OBSERVED_AT_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_HELD_FIELD_NUMBER: _ClassVar[int]
    HOLD_REASON_FIELD_NUMBER: _ClassVar[int]
    APPENDED_TURNS_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    revision: int
    source_kind: SourceKind
    classification: Classification
    status: Status
    effective_retrieval_state: EffectiveRetrievalState
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    thread_id: str
    provenance: SourceProvenance
    save_intent: str
    save_intent_source: str
    labels: _containers.ScalarMap[str, str]
    content_sha256: str
    content: str
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    observed_at: _timestamp_pb2.Timestamp
    save_intent_held: bool
    hold_reason: str
    appended_turns: _containers.RepeatedCompositeFieldContainer[AppendedTurn]
    def __init__(self, source_id: _Optional[str] = ..., revision: _Optional[int] = ..., source_kind: _Optional[_Union[SourceKind, str]] = ..., classification: _Optional[_Union[Classification, str]] = ..., status: _Optional[_Union[Status, str]] = ..., effective_retrieval_state: _Optional[_Union[EffectiveRetrievalState, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., thread_id: _Optional[str] = ..., provenance: _Optional[_Union[SourceProvenance, _Mapping]] = ..., save_intent: _Optional[str] = ..., save_intent_source: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., content_sha256: _Optional[str] = ..., content: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., observed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., save_intent_held: _Optional[bool] = ..., hold_reason: _Optional[str] = ..., appended_turns: _Optional[_Iterable[_Union[AppendedTurn, _Mapping]]] = ...) -> None: ...

class SetSourceClassificationRequest(_message.Message):
    __slots__ = ("source_id", "expected_revision", "classification", "request_id")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    expected_revision: int
    classification: Classification
    request_id: str
    def __init__(self, source_id: _Optional[str] = ..., expected_revision: _Optional[int] = ..., classification: _Optional[_Union[Classification, str]] = ..., request_id: _Optional[str] = ...) -> None: ...

class SetSourceClassificationResponse(_message.Message):
    __slots__ = ("source_id", "previous_classification", "classification", "revision", "effective_at", "receipt")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_AT_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    previous_classification: Classification
    classification: Classification
    revision: int
    effective_at: _timestamp_pb2.Timestamp
    receipt: _common_pb2.AuditReceipt
    def __init__(self, source_id: _Optional[str] = ..., previous_classification: _Optional[_Union[Classification, str]] = ..., classification: _Optional[_Union[Classification, str]] = ..., revision: _Optional[int] = ..., effective_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., receipt: _Optional[_Union[_common_pb2.AuditReceipt, _Mapping]] = ...) -> None: ...

class AppendMessagesRequest(_message.Message):
    __slots__ = ("source_id", "expected_revision", "messages", "metadata", "request_id")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    expected_revision: int
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    metadata: InsertMetadata
    request_id: str
    def __init__(self, source_id: _Optional[str] = ..., expected_revision: _Optional[int] = ..., messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., metadata: _Optional[_Union[InsertMetadata, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class AppendMessagesResponse(_message.Message):
    __slots__ = ("source_id", "revision", "status", "receipt", "message_count", "save_intent_held", "save_intent_held_reason", "hold_reason")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_HELD_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_HELD_REASON_FIELD_NUMBER: _ClassVar[int]
    HOLD_REASON_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    revision: int
    status: Status
    receipt: _common_pb2.AuditReceipt
    message_count: int
    save_intent_held: bool
    save_intent_held_reason: str
    hold_reason: str
    def __init__(self, source_id: _Optional[str] = ..., revision: _Optional[int] = ..., status: _Optional[_Union[Status, str]] = ..., receipt: _Optional[_Union[_common_pb2.AuditReceipt, _Mapping]] = ..., message_count: _Optional[int] = ..., save_intent_held: _Optional[bool] = ..., save_intent_held_reason: _Optional[str] = ..., hold_reason: _Optional[str] = ...) -> None: ...

class MessagesAppended(_message.Message):
    __slots__ = ("source_id", "revision", "appended", "message_count", "status")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    APPENDED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    revision: int
    appended: int
    message_count: int
    status: Status
    def __init__(self, source_id: _Optional[str] = ..., revision: _Optional[int] = ..., appended: _Optional[int] = ..., message_count: _Optional[int] = ..., status: _Optional[_Union[Status, str]] = ...) -> None: ...

class TurnsErased(_message.Message):
    __slots__ = ("source_id", "revision", "appended_by", "turns_erased", "messages_erased", "message_count")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    APPENDED_BY_FIELD_NUMBER: _ClassVar[int]
    TURNS_ERASED_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_ERASED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    revision: int
    appended_by: str
    turns_erased: int
    messages_erased: int
    message_count: int
    def __init__(self, source_id: _Optional[str] = ..., revision: _Optional[int] = ..., appended_by: _Optional[str] = ..., turns_erased: _Optional[int] = ..., messages_erased: _Optional[int] = ..., message_count: _Optional[int] = ...) -> None: ...

class SourceClassificationUpdated(_message.Message):
    __slots__ = ("source_id", "previous_classification", "classification", "revision", "effective_at")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_AT_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    previous_classification: Classification
    classification: Classification
    revision: int
    effective_at: _timestamp_pb2.Timestamp
    def __init__(self, source_id: _Optional[str] = ..., previous_classification: _Optional[_Union[Classification, str]] = ..., classification: _Optional[_Union[Classification, str]] = ..., revision: _Optional[int] = ..., effective_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class MemoryInserted(_message.Message):
    __slots__ = ("source_id", "revision", "source_kind", "status")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_KIND_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    revision: int
    source_kind: SourceKind
    status: Status
    def __init__(self, source_id: _Optional[str] = ..., revision: _Optional[int] = ..., source_kind: _Optional[_Union[SourceKind, str]] = ..., status: _Optional[_Union[Status, str]] = ...) -> None: ...

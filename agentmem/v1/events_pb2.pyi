import datetime

from agentmem.v1 import facts_pb2 as _facts_pb2
from agentmem.v1 import foreign_pb2 as _foreign_pb2
from agentmem.v1 import review_pb2 as _review_pb2
from agentmem.v1 import sources_pb2 as _sources_pb2
from agentmem.v1 import thread_mode_pb2 as _thread_mode_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EventKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVENT_KIND_UNSPECIFIED: _ClassVar[EventKind]
    EVENT_KIND_THREAD_MEMORY_MODE_UPDATED: _ClassVar[EventKind]
    EVENT_KIND_SOURCE_CLASSIFICATION_UPDATED: _ClassVar[EventKind]
    EVENT_KIND_MEMORY_INSERTED: _ClassVar[EventKind]
    EVENT_KIND_MEMORY_REVIEWED: _ClassVar[EventKind]
    EVENT_KIND_INSERT_POLICY_UPDATED: _ClassVar[EventKind]
    EVENT_KIND_FOREIGN_SOURCE_ADMITTED: _ClassVar[EventKind]
    EVENT_KIND_FOREIGN_SOURCE_DENIED: _ClassVar[EventKind]
    EVENT_KIND_SOURCE_REVOKED: _ClassVar[EventKind]
    EVENT_KIND_SOURCE_ERASED: _ClassVar[EventKind]
    EVENT_KIND_OWNER_KEY_REGISTERED: _ClassVar[EventKind]
    EVENT_KIND_OWNER_KEY_REVOKED: _ClassVar[EventKind]
    EVENT_KIND_ASSENT_REVOKED: _ClassVar[EventKind]
    EVENT_KIND_FACT_RETRACTED: _ClassVar[EventKind]
    EVENT_KIND_SOURCE_ERASURE_FINISHED: _ClassVar[EventKind]
    EVENT_KIND_MESSAGES_APPENDED: _ClassVar[EventKind]
    EVENT_KIND_TURNS_ERASED: _ClassVar[EventKind]
EVENT_KIND_UNSPECIFIED: EventKind
EVENT_KIND_THREAD_MEMORY_MODE_UPDATED: EventKind
EVENT_KIND_SOURCE_CLASSIFICATION_UPDATED: EventKind
EVENT_KIND_MEMORY_INSERTED: EventKind
EVENT_KIND_MEMORY_REVIEWED: EventKind
EVENT_KIND_INSERT_POLICY_UPDATED: EventKind
EVENT_KIND_FOREIGN_SOURCE_ADMITTED: EventKind
EVENT_KIND_FOREIGN_SOURCE_DENIED: EventKind
EVENT_KIND_SOURCE_REVOKED: EventKind
EVENT_KIND_SOURCE_ERASED: EventKind
EVENT_KIND_OWNER_KEY_REGISTERED: EventKind
EVENT_KIND_OWNER_KEY_REVOKED: EventKind
EVENT_KIND_ASSENT_REVOKED: EventKind
EVENT_KIND_FACT_RETRACTED: EventKind
EVENT_KIND_SOURCE_ERASURE_FINISHED: EventKind
EVENT_KIND_MESSAGES_APPENDED: EventKind
EVENT_KIND_TURNS_ERASED: EventKind

class Event(_message.Message):
    __slots__ = ("sequence", "at", "event_id", "thread_memory_mode_updated", "source_classification_updated", "memory_inserted", "memory_reviewed", "insert_policy_updated", "foreign_source_admitted", "foreign_source_denied", "source_revoked", "source_erased", "owner_key_registered", "owner_key_revoked", "assent_revoked", "fact_retracted", "source_erasure_finished", "messages_appended", "turns_erased")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_MEMORY_MODE_UPDATED_FIELD_NUMBER: _ClassVar[int]
    SOURCE_CLASSIFICATION_UPDATED_FIELD_NUMBER: _ClassVar[int]
    MEMORY_INSERTED_FIELD_NUMBER: _ClassVar[int]
    MEMORY_REVIEWED_FIELD_NUMBER: _ClassVar[int]
    INSERT_POLICY_UPDATED_FIELD_NUMBER: _ClassVar[int]
    FOREIGN_SOURCE_ADMITTED_FIELD_NUMBER: _ClassVar[int]
    FOREIGN_SOURCE_DENIED_FIELD_NUMBER: _ClassVar[int]
    SOURCE_REVOKED_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ERASED_FIELD_NUMBER: _ClassVar[int]
    OWNER_KEY_REGISTERED_FIELD_NUMBER: _ClassVar[int]
    OWNER_KEY_REVOKED_FIELD_NUMBER: _ClassVar[int]
    ASSENT_REVOKED_FIELD_NUMBER: _ClassVar[int]
    FACT_RETRACTED_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ERASURE_FINISHED_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_APPENDED_FIELD_NUMBER: _ClassVar[int]
    TURNS_ERASED_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    at: _timestamp_pb2.Timestamp
    event_id: str
    thread_memory_mode_updated: _thread_mode_pb2.ThreadMemoryModeUpdated
    source_classification_updated: _sources_pb2.SourceClassificationUpdated
    memory_inserted: _sources_pb2.MemoryInserted
    memory_reviewed: _review_pb2.MemoryReviewed
    insert_policy_updated: _review_pb2.InsertPolicyUpdated
    foreign_source_admitted: _foreign_pb2.ForeignSourceAdmitted
    foreign_source_denied: _foreign_pb2.ForeignSourceDenied
    source_revoked: _foreign_pb2.SourceRevoked
    source_erased: _foreign_pb2.SourceErased
    owner_key_registered: _foreign_pb2.OwnerKeyRegistered
    owner_key_revoked: _foreign_pb2.OwnerKeyRevoked
    assent_revoked: _foreign_pb2.AssentRevoked
    fact_retracted: _facts_pb2.FactRetracted
    source_erasure_finished: _foreign_pb2.SourceErasureFinished
    messages_appended: _sources_pb2.MessagesAppended
    turns_erased: _sources_pb2.TurnsErased
    def __init__(self, sequence: _Optional[int] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., event_id: _Optional[str] = ..., thread_memory_mode_updated: _Optional[_Union[_thread_mode_pb2.ThreadMemoryModeUpdated, _Mapping]] = ..., source_classification_updated: _Optional[_Union[_sources_pb2.SourceClassificationUpdated, _Mapping]] = ..., memory_inserted: _Optional[_Union[_sources_pb2.MemoryInserted, _Mapping]] = ..., memory_reviewed: _Optional[_Union[_review_pb2.MemoryReviewed, _Mapping]] = ..., insert_policy_updated: _Optional[_Union[_review_pb2.InsertPolicyUpdated, _Mapping]] = ..., foreign_source_admitted: _Optional[_Union[_foreign_pb2.ForeignSourceAdmitted, _Mapping]] = ..., foreign_source_denied: _Optional[_Union[_foreign_pb2.ForeignSourceDenied, _Mapping]] = ..., source_revoked: _Optional[_Union[_foreign_pb2.SourceRevoked, _Mapping]] = ..., source_erased: _Optional[_Union[_foreign_pb2.SourceErased, _Mapping]] = ..., owner_key_registered: _Optional[_Union[_foreign_pb2.OwnerKeyRegistered, _Mapping]] = ..., owner_key_revoked: _Optional[_Union[_foreign_pb2.OwnerKeyRevoked, _Mapping]] = ..., assent_revoked: _Optional[_Union[_foreign_pb2.AssentRevoked, _Mapping]] = ..., fact_retracted: _Optional[_Union[_facts_pb2.FactRetracted, _Mapping]] = ..., source_erasure_finished: _Optional[_Union[_foreign_pb2.SourceErasureFinished, _Mapping]] = ..., messages_appended: _Optional[_Union[_sources_pb2.MessagesAppended, _Mapping]] = ..., turns_erased: _Optional[_Union[_sources_pb2.TurnsErased, _Mapping]] = ...) -> None: ...

class WatchEventsRequest(_message.Message):
    __slots__ = ("after_sequence", "kinds")
    AFTER_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    after_sequence: int
    kinds: _containers.RepeatedScalarFieldContainer[EventKind]
    def __init__(self, after_sequence: _Optional[int] = ..., kinds: _Optional[_Iterable[_Union[EventKind, str]]] = ...) -> None: ...

class WatchEventsResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: Event
    def __init__(self, event: _Optional[_Union[Event, _Mapping]] = ...) -> None: ...

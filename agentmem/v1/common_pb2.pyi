import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MemoryMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MEMORY_MODE_UNSPECIFIED: _ClassVar[MemoryMode]
    MEMORY_MODE_ENABLED: _ClassVar[MemoryMode]
    MEMORY_MODE_DISABLED: _ClassVar[MemoryMode]

class InsertPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INSERT_POLICY_UNSPECIFIED: _ClassVar[InsertPolicy]
    INSERT_POLICY_PERMISSIVE: _ClassVar[InsertPolicy]
    INSERT_POLICY_REQUIRE_SAVE_INTENT: _ClassVar[InsertPolicy]
    INSERT_POLICY_REVIEW_PENDING: _ClassVar[InsertPolicy]
MEMORY_MODE_UNSPECIFIED: MemoryMode
MEMORY_MODE_ENABLED: MemoryMode
MEMORY_MODE_DISABLED: MemoryMode
INSERT_POLICY_UNSPECIFIED: InsertPolicy
INSERT_POLICY_PERMISSIVE: InsertPolicy
INSERT_POLICY_REQUIRE_SAVE_INTENT: InsertPolicy
INSERT_POLICY_REVIEW_PENDING: InsertPolicy

class AuditReceipt(_message.Message):
    __slots__ = ("receipt_id", "sequence", "at", "action", "target_kind", "target_id", "target_revision", "principal_id", "request_id", "prev_hash", "hash", "save_intent", "save_intent_held", "turns_erased", "messages_erased")
    RECEIPT_ID_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    TARGET_KIND_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_REVISION_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    PREV_HASH_FIELD_NUMBER: _ClassVar[int]
    HASH_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_HELD_FIELD_NUMBER: _ClassVar[int]
    TURNS_ERASED_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_ERASED_FIELD_NUMBER: _ClassVar[int]
    receipt_id: str
    sequence: int
    at: _timestamp_pb2.Timestamp
    action: str
    target_kind: str
    target_id: str
    target_revision: int
    principal_id: str
    request_id: str
    prev_hash: str
    hash: str
    save_intent: str
    save_intent_held: bool
    turns_erased: int
    messages_erased: int
    def __init__(self, receipt_id: _Optional[str] = ..., sequence: _Optional[int] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., action: _Optional[str] = ..., target_kind: _Optional[str] = ..., target_id: _Optional[str] = ..., target_revision: _Optional[int] = ..., principal_id: _Optional[str] = ..., request_id: _Optional[str] = ..., prev_hash: _Optional[str] = ..., hash: _Optional[str] = ..., save_intent: _Optional[str] = ..., save_intent_held: _Optional[bool] = ..., turns_erased: _Optional[int] = ..., messages_erased: _Optional[int] = ...) -> None: ...

import datetime

from agentmem.v1 import common_pb2 as _common_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ReadThreadMemoryModeRequest(_message.Message):
    __slots__ = ("thread_id",)
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    def __init__(self, thread_id: _Optional[str] = ...) -> None: ...

class ReadThreadMemoryModeResponse(_message.Message):
    __slots__ = ("thread_id", "mode", "revision", "effective_at")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_AT_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    mode: _common_pb2.MemoryMode
    revision: int
    effective_at: _timestamp_pb2.Timestamp
    def __init__(self, thread_id: _Optional[str] = ..., mode: _Optional[_Union[_common_pb2.MemoryMode, str]] = ..., revision: _Optional[int] = ..., effective_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SetThreadMemoryModeRequest(_message.Message):
    __slots__ = ("thread_id", "expected_revision", "mode", "request_id")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    expected_revision: int
    mode: _common_pb2.MemoryMode
    request_id: str
    def __init__(self, thread_id: _Optional[str] = ..., expected_revision: _Optional[int] = ..., mode: _Optional[_Union[_common_pb2.MemoryMode, str]] = ..., request_id: _Optional[str] = ...) -> None: ...

class SetThreadMemoryModeResponse(_message.Message):
    __slots__ = ("thread_id", "previous_mode", "mode", "revision", "effective_at", "receipt")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_MODE_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_AT_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    previous_mode: _common_pb2.MemoryMode
    mode: _common_pb2.MemoryMode
    revision: int
    effective_at: _timestamp_pb2.Timestamp
    receipt: _common_pb2.AuditReceipt
    def __init__(self, thread_id: _Optional[str] = ..., previous_mode: _Optional[_Union[_common_pb2.MemoryMode, str]] = ..., mode: _Optional[_Union[_common_pb2.MemoryMode, str]] = ..., revision: _Optional[int] = ..., effective_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., receipt: _Optional[_Union[_common_pb2.AuditReceipt, _Mapping]] = ...) -> None: ...

class ThreadMemoryModeUpdated(_message.Message):
    __slots__ = ("thread_id", "previous_mode", "mode", "revision", "effective_at")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_MODE_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_AT_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    previous_mode: _common_pb2.MemoryMode
    mode: _common_pb2.MemoryMode
    revision: int
    effective_at: _timestamp_pb2.Timestamp
    def __init__(self, thread_id: _Optional[str] = ..., previous_mode: _Optional[_Union[_common_pb2.MemoryMode, str]] = ..., mode: _Optional[_Union[_common_pb2.MemoryMode, str]] = ..., revision: _Optional[int] = ..., effective_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

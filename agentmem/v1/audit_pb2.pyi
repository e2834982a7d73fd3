from agentmem.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ListAuditReceiptsRequest(_message.Message):
    __slots__ = ("target_id", "page_size", "page_token", "newest_first")
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    NEWEST_FIRST_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    page_size: int
    page_token: str
    newest_first: bool
    def __init__(self, target_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., newest_first: _Optional[bool] = ...) -> None: ...

class ListAuditReceiptsResponse(_message.Message):
    __slots__ = ("receipts", "next_page_token")
    RECEIPTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    receipts: _containers.RepeatedCompositeFieldContainer[_common_pb2.AuditReceipt]
    next_page_token: str
    def __init__(self, receipts: _Optional[_Iterable[_Union[_common_pb2.AuditReceipt, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class VerifyAuditChainRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class VerifyAuditChainResponse(_message.Message):
    __slots__ = ("ok", "length", "head_hash", "first_invalid_sequence")
    OK_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    HEAD_HASH_FIELD_NUMBER: _ClassVar[int]
    FIRST_INVALID_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    ok: bool
    length: int
    head_hash: str
    first_invalid_sequence: int
    def __init__(self, ok: _Optional[bool] = ..., length: _Optional[int] = ..., head_hash: _Optional[str] = ..., first_invalid_sequence: _Optional[int] = ...) -> None: ...

import datetime

from agentmem.v1 import common_pb2 as _common_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetCapabilitiesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Capability(_message.Message):
    __slots__ = ("name", "enabled", "experimental", "opted_in")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    EXPERIMENTAL_FIELD_NUMBER: _ClassVar[int]
    OPTED_IN_FIELD_NUMBER: _ClassVar[int]
    name: str
    enabled: bool
    experimental: bool
    opted_in: bool
    def __init__(self, name: _Optional[str] = ..., enabled: _Optional[bool] = ..., experimental: _Optional[bool] = ..., opted_in: _Optional[bool] = ...) -> None: ...

class GetCapabilitiesResponse(_message.Message):
    __slots__ = ("api_version", "capabilities", "insert_policy", "experimental_opt_in", "caller", "retrieval")
    API_VERSION_FIELD_NUMBER: _ClassVar[int]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    INSERT_POLICY_FIELD_NUMBER: _ClassVar[int]
    EXPERIMENTAL_OPT_IN_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    RETRIEVAL_FIELD_NUMBER: _ClassVar[int]
    api_version: str
    capabilities: _containers.RepeatedCompositeFieldContainer[Capability]
    insert_policy: _common_pb2.InsertPolicy
    experimental_opt_in: str
    caller: Caller
    retrieval: RetrievalStatus
    def __init__(self, api_version: _Optional[str] = ..., capabilities: _Optional[_Iterable[_Union[Capability, _Mapping]]] = ..., insert_policy: _Optional[_Union[_common_pb2.InsertPolicy, str]] = ..., experimental_opt_in: _Optional[str] = ..., caller: _Optional[_Union[Caller, _Mapping]] = ..., retrieval: _Optional[_Union[RetrievalStatus, _Mapping]] = ...) -> None: ...

class Caller(_message.Message):
    __slots__ = ("principal_id", "principal_kind", "scopes", "trusted_save_intents")
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_KIND_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    TRUSTED_SAVE_INTENTS_FIELD_NUMBER: _ClassVar[int]
    principal_id: str
    principal_kind: str
    scopes: _containers.RepeatedScalarFieldContainer[str]
    trusted_save_intents: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, principal_id: _Optional[str] = ..., principal_kind: _Optional[str] = ..., scopes: _Optional[_Iterable[str]] = ..., trusted_save_intents: _Optional[_Iterable[str]] = ...) -> None: ...

class RetrievalStatus(_message.Message):
    __slots__ = ("mode", "lexical_only_reason", "embedding_model", "embedding_dimension", "embeddings_pending", "prompt_tokenizer", "embeddings_lag_seconds", "embeddings_set_aside", "embeddings_last_error", "embeddings_last_error_at")
    MODE_FIELD_NUMBER: _ClassVar[int]
    LEXICAL_ONLY_REASON_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_DIMENSION_FIELD_NUMBER: _ClassVar[int]
    EMBEDDINGS_PENDING_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TOKENIZER_FIELD_NUMBER: _ClassVar[int]
    EMBEDDINGS_LAG_SECONDS_FIELD_NUMBER: _ClassVar[int]
    EMBEDDINGS_SET_ASIDE_FIELD_NUMBER: _ClassVar[int]
    EMBEDDINGS_LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    EMBEDDINGS_LAST_ERROR_AT_FIELD_NUMBER: _ClassVar[int]
    mode: str
    lexical_only_reason: str
    embedding_model: str
    embedding_dimension: int
    embeddings_pending: int
    prompt_tokenizer: str
    embeddings_lag_seconds: float
    embeddings_set_aside: int
    embeddings_last_error: str
    embeddings_last_error_at: _timestamp_pb2.Timestamp
    def __init__(self, mode: _Optional[str] = ..., lexical_only_reason: _Optional[str] = ..., embedding_model: _Optional[str] = ..., embedding_dimension: _Optional[int] = ..., embeddings_pending: _Optional[int] = ..., prompt_tokenizer: _Optional[str] = ..., embeddings_lag_seconds: _Optional[float] = ..., embeddings_set_aside: _Optional[int] = ..., embeddings_last_error: _Optional[str] = ..., embeddings_last_error_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

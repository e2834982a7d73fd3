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

class PhysicalErasure(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHYSICAL_ERASURE_UNSPECIFIED: _ClassVar[PhysicalErasure]
    PHYSICAL_ERASURE_PENDING: _ClassVar[PhysicalErasure]
    PHYSICAL_ERASURE_COMPLETE: _ClassVar[PhysicalErasure]
    PHYSICAL_ERASURE_RESIDUE_POSSIBLE: _ClassVar[PhysicalErasure]
PHYSICAL_ERASURE_UNSPECIFIED: PhysicalErasure
PHYSICAL_ERASURE_PENDING: PhysicalErasure
PHYSICAL_ERASURE_COMPLETE: PhysicalErasure
PHYSICAL_ERASURE_RESIDUE_POSSIBLE: PhysicalErasure

class RegisterOwnerKeyRequest(_message.Message):
    __slots__ = ("owner_id", "key_id", "public_key_pem")
    OWNER_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_KEY_PEM_FIELD_NUMBER: _ClassVar[int]
    owner_id: str
    key_id: str
    public_key_pem: str
    def __init__(self, owner_id: _Optional[str] = ..., key_id: _Optional[str] = ..., public_key_pem: _Optional[str] = ...) -> None: ...

class RegisterOwnerKeyResponse(_message.Message):
    __slots__ = ("owner_id", "key_id", "receipt")
    OWNER_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_FIELD_NUMBER: _ClassVar[int]
    owner_id: str
    key_id: str
    receipt: _common_pb2.AuditReceipt
    def __init__(self, owner_id: _Optional[str] = ..., key_id: _Optional[str] = ..., receipt: _Optional[_Union[_common_pb2.AuditReceipt, _Mapping]] = ...) -> None: ...

class RevokeOwnerKeyRequest(_message.Message):
    __slots__ = ("owner_id", "key_id")
    OWNER_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    owner_id: str
    key_id: str
    def __init__(self, owner_id: _Optional[str] = ..., key_id: _Optional[str] = ...) -> None: ...

class RevokeOwnerKeyResponse(_message.Message):
    __slots__ = ("owner_id", "key_id", "sources_affected", "receipt")
    OWNER_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCES_AFFECTED_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_FIELD_NUMBER: _ClassVar[int]
    owner_id: str
    key_id: str
    sources_affected: int
    receipt: _common_pb2.AuditReceipt
    def __init__(self, owner_id: _Optional[str] = ..., key_id: _Optional[str] = ..., sources_affected: _Optional[int] = ..., receipt: _Optional[_Union[_common_pb2.AuditReceipt, _Mapping]] = ...) -> None: ...

class ThinPointer(_message.Message):
    __slots__ = ("uri", "content_digest", "media_type", "title", "descriptor")
    URI_FIELD_NUMBER: _ClassVar[int]
    CONTENT_DIGEST_FIELD_NUMBER: _ClassVar[int]
    MEDIA_TYPE_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTOR_FIELD_NUMBER: _ClassVar[int]
    uri: str
    content_digest: str
    media_type: str
    title: str
    descriptor: str
    def __init__(self, uri: _Optional[str] = ..., content_digest: _Optional[str] = ..., media_type: _Optional[str] = ..., title: _Optional[str] = ..., descriptor: _Optional[str] = ...) -> None: ...

class PrepareForeignSourceRequest(_message.Message):
    __slots__ = ("canonical_owner", "pointer")
    CANONICAL_OWNER_FIELD_NUMBER: _ClassVar[int]
    POINTER_FIELD_NUMBER: _ClassVar[int]
    canonical_owner: str
    pointer: ThinPointer
    def __init__(self, canonical_owner: _Optional[str] = ..., pointer: _Optional[_Union[ThinPointer, _Mapping]] = ...) -> None: ...

class PrepareForeignSourceResponse(_message.Message):
    __slots__ = ("source_id", "audience", "content_digest")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    AUDIENCE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_DIGEST_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    audience: str
    content_digest: str
    def __init__(self, source_id: _Optional[str] = ..., audience: _Optional[str] = ..., content_digest: _Optional[str] = ...) -> None: ...

class AdmitForeignSourceRequest(_message.Message):
    __slots__ = ("canonical_owner", "pointer", "assent", "body")
    CANONICAL_OWNER_FIELD_NUMBER: _ClassVar[int]
    POINTER_FIELD_NUMBER: _ClassVar[int]
    ASSENT_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    canonical_owner: str
    pointer: ThinPointer
    assent: str
    body: str
    def __init__(self, canonical_owner: _Optional[str] = ..., pointer: _Optional[_Union[ThinPointer, _Mapping]] = ..., assent: _Optional[str] = ..., body: _Optional[str] = ...) -> None: ...

class AdmitForeignSourceResponse(_message.Message):
    __slots__ = ("source_id", "revision", "effective_retrieval_state", "receipt")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_RETRIEVAL_STATE_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    revision: int
    effective_retrieval_state: _sources_pb2.EffectiveRetrievalState
    receipt: _common_pb2.AuditReceipt
    def __init__(self, source_id: _Optional[str] = ..., revision: _Optional[int] = ..., effective_retrieval_state: _Optional[_Union[_sources_pb2.EffectiveRetrievalState, str]] = ..., receipt: _Optional[_Union[_common_pb2.AuditReceipt, _Mapping]] = ...) -> None: ...

class RevokeSourceRequest(_message.Message):
    __slots__ = ("source_id", "reason")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    reason: str
    def __init__(self, source_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class RevokeSourceResponse(_message.Message):
    __slots__ = ("source_id", "effective_retrieval_state", "receipt")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_RETRIEVAL_STATE_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    effective_retrieval_state: _sources_pb2.EffectiveRetrievalState
    receipt: _common_pb2.AuditReceipt
    def __init__(self, source_id: _Optional[str] = ..., effective_retrieval_state: _Optional[_Union[_sources_pb2.EffectiveRetrievalState, str]] = ..., receipt: _Optional[_Union[_common_pb2.AuditReceipt, _Mapping]] = ...) -> None: ...

class RevokeAssentRequest(_message.Message):
    __slots__ = ("source_id", "assent_id", "revocation")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    ASSENT_ID_FIELD_NUMBER: _ClassVar[int]
    REVOCATION_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    assent_id: str
    revocation: str
    def __init__(self, source_id: _Optional[str] = ..., assent_id: _Optional[str] = ..., revocation: _Optional[str] = ...) -> None: ...

class RevokeAssentResponse(_message.Message):
    __slots__ = ("source_id", "effective_retrieval_state", "receipt")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_RETRIEVAL_STATE_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    effective_retrieval_state: _sources_pb2.EffectiveRetrievalState
    receipt: _common_pb2.AuditReceipt
    def __init__(self, source_id: _Optional[str] = ..., effective_retrieval_state: _Optional[_Union[_sources_pb2.EffectiveRetrievalState, str]] = ..., receipt: _Optional[_Union[_common_pb2.AuditReceipt, _Mapping]] = ...) -> None: ...

class ReadbackSourceRequest(_message.Message):
    __slots__ = ("source_id",)
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    def __init__(self, source_id: _Optional[str] = ...) -> None: ...

class Derivative(_message.Message):
    __slots__ = ("kind", "derivative_id", "eligible", "state")
    KIND_FIELD_NUMBER: _ClassVar[int]
    DERIVATIVE_ID_FIELD_NUMBER: _ClassVar[int]
    ELIGIBLE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    kind: str
    derivative_id: str
    eligible: bool
    state: str
    def __init__(self, kind: _Optional[str] = ..., derivative_id: _Optional[str] = ..., eligible: _Optional[bool] = ..., state: _Optional[str] = ...) -> None: ...

class ReadbackSourceResponse(_message.Message):
    __slots__ = ("source_id", "clean", "derivatives", "effective_retrieval_state", "retrievable_by", "physical_erasure", "residue", "scrubbed_at")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    CLEAN_FIELD_NUMBER: _ClassVar[int]
    DERIVATIVES_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_RETRIEVAL_STATE_FIELD_NUMBER: _ClassVar[int]
    RETRIEVABLE_BY_FIELD_NUMBER: _ClassVar[int]
    PHYSICAL_ERASURE_FIELD_NUMBER: _ClassVar[int]
    RESIDUE_FIELD_NUMBER: _ClassVar[int]
    SCRUBBED_AT_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    clean: bool
    derivatives: _containers.RepeatedCompositeFieldContainer[Derivative]
    effective_retrieval_state: _sources_pb2.EffectiveRetrievalState
    retrievable_by: _containers.RepeatedScalarFieldContainer[str]
    physical_erasure: PhysicalErasure
    residue: _containers.RepeatedScalarFieldContainer[str]
    scrubbed_at: _timestamp_pb2.Timestamp
    def __init__(self, source_id: _Optional[str] = ..., clean: _Optional[bool] = ..., derivatives: _Optional[_Iterable[_Union[Derivative, _Mapping]]] = ..., effective_retrieval_state: _Optional[_Union[_sources_pb2.EffectiveRetrievalState, str]] = ..., retrievable_by: _Optional[_Iterable[str]] = ..., physical_erasure: _Optional[_Union[PhysicalErasure, str]] = ..., residue: _Optional[_Iterable[str]] = ..., scrubbed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class EraseSourceRequest(_message.Message):
    __slots__ = ("source_id", "expected_revision", "reason", "appended_by")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_REVISION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    APPENDED_BY_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    expected_revision: int
    reason: str
    appended_by: str
    def __init__(self, source_id: _Optional[str] = ..., expected_revision: _Optional[int] = ..., reason: _Optional[str] = ..., appended_by: _Optional[str] = ...) -> None: ...

class EraseSourceResponse(_message.Message):
    __slots__ = ("source_id", "receipt", "revision", "turns_erased", "messages_erased", "message_count")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    TURNS_ERASED_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_ERASED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    receipt: _common_pb2.AuditReceipt
    revision: int
    turns_erased: int
    messages_erased: int
    message_count: int
    def __init__(self, source_id: _Optional[str] = ..., receipt: _Optional[_Union[_common_pb2.AuditReceipt, _Mapping]] = ..., revision: _Optional[int] = ..., turns_erased: _Optional[int] = ..., messages_erased: _Optional[int] = ..., message_count: _Optional[int] = ...) -> None: ...

class ForeignSourceAdmitted(_message.Message):
    __slots__ = ("source_id", "revision")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    revision: int
    def __init__(self, source_id: _Optional[str] = ..., revision: _Optional[int] = ...) -> None: ...

class ForeignSourceDenied(_message.Message):
    __slots__ = ("source_id", "reason")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    reason: str
    def __init__(self, source_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class SourceRevoked(_message.Message):
    __slots__ = ("source_id", "revision", "effective_retrieval_state")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_RETRIEVAL_STATE_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    revision: int
    effective_retrieval_state: _sources_pb2.EffectiveRetrievalState
    def __init__(self, source_id: _Optional[str] = ..., revision: _Optional[int] = ..., effective_retrieval_state: _Optional[_Union[_sources_pb2.EffectiveRetrievalState, str]] = ...) -> None: ...

class SourceErased(_message.Message):
    __slots__ = ("source_id",)
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    def __init__(self, source_id: _Optional[str] = ...) -> None: ...

class SourceErasureFinished(_message.Message):
    __slots__ = ("source_id", "physical_erasure", "scrubbed_at")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    PHYSICAL_ERASURE_FIELD_NUMBER: _ClassVar[int]
    SCRUBBED_AT_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    physical_erasure: PhysicalErasure
    scrubbed_at: _timestamp_pb2.Timestamp
    def __init__(self, source_id: _Optional[str] = ..., physical_erasure: _Optional[_Union[PhysicalErasure, str]] = ..., scrubbed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class OwnerKeyRegistered(_message.Message):
    __slots__ = ("owner_id", "key_id")
    OWNER_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    owner_id: str
    key_id: str
    def __init__(self, owner_id: _Optional[str] = ..., key_id: _Optional[str] = ...) -> None: ...

class OwnerKeyRevoked(_message.Message):
    __slots__ = ("owner_id", "key_id", "sources_affected")
    OWNER_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCES_AFFECTED_FIELD_NUMBER: _ClassVar[int]
    owner_id: str
    key_id: str
    sources_affected: int
    def __init__(self, owner_id: _Optional[str] = ..., key_id: _Optional[str] = ..., sources_affected: _Optional[int] = ...) -> None: ...

class AssentRevoked(_message.Message):
    __slots__ = ("source_id", "assent_id", "revision")
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    ASSENT_ID_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    source_id: str
    assent_id: str
    revision: int
    def __init__(self, source_id: _Optional[str] = ..., assent_id: _Optional[str] = ..., revision: _Optional[int] = ...) -> None: ...

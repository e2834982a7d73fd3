from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PrincipalKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PRINCIPAL_KIND_UNSPECIFIED: _ClassVar[PrincipalKind]
    PRINCIPAL_KIND_USER: _ClassVar[PrincipalKind]
    PRINCIPAL_KIND_AGENT: _ClassVar[PrincipalKind]
    PRINCIPAL_KIND_SERVICE: _ClassVar[PrincipalKind]
PRINCIPAL_KIND_UNSPECIFIED: PrincipalKind
PRINCIPAL_KIND_USER: PrincipalKind
PRINCIPAL_KIND_AGENT: PrincipalKind
PRINCIPAL_KIND_SERVICE: PrincipalKind

class CallContext(_message.Message):
    __slots__ = ("tenant_id", "principal_id", "principal_kind", "scopes", "request_id", "surface", "trace_id", "save_intent_trust")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_KIND_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SURFACE_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    SAVE_INTENT_TRUST_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    principal_id: str
    principal_kind: PrincipalKind
    scopes: _containers.RepeatedScalarFieldContainer[str]
    request_id: str
    surface: str
    trace_id: str
    save_intent_trust: SaveIntentTrust
    def __init__(self, tenant_id: _Optional[str] = ..., principal_id: _Optional[str] = ..., principal_kind: _Optional[_Union[PrincipalKind, str]] = ..., scopes: _Optional[_Iterable[str]] = ..., request_id: _Optional[str] = ..., surface: _Optional[str] = ..., trace_id: _Optional[str] = ..., save_intent_trust: _Optional[_Union[SaveIntentTrust, _Mapping]] = ...) -> None: ...

class SaveIntentTrust(_message.Message):
    __slots__ = ("intents",)
    INTENTS_FIELD_NUMBER: _ClassVar[int]
    intents: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, intents: _Optional[_Iterable[str]] = ...) -> None: ...

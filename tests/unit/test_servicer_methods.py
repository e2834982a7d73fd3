"""Every RPC of the public service has one door on each side: the runtime answers each with a
method written in its source, typed with the RPC's own request and response messages; the
gateway writes the few it decides itself (typed the same way) and forwards every other unary
RPC through its one forwarding handler, read from the service's descriptor."""

from __future__ import annotations

import collections.abc
import typing

import pytest
from google.protobuf.descriptor import MethodDescriptor

from agentmem.contract.rpcs import SERVICE
from agentmem.v1 import memory_service_pb2_grpc
from protocol_svc import forwarding
from protocol_svc.servicer import MemoryServicer
from runtime_svc.grpc.servicer import RuntimeServicer

GENERATED = memory_service_pb2_grpc.MemoryServiceServicer
# What the gateway answers itself: the capabilities it gates, the content scope of a read,
# the event stream it fans out. Every other RPC is forwarded as it is.
WRITTEN_BY_THE_GATEWAY = {"GetCapabilities", "GetSource", "WatchEvents"}


def _defined_in(cls: type, name: str) -> type:
    return next(c for c in cls.__mro__ if name in vars(c))


def _typed(owner: type, method: MethodDescriptor) -> None:
    fn = vars(owner)[method.name]
    assert fn.__qualname__ == f"{owner.__name__}.{method.name}"
    hints = typing.get_type_hints(fn)
    assert hints["request"].DESCRIPTOR.full_name == method.input_type.full_name
    returned = hints["return"]
    if method.server_streaming:
        assert typing.get_origin(returned) is collections.abc.AsyncIterator
        (returned,) = typing.get_args(returned)
    assert returned.DESCRIPTOR.full_name == method.output_type.full_name


@pytest.mark.parametrize("method", SERVICE.methods, ids=[m.name for m in SERVICE.methods])
def test_the_runtime_writes_each_rpc_as_a_typed_method(method: MethodDescriptor) -> None:
    owner = _defined_in(RuntimeServicer, method.name)
    # The generated base only answers UNIMPLEMENTED.
    assert owner is not GENERATED, f"{method.name} is not implemented"
    assert owner.__module__.startswith("runtime_svc."), owner
    _typed(owner, method)


@pytest.mark.parametrize("method", SERVICE.methods, ids=[m.name for m in SERVICE.methods])
def test_the_gateway_writes_or_forwards_each_rpc(method: MethodDescriptor) -> None:
    owner = _defined_in(MemoryServicer, method.name)
    assert owner is MemoryServicer
    if method.name in WRITTEN_BY_THE_GATEWAY:
        _typed(owner, method)
    else:
        fn = vars(owner)[method.name]
        assert fn.__module__ == forwarding.__name__ and fn.__name__ == method.name

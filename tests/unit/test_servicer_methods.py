"""Every RPC of the gateway and of the runtime is a method written in the source (none made
at import), typed with the RPC's own request and response messages."""

from __future__ import annotations

import collections.abc
import typing

import pytest
from google.protobuf.descriptor import MethodDescriptor

from agentmem.v1 import memory_service_pb2, memory_service_pb2_grpc
from agentmem_kernel.runtime.v1 import runtime_service_pb2, runtime_service_pb2_grpc
from protocol_svc.servicer import MemoryServicer
from runtime_svc.grpc.servicer import RuntimeServicer

GATEWAY = memory_service_pb2.DESCRIPTOR.services_by_name["MemoryService"]
RUNTIME = runtime_service_pb2.DESCRIPTOR.services_by_name["RuntimeService"]
CASES = [
    *((MemoryServicer, memory_service_pb2_grpc.MemoryServiceServicer, m) for m in GATEWAY.methods),
    *(
        (RuntimeServicer, runtime_service_pb2_grpc.RuntimeServiceServicer, m)
        for m in RUNTIME.methods
    ),
]


def _defined_in(cls: type, name: str) -> type:
    return next(c for c in cls.__mro__ if name in vars(c))


@pytest.mark.parametrize(
    ("servicer", "generated", "method"),
    CASES,
    ids=[f"{s.__name__}.{m.name}" for s, _, m in CASES],
)
def test_each_rpc_is_a_typed_method(
    servicer: type, generated: type, method: MethodDescriptor
) -> None:
    owner = _defined_in(servicer, method.name)
    # The generated base only answers UNIMPLEMENTED; a method added by setattr at import
    # would not be in the source of the module its class was written in.
    assert owner is not generated, f"{method.name} is not implemented"
    assert owner.__module__.startswith(("protocol_svc.", "runtime_svc.")), owner
    fn = vars(owner)[method.name]
    assert fn.__qualname__ == f"{owner.__name__}.{method.name}"
    hints = typing.get_type_hints(fn)
    assert hints["request"].DESCRIPTOR.full_name == method.input_type.full_name
    returned = hints["return"]
    if method.server_streaming:
        assert typing.get_origin(returned) is collections.abc.AsyncIterator
        (returned,) = typing.get_args(returned)
    assert returned.DESCRIPTOR.full_name == method.output_type.full_name

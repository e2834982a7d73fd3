"""The runtime's gRPC servicer: maps requests to use cases, runs them off the event loop.

Its RPCs are written out by area (`rpc_sources`, `rpc_appends`, `rpc_facts`, `rpc_foreign`,
`rpc_retrieval`, `rpc_events`) over one common part (`servicer_base`)."""

from __future__ import annotations

from agentmem.v1 import memory_service_pb2_grpc
from runtime_svc.grpc.rpc_appends import AppendRpcs
from runtime_svc.grpc.rpc_events import EventRpcs
from runtime_svc.grpc.rpc_facts import FactRpcs
from runtime_svc.grpc.rpc_foreign import ForeignRpcs
from runtime_svc.grpc.rpc_retrieval import RetrievalRpcs
from runtime_svc.grpc.rpc_sources import SourceRpcs
from runtime_svc.grpc.servicer_base import CALLER, caller_from

__all__ = ["CALLER", "RuntimeServicer", "caller_from"]


class RuntimeServicer(
    SourceRpcs,
    AppendRpcs,
    FactRpcs,
    ForeignRpcs,
    RetrievalRpcs,
    EventRpcs,
    memory_service_pb2_grpc.MemoryServiceServicer,
):
    """Every RPC of `agentmem.v1.MemoryService`, as the runtime answers it on its internal
    port: for the caller the gateway authenticated (`servicer_base.caller_from`)."""

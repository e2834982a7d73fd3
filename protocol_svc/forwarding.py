"""The gateway's RPCs that are validated and forwarded to the runtime as they are.

Every unary RPC of `agentmem.v1.MemoryService` that the servicer does not write itself
(`MemoryServicer`: capabilities, a source's content scope, the event stream) is forwarded by
one handler, read from the service's descriptor: its request checked by its type's validator
(`protocol_svc/validation.py`), the call's context added, and the runtime's answer returned
as it is (the runtime serves the same service on its internal port). A new RPC needs no
method here."""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message

from agentmem.contract import rpcs
from agentmem_kernel.runtime.v1 import call_context_pb2 as rpb
from protocol_svc import validation
from protocol_svc.policy import POLICY, SERVICE
from protocol_svc.runtime_client import RuntimeClient

CALL: contextvars.ContextVar[rpb.CallContext] = contextvars.ContextVar("call")
# The servicer context of a call (request and response types are the method's own).
Context = grpc.aio.ServicerContext[Any, Any]
R = TypeVar("R", bound=Message)


def _fields(call: rpb.CallContext) -> dict[str, Any]:
    """The fields that are set (an unset message field stays unset in the copy)."""
    return {f.name: value for f, value in call.ListFields()}


class Forwarding:
    """A servicer's base: each unary RPC of the service its subclass does not define is
    forwarded (`_forward`)."""

    _runtime: RuntimeClient

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for method in SERVICE.methods:
            if method.server_streaming or method.name in _written(cls):
                continue
            setattr(cls, method.name, _forwarder(method.name))

    async def _forward(self, name: str, request: Any, context: Context, response: type[R]) -> R:
        """The request validated, then the runtime's answer to it (of type `response`)."""
        validation.validate(request)
        rule = POLICY[f"/{SERVICE.full_name}/{name}"]
        call = CALL.get()
        idempotent = rule.idempotent
        if "request_id" in request.DESCRIPTOR.fields_by_name and request.request_id:
            call = rpb.CallContext(**{**_fields(call), "request_id": request.request_id})
            idempotent = idempotent or name in rpcs.KEYED  # the runtime deduplicates it
        answer: R = await self._runtime.unary(
            name, request, call, time_remaining=context.time_remaining(), idempotent=idempotent
        )
        return answer


def _written(cls: type) -> set[str]:
    """The RPC methods a servicer class (or a base of it below `Forwarding`) writes."""
    return {
        name
        for klass in cls.__mro__
        if issubclass(klass, Forwarding) and klass is not Forwarding
        for name in vars(klass)
    }


def _forwarder(name: str) -> Callable[[Forwarding, Any, Context], Awaitable[Message]]:
    async def forward(self: Forwarding, request: Any, context: Context) -> Message:
        return await self._forward(name, request, context, Message)

    forward.__name__ = forward.__qualname__ = name
    return forward

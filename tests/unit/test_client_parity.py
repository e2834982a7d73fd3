"""Every field of every public request is reachable from `Client` and `AsyncClient`: each RPC
has a method of its snake-case name (or the one listed below), taking each request field as
a keyword of the same name; a field holding a message (a request's `metadata`, a listing's
`filter`) is reachable through its own fields. What is deliberately not reachable is listed
with the reason."""

from __future__ import annotations

import inspect
import re

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from agentmem.client import AsyncClient, Client
from agentmem.contract.rpcs import SERVICE

# An RPC whose method has another name.
METHODS = {"WatchEvents": "watch"}
# Fields reached through a message field's own fields (flattened into keywords).
FLATTENED = {"metadata", "filter"}
# Deliberately not reachable, with the reason.
NOT_REACHABLE = {
    # A foreign source is a thin pointer: the field exists only so that a body is refused.
    ("AdmitForeignSource", "body"): "a body beyond the thin pointer is refused",
    # An append's metadata is its save intent: labels are given at insert only.
    ("AppendMessages", "labels"): "labels are given at insert, not appended",
}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _fields(message: Descriptor) -> list[str]:
    out = []
    for f in message.fields:
        if f.name in FLATTENED and f.type == FieldDescriptor.TYPE_MESSAGE:
            out += [sub.name for sub in f.message_type.fields]
        else:
            out.append(f.name)
    return out


def _unreached(client: type, rpc: str) -> list[str]:
    method = getattr(client, METHODS.get(rpc, _snake(rpc)), None)
    assert method is not None, f"{client.__name__} has no method for {rpc}"
    params = set(inspect.signature(method).parameters)
    request = SERVICE.methods_by_name[rpc].input_type
    return [f for f in _fields(request) if f not in params and (rpc, f) not in NOT_REACHABLE]


@pytest.mark.parametrize("client", [Client, AsyncClient], ids=["Client", "AsyncClient"])
@pytest.mark.parametrize("rpc", [m.name for m in SERVICE.methods])
def test_every_request_field_is_reachable_from_the_clients(client, rpc):
    assert _unreached(client, rpc) == []

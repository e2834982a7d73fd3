"""The one table of public RPCs (`agentmem.contract.rpcs`): a row for every RPC of the
service, and every per-RPC fact elsewhere read from it."""

from __future__ import annotations

import pytest

from agentmem.client import values as client_values
from agentmem.contract import rpcs
from agentmem.contract.capabilities import CAPABILITIES
from agentmem.v1 import events_pb2
from protocol_svc.policy import POLICY


def test_every_rpc_of_the_service_has_exactly_one_row() -> None:
    assert rpcs.missing_rows() == [], "add a row to agentmem/contract/rpcs.py"
    names = [row.name for row in rpcs.TABLE]
    assert len(names) == len(set(names))
    assert set(names) == {m.name for m in rpcs.SERVICE.methods}


def test_each_row_names_a_known_capability_and_event_kinds() -> None:
    payload = {f.name for f in events_pb2.Event.DESCRIPTOR.oneofs_by_name["payload"].fields}
    for row in rpcs.TABLE:
        assert row.capability is None or row.capability in CAPABILITIES, row.name
        assert {e.field for e in row.events} <= payload, row.name
    made = {e.field for row in rpcs.TABLE for e in row.events}
    assert made == payload, "every kind of event is made by some RPC"


def test_the_gateway_policy_and_the_clients_retries_are_the_table() -> None:
    assert {m: (r.scope, r.capability, r.idempotent) for m, r in POLICY.items()} == {
        row.method: (row.scope.value, row.capability, row.idempotent) for row in rpcs.TABLE
    }
    assert {row.name for row in rpcs.TABLE if row.idempotent} == client_values.IDEMPOTENT


def test_the_app_server_gating_and_notifications_are_the_table() -> None:
    methods = pytest.importorskip("agentmem.app_server.methods")
    for method in methods.METHODS.values():
        assert method.capability == rpcs.BY_NAME[method.spec.rpc].capability
    assert {(n.name, n.event, n.rpc) for n in methods.NOTIFICATIONS.values()} == {
        (e.notification, e.field, row.name) for row in rpcs.TABLE for e in row.events
    }


def test_the_mcp_tools_hints_are_the_table() -> None:
    arguments = pytest.importorskip("agentmem.mcp.arguments")
    for row in rpcs.TABLE:
        hints = arguments.tool_annotations(row.name, row.name)
        assert hints.read_only_hint is row.read_only
        assert hints.idempotent_hint is row.idempotent


def test_experimental_follows_the_capabilitys_default() -> None:
    experimental = {row.name for row in rpcs.TABLE if row.experimental}
    assert "AdmitForeignSource" in experimental and "SearchMemories" not in experimental

"""Capability gating: each capability is on, off, or experimental (served only to clients
that opt in by naming it in the `agentmem-experimental` request metadata entry)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import grpc

from agentmem.contract import experimental
from agentmem.contract.errors import AgentmemError, Reason
from agentmem.v1 import capabilities_pb2
from agentmem_kernel.config import CAPABILITIES, CapabilityState, Settings


def opted_in(context: grpc.aio.ServicerContext[Any, Any]) -> frozenset[str]:
    """The experimental capabilities this call accepts."""
    return experimental.decode(
        value
        for key, value in context.invocation_metadata() or ()
        if key == experimental.METADATA_KEY and isinstance(value, str)
    )


class CapabilityGate:
    def __init__(self, settings: Settings) -> None:
        self._states: dict[str, CapabilityState] = {
            name: getattr(settings.capabilities, name) for name in CAPABILITIES
        }

    def state(self, capability: str) -> CapabilityState:
        return self._states[capability]

    def check(self, capability: str, accepted: frozenset[str]) -> None:
        """CAPABILITY_DISABLED when off; EXPERIMENTAL_NOT_ENABLED when experimental and the
        call did not opt in."""
        state = self._states[capability]
        if state is CapabilityState.OFF:
            raise AgentmemError(Reason.CAPABILITY_DISABLED, metadata={"capability": capability})
        if state is CapabilityState.EXPERIMENTAL and capability not in accepted:
            raise AgentmemError(
                Reason.EXPERIMENTAL_NOT_ENABLED,
                metadata={"capability": capability, "opt_in": experimental.METADATA_KEY},
            )

    def describe(self, accepted: Iterable[str]) -> list[capabilities_pb2.Capability]:
        accepted = frozenset(accepted)
        return [
            capabilities_pb2.Capability(
                name=name,
                enabled=state is not CapabilityState.OFF,
                experimental=state is CapabilityState.EXPERIMENTAL,
                opted_in=state is CapabilityState.EXPERIMENTAL and name in accepted,
            )
            for name, state in self._states.items()
        ]

"""Deny by default: every public RPC has exactly one entry here, keyed by full method name.

An entry names the scope the caller needs, the capability that must be enabled, and
whether the call is idempotent (only those are retried on UNAVAILABLE). The entries are
the contract's RPC table (`agentmem.contract.rpcs`), read as the gateway reads them. A
method with no entry is refused; a test built from the service descriptor fails if one is
missing.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentmem.contract.rpcs import SERVICE, TABLE

__all__ = ["POLICY", "SERVICE", "Rule", "method_name", "rule_for"]


@dataclass(frozen=True)
class Rule:
    scope: str
    capability: str | None
    idempotent: bool


POLICY: dict[str, Rule] = {
    rpc.method: Rule(rpc.scope.value, rpc.capability, rpc.idempotent) for rpc in TABLE
}


def rule_for(method: str) -> Rule | None:
    return POLICY.get(method)


def method_name(full_method: str) -> str:
    return full_method.rsplit("/", 1)[-1]

"""Capability names and their states (on | off | experimental), named once.

The servers' configuration holds one state per capability (`capabilities:`); a client
reads which are experimental from the same YAML section without loading that configuration.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from enum import StrEnum

CAPABILITIES = (
    "thread_memory_mode",
    "source_policy",
    "retrieval_explain",
    "save_intent",
    "facts",
    "foreign_sources",
    "events",
)


class CapabilityState(StrEnum):
    ON = "on"
    OFF = "off"
    # Served only to clients that opt in (request metadata `agentmem-experimental`).
    EXPERIMENTAL = "experimental"


# A capability's state when the configuration does not name it.
DEFAULTS: Mapping[str, CapabilityState] = {
    name: CapabilityState.EXPERIMENTAL if name == "foreign_sources" else CapabilityState.ON
    for name in CAPABILITIES
}
# The environment variable that overrides one capability's state (as in the servers).
ENV_PREFIX = "AGENTMEM_CAPABILITIES__"


def coerce_state(value: object) -> object:
    """true/false (YAML's on/off too) mean on/off; anything else is left to validation."""
    if isinstance(value, bool):
        return CapabilityState.ON if value else CapabilityState.OFF
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return CapabilityState.ON if value.lower() == "true" else CapabilityState.OFF
    return value


def experimental(section: Mapping[str, object] | None = None) -> frozenset[str]:
    """The experimental capabilities of a configuration's `capabilities:` section, the
    environment's overrides applied as the servers apply them (None: the built-in states)."""
    given = {str(k): v for k, v in (section or {}).items()}
    if section is not None:
        for name in CAPABILITIES:
            env = os.environ.get(ENV_PREFIX + name.upper())
            if env is not None:
                given[name] = env
    return frozenset(
        name
        for name in CAPABILITIES
        if str(coerce_state(given.get(name, DEFAULTS[name]))) == CapabilityState.EXPERIMENTAL
    )

"""The typed Python client of the public API, and what every client surface builds on.

    from agentmem.client import Client

    with Client() as memory:                    # AGENTMEM_ADDR / AGENTMEM_TOKEN by default
        for hit in memory.search_memories(query="seat preference", limit=5).hits:
            print(hit.source_id, hit.snippet)

`Client` (`blocking`) and `AsyncClient` (`aio`) call the gateway; `settings` says where and
how, `errors` decodes failures into `ApiError` subclasses, `values` checks what methods take.
The surfaces beside this package (`agentmem.cli`, `agentmem.mcp`, `agentmem.app_server`,
`agentmem.console`) build on it and never on each other; what several of them say alike
lives here too: `json_output` and `protojson` (messages as JSON), `numbers` (integer
arguments within their field's range), `commands` (how a surface adds its `agentmem`
commands), `person_credential` and `person_decisions` (what a host's agent may not do),
`retrieval_status` (whether search by meaning is behind).

The names below are imported on first use, so a surface that needs one small module (the
command line's argument checks) does not load gRPC.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentmem.client.aio import AsyncClient
    from agentmem.client.blocking import Client, MemoryClient, connect
    from agentmem.client.settings import (
        DEFAULT_ADDRESS,
        ENV_ADDRESS,
        ENV_CA_FILE,
        ENV_EXPERIMENTAL,
        ENV_TLS,
        ENV_TOKEN,
        NO_RETRY,
        RetryPolicy,
        Settings,
        channel_target,
    )

# Each public name, by the module that defines it.
_HOME = {
    "AsyncClient": "aio",
    "Client": "blocking",
    "MemoryClient": "blocking",
    "connect": "blocking",
    **dict.fromkeys(
        (
            "DEFAULT_ADDRESS",
            "ENV_ADDRESS",
            "ENV_CA_FILE",
            "ENV_EXPERIMENTAL",
            "ENV_TLS",
            "ENV_TOKEN",
            "NO_RETRY",
            "RetryPolicy",
            "Settings",
            "channel_target",
        ),
        "settings",
    ),
}
__all__ = [
    "DEFAULT_ADDRESS",
    "ENV_ADDRESS",
    "ENV_CA_FILE",
    "ENV_EXPERIMENTAL",
    "ENV_TLS",
    "ENV_TOKEN",
    "NO_RETRY",
    "AsyncClient",
    "Client",
    "MemoryClient",
    "RetryPolicy",
    "Settings",
    "channel_target",
    "connect",
]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'agentmem.client' has no attribute {name!r}")
    value = getattr(import_module(f"agentmem.client.{home}"), name)
    globals()[name] = value
    return value

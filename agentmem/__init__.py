"""agentmem: memory for AI agents that the user stays in charge of.

`agentmem.Client` / `agentmem.AsyncClient` are the typed clients of the public API; their
errors are in `agentmem.client_errors`.
"""

from __future__ import annotations

from importlib import metadata as _metadata
from typing import Any

DISTRIBUTION = "agentmem-service"
try:
    __version__ = _metadata.version(DISTRIBUTION)
except _metadata.PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0+unknown"

__all__ = ["AsyncClient", "Client", "RetryPolicy", "__version__"]


def __getattr__(name: str) -> Any:  # lazy, so `import agentmem` stays cheap for the servers
    if name in ("Client", "AsyncClient", "RetryPolicy"):
        from agentmem import client

        return getattr(client, name)
    raise AttributeError(name)

"""agentmem: memory for AI agents that the user stays in charge of.

    import agentmem

    with agentmem.Client() as memory:        # AGENTMEM_ADDR / AGENTMEM_TOKEN by default
        memory.insert_memory(content="I have a yellow Squier Tele")
        for hit in memory.search_memories(query="what guitar do I have").hits:
            print(hit.source_id, hit.snippet)

`Client` (blocking) and `AsyncClient` (asyncio) are the typed clients of the public API;
every failure raises an `ApiError` subclass (`NotFound`, `InvalidArgument`,
`RevisionMismatch`, …). The names below are imported on first use, so importing the contract
(`agentmem.contract`, `agentmem.v1`), as the servers do, does not import the client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# The client distribution (client/pyproject.toml); the service depends on it.
DISTRIBUTION = "agentmem-client"

__all__ = [
    "Aborted",
    "ApiError",
    "AssentDenied",
    "AsyncClient",
    "CapabilityDisabled",
    "Client",
    "DeadlineExceeded",
    "ExperimentalNotEnabled",
    "FailedPrecondition",
    "Internal",
    "InvalidArgument",
    "InvalidPageToken",
    "MissingScope",
    "NotFound",
    "NotPendingReview",
    "OutOfRange",
    "PermissionDenied",
    "ResourceExhausted",
    "RetryPolicy",
    "RevisionMismatch",
    "SaveIntentInvalid",
    "SaveIntentRequired",
    "ThreadMemoryDisabled",
    "Unauthenticated",
    "Unavailable",
    "Unimplemented",
    "__version__",
]
_CLIENT = frozenset({"AsyncClient", "Client", "RetryPolicy"})
_ERRORS = frozenset(__all__) - _CLIENT - {"__version__"}

if TYPE_CHECKING:
    from agentmem.client import AsyncClient, Client, RetryPolicy

    __version__: str
    from agentmem.client.errors import (
        Aborted,
        ApiError,
        AssentDenied,
        CapabilityDisabled,
        DeadlineExceeded,
        ExperimentalNotEnabled,
        FailedPrecondition,
        Internal,
        InvalidArgument,
        InvalidPageToken,
        MissingScope,
        NotFound,
        NotPendingReview,
        OutOfRange,
        PermissionDenied,
        ResourceExhausted,
        RevisionMismatch,
        SaveIntentInvalid,
        SaveIntentRequired,
        ThreadMemoryDisabled,
        Unauthenticated,
        Unavailable,
        Unimplemented,
    )


def __getattr__(name: str) -> Any:  # lazy, so `import agentmem` stays cheap for the servers
    if name == "__version__":  # importlib.metadata only when asked (`agentmem --version`)
        from importlib import metadata

        try:
            version = metadata.version(DISTRIBUTION)
        except metadata.PackageNotFoundError:  # a checkout that was never installed
            version = "0+unknown"
        globals()["__version__"] = version
        return version
    if name in _CLIENT:
        from agentmem import client

        return getattr(client, name)
    if name in _ERRORS:
        from agentmem.client import errors as client_errors

        return getattr(client_errors, name)
    raise AttributeError(f"module 'agentmem' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*__all__, "DISTRIBUTION", *(n for n in globals() if n.startswith("__"))})

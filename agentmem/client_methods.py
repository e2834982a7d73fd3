"""One method per unary RPC of the public API, with keyword arguments: `Methods` for the
blocking `Client`; `AsyncMethods` (generated from these into `agentmem/client_async.py` by
`python scripts/gen_async_client.py`, so type checkers see real coroutines) for
`AsyncClient`. The values they take are in `agentmem.client_values`."""

from __future__ import annotations

from agentmem.client_governance import GovernanceMethods
from agentmem.client_memory import MemoryMethods
from agentmem.client_retrieval import RetrievalMethods
from agentmem.client_review import ReviewMethods
from agentmem.client_sessions import SessionMethods
from agentmem.client_values import IDEMPOTENT, enum_name, enum_value, event_kinds, target_of

__all__ = ["IDEMPOTENT", "Methods", "enum_name", "enum_value", "event_kinds", "target_of"]

SOURCES = (
    "agentmem/client_memory.py",
    "agentmem/client_retrieval.py",
    "agentmem/client_review.py",
    "agentmem/client_governance.py",
    "agentmem/client_sessions.py",
)


class Methods(MemoryMethods, RetrievalMethods, ReviewMethods, GovernanceMethods, SessionMethods):
    """Typed keyword-argument methods for every unary RPC of agentmem.v1.MemoryService."""

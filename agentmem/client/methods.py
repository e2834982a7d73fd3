"""One method per unary RPC of the public API, with keyword arguments: `Methods` for the
blocking `Client`; `AsyncMethods` (generated from these into `agentmem/client/async_methods.py` by
`python scripts/gen_async_client.py`, so type checkers see real coroutines) for
`AsyncClient`. The values they take are in `agentmem.client.values`."""

from __future__ import annotations

from agentmem.client.governance import GovernanceMethods
from agentmem.client.memory import MemoryMethods
from agentmem.client.retrieval import RetrievalMethods
from agentmem.client.review import ReviewMethods
from agentmem.client.sessions import SessionMethods
from agentmem.client.values import IDEMPOTENT, enum_name, enum_value, event_kinds, target_of

__all__ = ["IDEMPOTENT", "Methods", "enum_name", "enum_value", "event_kinds", "target_of"]

SOURCES = (
    "agentmem/client/memory.py",
    "agentmem/client/retrieval.py",
    "agentmem/client/review.py",
    "agentmem/client/governance.py",
    "agentmem/client/sessions.py",
)


class Methods(MemoryMethods, RetrievalMethods, ReviewMethods, GovernanceMethods, SessionMethods):
    """Typed keyword-argument methods for every unary RPC of agentmem.v1.MemoryService."""

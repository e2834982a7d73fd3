"""Scopes a credential grants, named once; the check a use case makes on one of them; and
how a credential is named in the servers' configuration (its sha256)."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from enum import StrEnum

from agentmem.contract.errors import AgentmemError, Reason


class Scope(StrEnum):
    READ = "memory.read"
    WRITE = "memory.write"
    CONTENT_READ = "memory.content.read"  # raw text through the surfaces that return it
    POLICY = "memory.policy"
    REVIEW = "memory.review"
    ADMIT = "memory.admit"
    ADMIN = "memory.admin"


def require(granted: Collection[str], scope: Scope) -> None:
    """MISSING_SCOPE (naming the scope) unless the credential grants it."""
    if scope not in granted:
        raise AgentmemError(Reason.MISSING_SCOPE, metadata={"scope": scope.value})


def token_sha256(token: str) -> str:
    """What `auth.api_keys[].sha256` holds for a token."""
    return hashlib.sha256(token.encode()).hexdigest()

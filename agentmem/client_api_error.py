"""`ApiError`: what every failed call of the client raises (see `agentmem.client_errors`)."""

from __future__ import annotations

from typing import Any

import grpc


class ApiError(grpc.RpcError):
    """A call failed. `reason` is the stable ErrorInfo reason (None for a transport failure
    that carries none), `metadata` its key/value details (never memory text or tokens)."""

    status_code: grpc.StatusCode = grpc.StatusCode.UNKNOWN

    def __init__(
        self,
        message: str,
        *,
        status_code: grpc.StatusCode | None = None,
        reason: str | None = None,
        metadata: dict[str, str] | None = None,
        violations: tuple[tuple[str, str], ...] = (),
        target: str = "",
        cause: grpc.RpcError | None = None,
    ) -> None:
        super().__init__(message)
        if status_code is not None:
            self.status_code = status_code
        self.message = message
        self.reason = reason
        self.metadata = dict(metadata or {})
        self.violations = violations
        self.target = target  # what the call was about, e.g. "source src_1" (ids only)
        self._cause = cause

    # grpc.RpcError / grpc.Call compatibility
    def code(self) -> grpc.StatusCode:
        return self.status_code

    def details(self) -> str:
        return self.message

    def trailing_metadata(self) -> tuple[Any, ...]:  # grpc's (key, value) metadata items
        return self._cause.trailing_metadata() if self._cause is not None else ()

    def __str__(self) -> str:
        return self.explain()

    def explain(self) -> str:
        """One line for a person: the reason, what it was about, the fields at fault, and
        what to do next (also what `str()` gives)."""
        head = self.reason or self.status_code.name
        text = f"{head}: {self.message}" if self.message else head
        fields = "; ".join(f"{f}: {d}" for f, d in self.violations if f not in text)
        about = f" ({self.target})" if self.target and self.target not in text else ""
        return text + (f" [{fields}]" if fields else "") + about

"""Codex's own memory methods, with Codex's params and results, under agentmem's governance.

Each is a permitted read or a governed write through the gateway with the caller's
credential; none holds state or policy of its own.

- `thread/memory/read` `{threadId}` -> `{summary}`: the user's profile (the eligible facts
  every thread may be told), one line each, or null when the thread's memory mode is
  disabled or nothing is known. It needs what `ReadThreadMemoryMode` and `GetProfile` need.
- `memory/status` `{minConsolidatedThreads?}` -> `{v2ConsolidatedThreads, v2Ready}`:
  agentmem consolidates nothing per thread (a memory is retrievable once stored), so the
  count is 0 and `v2Ready` says whether this caller may read memories (`memory.read`).
- `memory/reset` is refused: a wipe of everything is never a host's call. Erasing is per
  source (`memory/sources/erase`, with its receipt and readback), by a caller with the
  `memory.policy` scope.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr
from pydantic.alias_generators import to_camel

from agentmem.app_server import wire
from agentmem.app_server.gateway import Gateway
from agentmem.client.errors import ApiError
from agentmem.v1 import common_pb2, facts_pb2, thread_mode_pb2

_PARAMS = ConfigDict(extra="ignore", alias_generator=to_camel, populate_by_name=True)
_RESULT = ConfigDict(alias_generator=to_camel, populate_by_name=True)
READ_SCOPE = "memory.read"
RESET_REFUSED = "MEMORY_RESET_REFUSED"


class ThreadMemoryReadParams(BaseModel):
    """A thread's memory summary (Codex's `thread/memory/read`)."""

    model_config = _PARAMS
    thread_id: StrictStr


class ThreadMemoryReadResponse(BaseModel):
    """The user's profile as lines, or null when the thread's memory is disabled or empty."""

    model_config = _RESULT
    summary: str | None


class MemoryStatusParams(BaseModel):
    """Whether memory is ready (Codex's `memory/status`)."""

    model_config = _PARAMS
    min_consolidated_threads: StrictInt | None = Field(default=None, ge=1, le=4096)


class MemoryStatusResponse(BaseModel):
    """agentmem consolidates no threads (0); ready: this caller may read memories."""

    model_config = _RESULT
    v2_consolidated_threads: int = Field(alias="v2ConsolidatedThreads")
    v2_ready: bool = Field(alias="v2Ready")


class MemoryResetParams(BaseModel):
    """Codex's `memory/reset` (no params): always refused, see `memory/sources/erase`."""

    model_config = _PARAMS


class MemoryResetResponse(BaseModel):
    """Never sent: `memory/reset` is refused."""

    model_config = _RESULT


Run = Callable[[Gateway, Any], Awaitable[dict[str, Any]]]


async def thread_memory_read(gateway: Gateway, params: ThreadMemoryReadParams) -> dict[str, Any]:
    mode = await gateway.call(
        "ReadThreadMemoryMode",
        thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id=params.thread_id),
    )
    assert isinstance(mode, thread_mode_pb2.ReadThreadMemoryModeResponse)
    summary = None
    if mode.mode != common_pb2.MEMORY_MODE_DISABLED:
        profile = await gateway.call("GetProfile", facts_pb2.GetProfileRequest())
        assert isinstance(profile, facts_pb2.GetProfileResponse)
        lines = [f"{e.key} {e.value}".strip() for e in profile.entries]
        summary = "\n".join(line for line in lines if line) or None
    return ThreadMemoryReadResponse(summary=summary).model_dump(by_alias=True)


async def memory_status(gateway: Gateway, params: MemoryStatusParams) -> dict[str, Any]:
    answer = await gateway.capabilities()
    ready = READ_SCOPE in answer.caller.scopes
    status = MemoryStatusResponse(v2ConsolidatedThreads=0, v2Ready=ready)
    return status.model_dump(by_alias=True)


async def memory_reset(gateway: Gateway, params: MemoryResetParams) -> dict[str, Any]:
    raise wire.RpcFailure(
        wire.INVALID_REQUEST,
        "memory/reset is not served: erase a source with memory/sources/erase "
        "(one source at a time, with its receipt and readback; scope memory.policy)",
        {"reason": RESET_REFUSED, "alternative": "memory/sources/erase"},
    )


SET_ATTEMPTS = 5  # reads and compare-and-swaps, while other writers keep moving the thread


async def set_mode_unconditionally(
    gateway: Gateway, request: thread_mode_pb2.SetThreadMemoryModeRequest
) -> thread_mode_pb2.SetThreadMemoryModeResponse:
    """Codex's `thread/memoryMode/set` without `expectedRevision`: the current revision is
    read and the mode set by compare-and-swap on it, so the set is authorized, receipted
    and notified as any other; a writer in between only means another try."""
    for attempt in range(SET_ATTEMPTS):
        current = await gateway.call(
            "ReadThreadMemoryMode",
            thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id=request.thread_id),
        )
        assert isinstance(current, thread_mode_pb2.ReadThreadMemoryModeResponse)
        request.expected_revision = current.revision
        try:
            answer = await gateway.call("SetThreadMemoryMode", request)
        except ApiError as e:
            if e.reason != "REVISION_MISMATCH" or attempt == SET_ATTEMPTS - 1:
                raise
            continue
        assert isinstance(answer, thread_mode_pb2.SetThreadMemoryModeResponse)
        return answer
    raise AssertionError("unreachable")

"""One host connection, whatever carries it: the handshake, the gating, the dispatch.

`initialize` must come first (else -32600 "Not initialized"), once ("Already
initialized"). It asks the gateway, with the connection's credential, who that is (a
person's credential is refused unless the bridge was told to allow it,
`agentmem.client.person_credential`), which capabilities it serves and which are experimental; a
method of an experimental capability then needs `capabilities.experimentalApi` (else
-32600 "<method> requires experimentalApi capability"), and the connection's calls opt in
to exactly those capabilities when it has it. Requests run concurrently, at most
`Limits.max_in_flight` at a time (-32001 beyond). Nothing here is kept past the connection:
state lives in the gateway and the runtime.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message
from pydantic import BaseModel, ValidationError

from agentmem.app_server import errors, notifications, upstream, wire
from agentmem.app_server.gateway import Gateway
from agentmem.app_server.handshake import (
    EVENTS_STOPPED,
    InitializeParams,
    InitializeResponse,
    home,
    platform,
    user_agent,
)
from agentmem.app_server.methods import METHODS, Method, Notification
from agentmem.client import person_credential, protojson
from agentmem.client.errors import ApiError
from agentmem.v1 import thread_mode_pb2

log = logging.getLogger("agentmem.app_server")
Send = Callable[[dict[str, Any]], Awaitable[None]]
SET_MODE = "thread/memoryMode/set"


@dataclass(frozen=True)
class Opened:
    """What `initialize` settled for the connection."""

    gateway: Gateway  # opted in to the experimental capabilities it accepted
    experimental_api: bool
    experimental: frozenset[str]  # the gateway's experimental capabilities
    notifications: tuple[Notification, ...]  # less the opted-out ones
    resume_after: int | None
    stopped_wanted: bool

    def refuses(self, method: Method) -> bool:
        return method.capability in self.experimental and not self.experimental_api


class Session:
    def __init__(
        self, gateway: Gateway, send: Send, limits: wire.Limits, allow_person: bool = False
    ) -> None:
        self._gateway = gateway
        self._allow_person = allow_person
        self._write = send
        self._limits = limits
        self._lock = asyncio.Lock()
        self._opened: Opened | None = None
        self._in_flight: dict[wire.RequestId, asyncio.Task[None]] = {}
        self._relay: asyncio.Task[None] | None = None

    async def send(self, message: dict[str, Any]) -> None:
        async with self._lock:  # one writer: responses and notifications interleave whole
            await self._write(message)

    async def receive(self, frame: bytes | str) -> None:
        """Handles one frame. Returns once a request is dispatched (not answered)."""
        try:
            message = wire.parse(frame)
        except wire.Unanswerable as e:
            log.warning("message dropped", extra={"why": e.why})
            return
        except wire.Malformed as e:
            await self.send(wire.error(e.id, e))
            return
        if isinstance(message, wire.Request):
            await self._request(message)
        # a notification from the host (`initialized`) or a reply: nothing to do

    async def close(self, drain: bool = True) -> None:
        """Ends the connection: lets requests in flight answer (unless `drain` is False),
        then stops its notifications."""
        pending = list(self._in_flight.values())
        if drain and pending:
            await asyncio.wait(pending)
        tasks = [*self._in_flight.values(), *([self._relay] if self._relay else [])]
        for task in tasks:
            task.cancel()
        # a task may also have ended on its own, e.g. writing to a host that went away
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _request(self, request: wire.Request) -> None:
        if request.method == "initialize":
            await self._answer(request.id, self._initialize(request.params))
            if self._opened is not None and self._relay is None:  # after the answer
                self._relay = asyncio.create_task(self._relay_events(self._opened))
            return
        opened = self._opened
        if opened is None:
            await self._fail(request.id, wire.INVALID_REQUEST, "Not initialized")
        elif request.id in self._in_flight:
            await self._fail(request.id, wire.INVALID_REQUEST, "Request id already in flight")
        elif len(self._in_flight) >= self._limits.max_in_flight:
            await self.send(wire.error(request.id, errors.overloaded(self._limits.max_in_flight)))
        elif (method := METHODS.get(request.method)) is None:
            await self.send(wire.error(request.id, errors.method_not_found()))
        elif opened.refuses(method):
            await self.send(wire.error(request.id, errors.experimental_required(method.name)))
        else:
            task = asyncio.create_task(
                self._answer(request.id, self._call(opened, method, request))
            )
            self._in_flight[request.id] = task
            task.add_done_callback(lambda _: self._in_flight.pop(request.id, None))

    async def _fail(self, request_id: wire.RequestId, code: int, message: str) -> None:
        await self.send(wire.error(request_id, wire.RpcFailure(code, message)))

    async def _answer(self, request_id: wire.RequestId, result: Awaitable[Any]) -> None:
        try:
            value = await result
        except wire.RpcFailure as failure:
            await self.send(wire.error(request_id, failure))
        except Exception:
            log.exception("request failed")  # the traceback, never the params
            internal = wire.RpcFailure(wire.INTERNAL_ERROR, "Internal error")
            await self.send(wire.error(request_id, internal))
        else:
            await self.send(wire.response(request_id, value))

    async def _call(self, opened: Opened, method: Method, request: wire.Request) -> Any:
        params = _validated(method.params, request.params)
        try:
            if method.run is not None:
                return await method.run(opened.gateway, params)
            response: Message
            if method.name == SET_MODE and params.expected_revision is None:
                message = method.request(params)
                assert isinstance(message, thread_mode_pb2.SetThreadMemoryModeRequest)
                response = await upstream.set_mode_unconditionally(opened.gateway, message)
            else:
                response = await opened.gateway.call(method.spec.rpc, method.request(params))
        except ApiError as e:
            log.info("gateway refused", extra={"method": method.name, "reason": e.reason})
            raise errors.from_api_error(e, method.name, method.spec.decision) from None
        return protojson.to_json(response)

    async def _initialize(self, raw: Any) -> dict[str, Any]:
        if self._opened is not None:
            raise wire.RpcFailure(wire.INVALID_REQUEST, "Already initialized")
        params = _validated(InitializeParams, raw)
        try:
            answered = await self._gateway.capabilities()
        except ApiError as e:
            raise errors.from_api_error(e, "initialize") from None
        if person_credential.is_person(answered) and not self._allow_person:
            refused = person_credential.refusal("the connection's credential")
            raise wire.RpcFailure(
                wire.INVALID_REQUEST, refused, {"reason": person_credential.REASON}
            )
        capabilities = answered.capabilities
        enabled = frozenset(c.name for c in capabilities if c.enabled)
        experimental = frozenset(c.name for c in capabilities if c.experimental)
        asked = params.capabilities
        experimental_api = bool(asked and asked.experimental_api)
        opted = experimental if experimental_api else frozenset()
        opt_outs = set((asked.opt_out_notification_methods if asked else None) or ())
        opened = Opened(
            gateway=self._gateway.opted_in(opted),
            experimental_api=experimental_api,
            experimental=experimental,
            notifications=tuple(
                n
                for n in notifications.visible(enabled, experimental, experimental_api)
                if n.name not in opt_outs
            ),
            resume_after=params.events_after_sequence,
            stopped_wanted=EVENTS_STOPPED not in opt_outs,
        )
        served = enabled - (frozenset() if experimental_api else experimental)
        family, system = platform()
        response = InitializeResponse(
            user_agent=user_agent(),
            codex_home=home(),
            platform_family=family,
            platform_os=system,
            api_version="agentmem.v1",
            methods=[
                m.name for m in METHODS.values() if m.capability is None or m.capability in served
            ],
            notifications=[n.name for n in opened.notifications],
        )
        self._opened = opened
        return response.model_dump(by_alias=True)

    async def _relay_events(self, opened: Opened) -> None:
        await notifications.relay(
            opened.gateway,
            self.send,
            list(opened.notifications),
            opened.resume_after,
            stopped_wanted=opened.stopped_wanted,
        )


def _validated(model: type[BaseModel], raw: Any) -> Any:
    """The params as `model` (members it does not know are ignored, as Codex does), or an
    error naming what is wrong (never the values)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise errors.not_an_object()
    if (where := _not_text(raw)) is not None:
        raise errors.not_text(where)
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        raise errors.invalid_params(e) from None


def _not_text(value: Any) -> list[str | int] | None:
    """Where a string or a key of `value` is not valid Unicode (a lone surrogate), if any.
    Walked without recursion: params may nest as deep as the JSON parser allows."""
    stack: list[tuple[list[str | int], Any]] = [([], value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, str) and not wire.is_text(node):
            return path
        if isinstance(node, dict):
            for key, item in node.items():
                if not wire.is_text(key):
                    return path
                stack.append(([*path, key], item))
        elif isinstance(node, list):
            stack.extend(([*path, i], item) for i, item in enumerate(node))
    return None

"""JSON-RPC 2.0 shapes without the `"jsonrpc"` field, as Codex's app-server speaks them.

A request is `{id, method, params?}`, a notification `{method, params?}`, a response
`{id, result}` or `{id, error: {code, message, data?}}`; ids are strings (valid Unicode)
or 64-bit integers. A `"jsonrpc"` member is accepted and ignored. As Codex's own server
does, a frame that is not JSON, or not a message with a usable id, is logged and not
answered: an answer would need an id, and `null` is not one in Codex's `JSONRPCMessage`.
A message with a usable id that is not a request is answered with -32600.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
OVERLOADED = -32001

RequestId = str | int


@dataclass(frozen=True)
class Limits:
    """Per connection: the largest message (a line or a frame), and how many requests may
    be unanswered at once."""

    max_message_bytes: int = 4 * 1024 * 1024
    max_in_flight: int = 64


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


class RpcFailure(Exception):
    """An error answer. `message` and `data` never carry what the caller sent."""

    def __init__(self, code: int, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def error(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            body["data"] = self.data
        return body


class Unanswerable(Exception):
    """A frame that cannot be answered: not JSON, or without a usable id. `why` says
    which, in our words (never the frame)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class Malformed(RpcFailure):
    """The frame is not a message; `id` is its id when it had a usable one."""

    def __init__(self, code: int, message: str, id: RequestId) -> None:
        super().__init__(code, message)
        self.id = id


@dataclass(frozen=True)
class Request:
    id: RequestId
    method: str
    params: Any


@dataclass(frozen=True)
class Notification:
    method: str
    params: Any


@dataclass(frozen=True)
class Reply:
    """A response from the client (the bridge sends no requests: it is ignored)."""

    id: RequestId


Incoming = Request | Notification | Reply


INT64 = (-(2**63), 2**63 - 1)


def is_text(value: str) -> bool:
    """Whether `value` is valid Unicode (no lone surrogate), so it can go out as UTF-8."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _id(value: Any) -> RequestId | None:
    if isinstance(value, bool):  # an int in Python, not an id in JSON-RPC
        return None
    if isinstance(value, int):
        return value if INT64[0] <= value <= INT64[1] else None
    return value if isinstance(value, str) and is_text(value) else None


def parse(frame: bytes | str) -> Incoming:
    try:
        message = json.loads(frame)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise Unanswerable("not JSON") from None
    if not isinstance(message, dict):
        raise Unanswerable("not a JSON object")
    has_id = "id" in message
    request_id = _id(message.get("id"))
    if has_id and request_id is None:
        raise Unanswerable("an id that is neither a string nor a 64-bit integer")
    method = message.get("method")
    if isinstance(method, str):
        params = message.get("params")
        if request_id is None:
            return Notification(method, params)
        return Request(request_id, method, params)
    if request_id is None:
        raise Unanswerable("no method and no id")
    if "result" in message or "error" in message:
        return Reply(request_id)
    raise Malformed(INVALID_REQUEST, "Invalid request: method must be a string", request_id)


def response(request_id: RequestId, result: Any) -> dict[str, Any]:
    return {"id": request_id, "result": result}


def error(request_id: RequestId, failure: RpcFailure) -> dict[str, Any]:
    return {"id": request_id, "error": failure.error()}


def notification(method: str, params: Any) -> dict[str, Any]:
    return {"method": method, "params": params}


def encode(message: dict[str, Any]) -> str:
    return _ENCODER.encode(message)

"""The gateway's errors and the params' validation errors as JSON-RPC errors.

A gateway error keeps its ErrorInfo: -32600 with the catalogue's message and
`data: {reason, ...metadata}` (keys in camelCase, integers as numbers), e.g.
`{reason: "REVISION_MISMATCH", currentRevision: 3}`. As in Codex's server, params that do
not parse (a missing field, a wrong type, text that is not valid Unicode) and an unknown
method are -32600, and a value of the right type but out of its range is -32602; each
names the fields and what is wrong with them, never the values sent. Neither carries
memory text, tokens or credentials: the gateway's messages are the catalogue's, and a
failure without an ErrorInfo gets a fixed message of ours.
"""

from __future__ import annotations

import re
from typing import Any

import grpc
from pydantic import ValidationError

from agentmem.app_server.wire import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    OVERLOADED,
    RpcFailure,
)
from agentmem.client.errors import ApiError
from agentmem.client.person_decisions import REFUSALS, Decision
from agentmem.client.protojson import camel

OVERLOADED_MESSAGE = "Server overloaded; retry later."
# Failures of the service itself rather than of the request: the host may retry.
_SERVER_SIDE = {
    grpc.StatusCode.UNAVAILABLE: "the service is unavailable; retry",
    grpc.StatusCode.DEADLINE_EXCEEDED: "the service did not answer in time; retry",
    grpc.StatusCode.INTERNAL: "internal error",
    grpc.StatusCode.UNKNOWN: "internal error",
}
_RETRY_LATER = {"RATE_LIMITED"}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_INTEGER = re.compile(r"^-?[0-9]{1,18}$")


def experimental_required(method: str) -> RpcFailure:
    return RpcFailure(
        INVALID_REQUEST,
        f"{method} requires experimentalApi capability",
        {"reason": "EXPERIMENTAL_NOT_ENABLED"},
    )


def overloaded(limit: int) -> RpcFailure:
    return RpcFailure(OVERLOADED, OVERLOADED_MESSAGE, {"reason": "OVERLOADED", "limit": limit})


def from_api_error(error: ApiError, method: str, decision: Decision | None = None) -> RpcFailure:
    """`decision`: the method is the person's decision; an agent's refusal says who makes it
    and where (`data.decidedBy: "person"`)."""
    data: dict[str, Any] = {"reason": error.reason or error.status_code.name}
    for key, value in sorted(error.metadata.items()):
        data[camel(key)] = int(value) if _INTEGER.match(value) else value
    if error.violations:
        data["fieldViolations"] = [
            {"field": field, "description": description} for field, description in error.violations
        ]
    if error.reason == "EXPERIMENTAL_NOT_ENABLED":
        return RpcFailure(INVALID_REQUEST, f"{method} requires experimentalApi capability", data)
    if error.reason in _RETRY_LATER:
        return RpcFailure(OVERLOADED, error.message or OVERLOADED_MESSAGE, data)
    if error.reason is None:  # no ErrorInfo: a transport failure; its details are not ours
        fixed = _SERVER_SIDE.get(error.status_code, "the request failed")
        code = INTERNAL_ERROR if error.status_code in _SERVER_SIDE else INVALID_REQUEST
        return RpcFailure(code, fixed, data)
    code = INTERNAL_ERROR if error.status_code in _SERVER_SIDE else INVALID_REQUEST
    if decision is not None and error.reason in REFUSALS:
        data["decidedBy"] = "person"
        return RpcFailure(code, decision.refused(error, error.message), data)
    return RpcFailure(code, error.message, data)


_OUT_OF_RANGE = {"greater_than_equal", "less_than_equal", "greater_than", "less_than"}


def method_not_found() -> RpcFailure:
    return RpcFailure(
        INVALID_REQUEST, "Invalid request: unknown method", {"reason": "METHOD_NOT_FOUND"}
    )


def invalid_params(error: ValidationError) -> RpcFailure:
    details = error.errors(include_input=False, include_url=False)
    in_range_only = all(e["type"] in _OUT_OF_RANGE for e in details)
    return _refused([_violation(e) for e in details], INVALID_PARAMS if in_range_only else None)


def not_an_object() -> RpcFailure:
    return _refused([{"field": "params", "description": "must be an object"}])


def not_text(path: list[str | int]) -> RpcFailure:
    """A string (or a key) holding a lone surrogate: no text can carry it on."""
    where = ".".join(str(p) if isinstance(p, int) or _NAME.match(p) else "<field>" for p in path)
    return _refused([{"field": where or "params", "description": "must be valid Unicode text"}])


def _refused(violations: list[dict[str, str]], code: int | None = None) -> RpcFailure:
    text = "; ".join(f"{v['field']}: {v['description']}" for v in violations)
    return RpcFailure(
        code or INVALID_REQUEST,
        f"Invalid {'params' if code else 'request'}: {text}",
        {"reason": "INVALID_FIELD", "fieldViolations": violations},
    )


def _violation(error: Any) -> dict[str, str]:
    """Where and what, in our words: the path of names (a key the host invented only when
    it looks like a name) and the kind of problem, never the value."""
    path = [
        str(part) if isinstance(part, int) or _NAME.match(str(part)) else "<field>"
        for part in error["loc"]
    ]
    kind: str = error["type"]
    expected = (error.get("ctx") or {}).get("expected")
    if kind == "enum" and expected:
        description = f"must be one of {expected}"
    else:
        description = _DESCRIPTIONS.get(kind) or next(
            (text for prefix, text in _KINDS if kind.startswith(prefix)), "is invalid"
        )
    return {"field": ".".join(path) or "params", "description": description}


_DESCRIPTIONS = {
    "missing": "is required",
    "extra_forbidden": "is not a field of these params",
    "greater_than_equal": "is out of range",
    "less_than_equal": "is out of range",
    "value_error": "is not a valid RFC 3339 timestamp",  # the one validator of our own
}
_KINDS = (
    ("int", "must be an integer"),
    ("float", "must be a number"),
    ("string", "must be a string"),
    ("bool", "must be true or false"),
    ("list", "must be an array"),
    ("dict", "must be an object"),
    ("model", "must be an object"),
)

"""The gateway's errors and the params' validation errors as JSON-RPC errors.

A gateway error keeps its ErrorInfo: -32600 with the catalogue's message and
`data: {reason, ...metadata}` (keys in camelCase, integers as numbers), e.g.
`{reason: "REVISION_MISMATCH", currentRevision: 3}`. Params that do not parse are -32602
naming the fields and what is wrong with each, never the values sent. Neither carries
memory text, tokens or credentials: the gateway's messages are the catalogue's, and a
failure without an ErrorInfo gets a fixed message of ours.
"""

from __future__ import annotations

import re
from typing import Any

import grpc
from pydantic import ValidationError

from agentmem.app_server.protojson import camel
from agentmem.app_server.wire import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    OVERLOADED,
    RpcFailure,
)
from agentmem.client_errors import ApiError

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


def from_api_error(error: ApiError, method: str) -> RpcFailure:
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
    return RpcFailure(code, error.message, data)


def invalid_params(error: ValidationError) -> RpcFailure:
    violations = [_violation(e) for e in error.errors(include_input=False, include_url=False)]
    text = "; ".join(f"{v['field']}: {v['description']}" for v in violations)
    return RpcFailure(
        INVALID_PARAMS,
        f"Invalid params: {text}",
        {"reason": "INVALID_FIELD", "fieldViolations": violations},
    )


def not_an_object() -> RpcFailure:
    return RpcFailure(
        INVALID_PARAMS,
        "Invalid params: params must be an object",
        {
            "reason": "INVALID_FIELD",
            "fieldViolations": [{"field": "params", "description": "must be an object"}],
        },
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

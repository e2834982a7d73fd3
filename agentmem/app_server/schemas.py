"""JSON Schemas of the bridge's protocol, generated from the method table's models.

Draft-07, one file per exported type (`ThreadMemoryModeSetParams.json`, ...) with the
definitions it reaches, the envelope unions (`ClientRequest`, `ClientNotification`,
`ServerNotification`) and the JSON-RPC frames, and one bundle with every definition
(`agentmem_app_server_protocol.schemas.json`). By default the stable surface only; with
`experimental`, the methods and notifications of experimental capabilities too (marked
EXPERIMENTAL). Which capabilities are experimental is the capability settings' answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, models_json_schema

from agentmem.app_server.handshake import (
    EVENTS_STOPPED,
    EventsStoppedNotification,
    InitializeParams,
    InitializeResponse,
)
from agentmem.app_server.methods import METHODS, NOTIFICATIONS
from agentmem.app_server.models import type_name
from agentmem.contract import capabilities

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
BUNDLE = "agentmem_app_server_protocol.schemas.json"
_REF = "#/definitions/"
_EXPERIMENTAL = "EXPERIMENTAL - "


class _Generator(GenerateJsonSchema):
    def field_title_should_be_set(self, schema: Any) -> bool:
        return False  # a property's name says it


@dataclass(frozen=True)
class Surface:
    """The requests and notifications of one generated surface."""

    requests: list[tuple[str, type[BaseModel], type[BaseModel], bool]]  # + experimental?
    notifications: list[tuple[str, type[BaseModel], bool]]


def experimental_capabilities(section: Mapping[str, object] | None = None) -> frozenset[str]:
    """The experimental capabilities of a configuration's `capabilities:` section (default:
    the built-in states)."""
    return capabilities.experimental(section)


def surface(experimental: frozenset[str], include_experimental: bool) -> Surface:
    requests: list[tuple[str, type[BaseModel], type[BaseModel], bool]] = [
        ("initialize", InitializeParams, InitializeResponse, False)
    ]
    for m in METHODS.values():
        flagged = m.capability in experimental
        if include_experimental or not flagged:
            requests.append((m.name, m.params, m.result, flagged))
    notes: list[tuple[str, type[BaseModel], bool]] = []
    for n in NOTIFICATIONS.values():
        flagged = bool(n.capabilities & experimental)
        if include_experimental or not flagged:
            notes.append((n.name, n.params, flagged))
    notes.append((EVENTS_STOPPED, EventsStoppedNotification, False))
    return Surface(requests, notes)


def bundle(surface: Surface) -> dict[str, Any]:
    """Every definition of the surface, keyed by type name."""
    models = [m for _, params, result, _ in surface.requests for m in (params, result)]
    models += [params for _, params, _ in surface.notifications]
    _, top = models_json_schema(
        [(m, "validation") for m in models],
        ref_template=_REF + "{model}",
        schema_generator=_Generator,
    )
    definitions: dict[str, Any] = top.get("$defs", {})
    flagged = {m.__name__ for _, p, r, x in surface.requests if x for m in (p, r)}
    flagged |= {p.__name__ for _, p, x in surface.notifications if x}
    for name in flagged:
        text = definitions[name].get("description", "")
        definitions[name]["description"] = _EXPERIMENTAL + text
    definitions.update(_envelopes(surface, definitions))
    return dict(sorted(definitions.items()))


def _envelopes(surface: Surface, definitions: dict[str, Any]) -> dict[str, Any]:
    def required(model: type[BaseModel]) -> bool:
        return bool(definitions[model.__name__].get("required"))

    requests = [
        _variant(name, f"{type_name(name)}Request", params, True, required(params))
        for name, params, _, _ in surface.requests
    ]
    notes = [
        _variant(name, f"{type_name(name)}Notification", params, False, True)
        for name, params, _ in surface.notifications
    ]
    error = {
        "type": "object",
        "properties": {
            "code": {"type": "integer"},
            "message": {"type": "string"},
            "data": {
                "description": "reason (the catalogue's) and its details, never what was sent",
                "type": "object",
                "properties": {"reason": {"type": "string"}},
            },
        },
        "required": ["code", "message"],
    }
    request_id = {"$ref": _REF + "RequestId"}
    return {
        "RequestId": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "ClientRequest": {"oneOf": requests, "title": "ClientRequest"},
        "ClientNotification": {"oneOf": [_initialized()], "title": "ClientNotification"},
        "ServerNotification": {"oneOf": notes, "title": "ServerNotification"},
        "JSONRPCErrorError": {**error, "title": "JSONRPCErrorError"},
        "JSONRPCError": {
            "title": "JSONRPCError",
            "type": "object",
            "properties": {
                "id": request_id,
                "error": {"$ref": _REF + "JSONRPCErrorError"},
            },
            "required": ["id", "error"],
        },
        "JSONRPCResponse": {
            "title": "JSONRPCResponse",
            "type": "object",
            "properties": {"id": request_id, "result": {}},
            "required": ["id", "result"],
        },
    }


def _variant(
    method: str, title: str, params: type[BaseModel], with_id: bool, params_required: bool
) -> dict[str, Any]:
    head = ["id"] if with_id else []
    properties: dict[str, Any] = {}
    if with_id:
        properties["id"] = {"$ref": _REF + "RequestId"}
    properties["method"] = {"enum": [method], "type": "string"}
    properties["params"] = {"$ref": _REF + params.__name__}
    return {
        "title": title,
        "type": "object",
        "properties": properties,
        "required": [*head, "method", *(["params"] if params_required else [])],
    }


def _initialized() -> dict[str, Any]:
    return {
        "title": "InitializedNotification",
        "type": "object",
        "properties": {"method": {"enum": ["initialized"], "type": "string"}},
        "required": ["method"],
    }


def files(definitions: dict[str, Any], exported: Iterable[str]) -> dict[str, dict[str, Any]]:
    """One document per exported type: the type, and the definitions it reaches."""
    out = {
        BUNDLE: {
            "$schema": DRAFT_07,
            "title": "AgentmemAppServerProtocol",
            "definitions": definitions,
        }
    }
    for name in exported:
        reached = _reach(definitions[name], definitions)
        reached.discard(name)
        document: dict[str, Any] = {"$schema": DRAFT_07, **definitions[name]}
        if reached:
            document["definitions"] = {n: definitions[n] for n in sorted(reached)}
        out[f"{name}.json"] = document
    return out


def _reach(node: Any, definitions: dict[str, Any], seen: set[str] | None = None) -> set[str]:
    seen = set() if seen is None else seen
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF):
            name = ref.removeprefix(_REF)
            if name not in seen:
                seen.add(name)
                _reach(definitions[name], definitions, seen)
        for value in node.values():
            _reach(value, definitions, seen)
    elif isinstance(node, list):
        for value in node:
            _reach(value, definitions, seen)
    return seen


def exported(surface: Surface) -> list[str]:
    names = ["ClientRequest", "ClientNotification", "ServerNotification", "RequestId"]
    names += ["JSONRPCError", "JSONRPCErrorError", "JSONRPCResponse"]
    names += [m.__name__ for _, params, result, _ in surface.requests for m in (params, result)]
    names += [params.__name__ for _, params, _ in surface.notifications]
    return names


def write_json(
    out: Path, include_experimental: bool, section: Mapping[str, object] | None = None
) -> list[Path]:
    chosen = surface(experimental_capabilities(section), include_experimental)
    definitions = bundle(chosen)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, document in files(definitions, exported(chosen)).items():
        path = out / name
        path.write_text(json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        written.append(path)
    return written

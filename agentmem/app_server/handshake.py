"""The handshake's own messages, and the bridge's one notification that is not an event.

`initialize` is Codex's: `clientInfo`, and `capabilities` with the per-connection opt-in to
experimental methods and the notification opt-outs (exact method names; unknown names are
accepted and ignored). agentmem adds `eventsAfterSequence`: the last `eventSequence` the
host saw, to resume notifications after a reconnect without a gap; without it the
connection is told of changes from its `initialize` on. Unknown members are ignored, so a
host that sends more of Codex's handshake still connects.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from pydantic.alias_generators import to_camel

import agentmem

_LENIENT = ConfigDict(extra="ignore", alias_generator=to_camel)
_CAMEL = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class ClientInfo(BaseModel):
    model_config = _LENIENT
    name: StrictStr
    title: StrictStr | None = None
    version: StrictStr


class InitializeCapabilities(BaseModel):
    model_config = _LENIENT
    experimental_api: StrictBool = False
    opt_out_notification_methods: list[StrictStr] | None = None


class InitializeParams(BaseModel):
    """Opens the connection: the first request, once."""

    model_config = _LENIENT
    client_info: ClientInfo
    capabilities: InitializeCapabilities | None = None
    events_after_sequence: StrictInt | None = Field(
        default=None,
        ge=0,
        le=2**63 - 1,  # an event sequence is an int64
        description="Resume notifications after this event (last seen).",
    )


class InitializeResponse(BaseModel):
    """Codex's fields (`userAgent`, `codexHome`, `platformFamily`, `platformOs`), then
    agentmem's. `codexHome` is the bridge's working directory: agentmem keeps nothing
    there, every state lives behind the gateway."""

    model_config = _CAMEL
    user_agent: str
    codex_home: str
    platform_family: str
    platform_os: str
    api_version: str
    # The methods this connection may call, and the notifications it will be sent.
    methods: list[str]
    notifications: list[str]


class EventsStoppedNotification(BaseModel):
    """Notifications of events stopped (e.g. the resume point was compacted, or the
    gateway stayed unreachable): re-read what you show, then reconnect."""

    model_config = _CAMEL
    reason: str
    message: str
    last_event_sequence: int


EVENTS_STOPPED = "memory/events/stopped"


def user_agent() -> str:
    return f"agentmem-app-server/{agentmem.__version__}"


def platform() -> tuple[str, str]:
    """The family and the operating system, in Codex's words ("unix", "linux")."""
    if sys.platform.startswith("win"):
        return "windows", "windows"
    return "unix", {"darwin": "macos"}.get(sys.platform, sys.platform.rstrip("0123456789"))


def home() -> str:
    return str(Path.cwd().resolve())

"""A person's credential is not for hosts: `agentmem mcp` and `agentmem app-server` refuse
one (a credential of principal kind `user`, which `GetCapabilities` names) unless the person
says so.

A host acts for an agent. With the person's credential its model acts as the person: it
could approve what it saved, change the insert policy or a thread's mode, make memories
cold, retract facts and erase. Hosts get an agent's credential (`agentmem up` keeps one in
`data/agent-token`); what only the person decides stays on the person's surfaces, the CLI
and the console (docs/save-intent-trust.md, "Two credentials: who decides what").

`--allow-person-credential`, or AGENTMEM_ALLOW_PERSON_CREDENTIAL=1 for a host whose
configuration passes an environment but no arguments, is the person saying so: a local
tool the person drives by hand (an inspector, a script) may act as them.
"""

from __future__ import annotations

import os

from agentmem.v1 import capabilities_pb2

FLAG = "--allow-person-credential"
ENV = "AGENTMEM_ALLOW_PERSON_CREDENTIAL"
PERSON_KIND = "user"
REASON = "PERSON_CREDENTIAL"
FLAG_HELP = (
    "act with a person's credential (kind user) all the same; without it a person's "
    f"credential is refused, as hosts act for agents (env {ENV}=1)"
)


def allowed(flag: bool) -> bool:
    """Whether the person said a person's credential may be used here."""
    return flag or os.environ.get(ENV, "").strip().lower() in ("1", "true", "yes")


def is_person(capabilities: capabilities_pb2.GetCapabilitiesResponse) -> bool:
    return capabilities.caller.principal_kind == PERSON_KIND


def refusal(what: str = "this credential") -> str:
    """Why a person's credential is refused, and what to do instead: one line."""
    return (
        f"{REASON}: {what} is a person's (kind user), and hosts act for agents: a model "
        "acting with it could approve what it saved, change policy and erase. Give the host "
        "an agent's credential (agentmem up keeps one in data/agent-token; docs/mcp.md), or "
        f"pass {FLAG} ({ENV}=1) to act as the person on purpose"
    )

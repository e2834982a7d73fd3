"""The two credentials of `agentmem up`, kept in the data directory (mode 0600) and reused
at every start, so a saved MCP, shell or console configuration keeps working across
restarts; `--rotate-dev-token` mints both anew.

- The person's (`dev-token`, kind `user`, every scope): for the CLI and the console. What
  only the person decides (approving or rejecting held memories, policy, thread mode,
  classification, erasure) needs it.
- An agent's (`agent-token`, kind `agent`): for hosts (Claude Code, Codex, opencode). It
  reads and saves (`memory.read`, `memory.write`) and nothing a person decides; its claims
  that the user asked or confirmed are held for the person's review (it is trusted for
  `client_auto_save` only, as docs/save-intent-trust.md recommends for agent keys). It
  reads no pending text (no `memory.content.read`): what waits for review, an
  instruction-like memory among it, never reaches a model.

AGENTMEM_DEV_TOKEN and AGENTMEM_DEV_AGENT_TOKEN, when set, win and nothing is written.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmem.contract.save_intents import SaveIntentName
from agentmem.contract.scopes import Scope, token_sha256

TENANT = "dev"


@dataclass(frozen=True)
class Kind:
    """One of the two credentials: who it is for, and where it is kept."""

    principal: str
    kind: str  # the principal kind: user or agent
    env: str
    file_name: str
    prefix: str
    scopes: tuple[str, ...]
    trusted_save_intents: tuple[str, ...]


PERSON = Kind(
    principal="dev",
    kind="user",
    env="AGENTMEM_DEV_TOKEN",
    file_name="dev-token",
    prefix="am_dev_",
    scopes=tuple(s.value for s in Scope),
    trusted_save_intents=tuple(SaveIntentName),
)
AGENT = Kind(
    principal="dev-agent",
    kind="agent",
    env="AGENTMEM_DEV_AGENT_TOKEN",
    file_name="agent-token",
    prefix="am_agent_",
    scopes=(Scope.READ.value, Scope.WRITE.value),
    trusted_save_intents=(SaveIntentName.CLIENT_AUTO_SAVE.value,),
)
# Kept for callers of the single credential's names.
ENV = PERSON.env
FILE_NAME = PERSON.file_name


@dataclass(frozen=True)
class DevCredential:
    token: str
    path: Path | None  # None when it came from the environment
    minted: bool
    kind: Kind = PERSON


def load_or_mint(data_dir: str | Path, rotate: bool = False, kind: Kind = PERSON) -> DevCredential:
    chosen = os.environ.get(kind.env)
    if chosen:
        return DevCredential(chosen, None, minted=False, kind=kind)
    path = Path(data_dir).resolve() / kind.file_name
    if not rotate and path.exists():
        token = path.read_text().strip()
        if token:
            path.chmod(0o600)  # in case someone loosened it
            return DevCredential(token, path, minted=False, kind=kind)
    token = kind.prefix + secrets.token_urlsafe(24)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(kind.file_name + ".partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    os.replace(partial, path)
    return DevCredential(token, path, minted=True, kind=kind)


def both(data_dir: str | Path, rotate: bool = False) -> tuple[DevCredential, DevCredential]:
    """The person's credential and the agent's; ValueError when the two are the same token
    (both set in the environment alike), which would make the agent the person."""
    person = load_or_mint(data_dir, rotate, PERSON)
    agent = load_or_mint(data_dir, rotate, AGENT)
    if person.token == agent.token:
        raise ValueError(f"{AGENT.env} must differ from {PERSON.env}: an agent is not the person")
    return person, agent


def api_key(credential: DevCredential) -> dict[str, Any]:
    """The gateway's `auth.api_keys` entry for a credential (only its sha256)."""
    kind = credential.kind
    return {
        "principal": kind.principal,
        "tenant": TENANT,
        "kind": kind.kind,
        "scopes": list(kind.scopes),
        "trusted_save_intents": list(kind.trusted_save_intents),
        "sha256": token_sha256(credential.token),
    }


def describe(credential: DevCredential) -> str:
    """The banner's line for a credential: for whom it is, what it may do, where it is."""
    if credential.kind is AGENT:
        who = "an agent's credential, for hosts such as Claude Code, Codex and opencode"
        what = "it searches and saves; approval, policy and erasure stay yours"
        rotate, end = "", ""
    else:
        who = "your credential, for the CLI and the console"
        what = f"tenant '{TENANT}', every scope"
        rotate, end = "; --rotate-dev-token mints new ones for both", ":"
    if credential.path is None:
        return f"{who} ({what}) from {credential.kind.env}{end}"
    state = "new" if credential.minted else "reused"
    return f"{who} ({what}; {state}) kept in {credential.path} (mode 0600{rotate}){end}"

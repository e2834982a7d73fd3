"""The dev credential of `agentmem up`: kept in the data directory (mode 0600) and reused at
every start, so a saved MCP or shell config keeps working across restarts.

AGENTMEM_DEV_TOKEN, when set, wins and nothing is written.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

ENV = "AGENTMEM_DEV_TOKEN"
FILE_NAME = "dev-token"


@dataclass(frozen=True)
class DevCredential:
    token: str
    path: Path | None  # None when it came from AGENTMEM_DEV_TOKEN
    minted: bool


def load_or_mint(data_dir: str | Path, rotate: bool = False) -> DevCredential:
    chosen = os.environ.get(ENV)
    if chosen:
        return DevCredential(chosen, None, minted=False)
    path = Path(data_dir).resolve() / FILE_NAME
    if not rotate and path.exists():
        token = path.read_text().strip()
        if token:
            path.chmod(0o600)  # in case someone loosened it
            return DevCredential(token, path, minted=False)
    token = "am_dev_" + secrets.token_urlsafe(24)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(FILE_NAME + ".partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    os.replace(partial, path)
    return DevCredential(token, path, minted=True)


def describe(credential: DevCredential) -> str:
    if credential.path is None:
        return f"dev credential (tenant 'dev', every scope) from {ENV}:"
    state = "new" if credential.minted else "reused"
    return (
        f"dev credential (tenant 'dev', every scope; {state}) kept in {credential.path} "
        "(mode 0600; --rotate-dev-token mints a new one):"
    )

"""Configuration: one YAML file, every key with a default, environment overrides.

Environment variables override the file: `AGENTMEM_<SECTION>__<KEY>`, e.g.
`AGENTMEM_MEMORY__INSERT_POLICY=review_pending`. An unknown key or a bad value stops
start-up with a message naming it (`ConfigError`). The sections are defined by subject in
`agentmem_kernel.config_sections`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from agentmem.contract.save_intents import SaveIntentName
from agentmem.contract.scopes import token_sha256
from agentmem_kernel.config_sections import (
    CAPABILITIES,
    SCOPES,
    ApiKey,
    Auth,
    Capabilities,
    CapabilityState,
    EmbeddingsName,
    Events,
    Facts,
    Gateway,
    InsertPolicyName,
    Internal,
    Limits,
    LimitValues,
    Logging,
    Memory,
    Oidc,
    Passages,
    PrincipalKindName,
    Retrieval,
    Runtime,
    Search,
    Storage,
    TenantLimits,
    ThreadModeName,
    Tracing,
    Transport,
)

# The sections are defined by subject in config_sections; they are used from here.
__all__ = [
    "CAPABILITIES",
    "SCOPES",
    "ApiKey",
    "Auth",
    "Capabilities",
    "CapabilityState",
    "ConfigError",
    "EmbeddingsName",
    "Events",
    "Facts",
    "Gateway",
    "InsertPolicyName",
    "Internal",
    "LimitValues",
    "Limits",
    "Logging",
    "Memory",
    "Oidc",
    "Passages",
    "PrincipalKindName",
    "Retrieval",
    "Runtime",
    "SaveIntentName",
    "Search",
    "Settings",
    "Storage",
    "TenantLimits",
    "ThreadModeName",
    "Tracing",
    "Transport",
    "load",
    "token_sha256",
]


class ConfigError(Exception):
    """The configuration cannot be used; the message names the offending key."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="AGENTMEM_", env_nested_delimiter="__", extra="forbid", frozen=True
    )

    memory: Memory = Memory()
    auth: Auth = Auth()
    capabilities: Capabilities = Capabilities()
    events: Events = Events()
    search: Search = Search()
    retrieval: Retrieval = Retrieval()
    facts: Facts = Facts()
    gateway: Gateway = Gateway()
    runtime: Runtime = Runtime()
    internal: Internal = Internal()
    transport: Transport = Transport()
    storage: Storage = Storage()
    logging: Logging = Logging()
    tracing: Tracing = Tracing()
    limits: Limits = Limits()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The environment wins over the file, which is passed as init values.
        return env_settings, init_settings


def load(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    """Reads the YAML file (if any), applies `overrides` and then the environment."""
    data: dict[str, Any] = {}
    if path:
        try:
            raw = yaml.safe_load(Path(path).read_text()) or {}
        except OSError as e:
            raise ConfigError(f"cannot read config file {path}: {e.strerror}") from None
        except yaml.YAMLError as e:
            raise ConfigError(f"config file {path} is not valid YAML: {e}") from None
        if not isinstance(raw, dict):
            raise ConfigError(f"config file {path} must hold a mapping at the top level")
        data = raw
    for dotted, value in (overrides or {}).items():
        node = data
        *parents, leaf = dotted.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    try:
        return Settings(**data)
    except ValidationError as e:
        problems = []
        for err in e.errors():
            key = ".".join(str(p) for p in err["loc"])
            msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
            problems.append(f"{key}: {msg}")
        raise ConfigError("invalid configuration: " + "; ".join(problems)) from None

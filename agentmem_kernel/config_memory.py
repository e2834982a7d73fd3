"""Configuration of what memory does: the insert policy, thread modes, capabilities, events
and fact extraction."""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum
from typing import Annotated

from pydantic import BeforeValidator, Field, model_validator

from agentmem.contract.capabilities import CAPABILITIES as CAPABILITIES
from agentmem.contract.capabilities import CapabilityState as CapabilityState
from agentmem.contract.capabilities import coerce_state
from agentmem_kernel.config_base import Strict


class InsertPolicyName(StrEnum):
    PERMISSIVE = "permissive"
    REQUIRE_SAVE_INTENT = "require_save_intent"
    REVIEW_PENDING = "review_pending"


class ThreadModeName(StrEnum):
    ENABLED = "enabled"
    DISABLED = "disabled"


class Memory(Strict):
    insert_policy: InsertPolicyName = InsertPolicyName.PERMISSIVE
    default_thread_mode: ThreadModeName = ThreadModeName.ENABLED
    # Whether an agent may approve a pending memory it inserted itself.
    allow_self_approval: bool = False
    # Whether a service principal may approve or reject a memory pending by the insert
    # policy alone (a held one needs a person whatever this says).
    allow_service_review: bool = False


State = Annotated[CapabilityState, BeforeValidator(coerce_state)]


class Capabilities(Strict):
    """on | off | experimental per capability (true/false mean on/off)."""

    thread_memory_mode: State = CapabilityState.ON
    source_policy: State = CapabilityState.ON
    retrieval_explain: State = CapabilityState.ON
    save_intent: State = CapabilityState.ON
    facts: State = CapabilityState.ON
    foreign_sources: State = CapabilityState.EXPERIMENTAL
    events: State = CapabilityState.ON


class Events(Strict):
    # Events older than this are compacted (ISO 8601 duration such as P7D, or seconds).
    retention: timedelta = timedelta(days=7)
    # At most this many events are kept per tenant; older ones are compacted.
    max_events_per_tenant: int = Field(default=1_000_000, ge=1)
    # Events buffered per watcher before a slow watcher is cut off with RESOURCE_EXHAUSTED.
    subscriber_queue: int = Field(default=1024, ge=1)
    # How often the runtime looks for events written by other replicas (seconds).
    poll_interval: float = Field(default=1.0, gt=0)


class Facts(Strict):
    # "rules": the built-in first-person extractor. "openai_compatible": a language model
    # behind an OpenAI-compatible endpoint (needs the `llm` extra), falling back to the rules
    # when it fails.
    extractor: str = Field(default="rules", pattern="^(rules|openai_compatible)$")
    endpoint: str = ""  # e.g. http://127.0.0.1:8000/v1
    model: str = ""
    # Name of the environment variable that holds the endpoint's API key (never the key).
    api_key_env: str = "AGENTMEM_LLM_API_KEY"
    timeout: float = Field(default=10.0, gt=0)

    @model_validator(mode="after")
    def _endpoint_given(self) -> Facts:
        if self.extractor == "openai_compatible" and not (self.endpoint and self.model):
            raise ValueError("openai_compatible needs facts.endpoint and facts.model")
        return self

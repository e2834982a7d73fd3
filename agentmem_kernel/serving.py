"""What both processes share around their servicers: health, reflection, the port, and a
graceful shutdown (SIGTERM/SIGINT → NOT_SERVING → drain in-flight calls → stop)."""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import grpc
from grpc_health.v1 import _async as health_aio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from agentmem.process import listen as listening
from agentmem_kernel import metrics
from agentmem_kernel.grpc_types import Interceptor
from agentmem_kernel.guard import CallGuard
from agentmem_kernel.rpc_metrics import RpcMetrics

log = logging.getLogger("agentmem.serving")

OPEN_PREFIXES = ("/grpc.health.v1.Health/", "/grpc.reflection.")


class HealthService(Protocol):
    """gRPC's asyncio health servicer (`grpc_health.v1.health.aio`; its stubs have none)."""

    async def set(
        self, service: str, status: health_pb2.HealthCheckResponse.ServingStatus
    ) -> None: ...

    async def enter_graceful_shutdown(self) -> None: ...


@dataclass
class Served:
    server: grpc.aio.Server
    port: int
    health: HealthService
    guard: CallGuard
    grace: float
    health_server: grpc.aio.Server | None = None
    on_stop: list[Callable[[], object]] = field(default_factory=list)
    metrics_server: metrics.MetricsServer | None = None

    @property
    def metrics_port(self) -> int:
        return self.metrics_server.port if self.metrics_server else 0

    async def stop(self) -> None:
        """NOT_SERVING first, so balancers and probes move away; then refuse new calls with
        UNAVAILABLE while those in flight finish (up to `grace`); then stop the server."""
        started = time.monotonic()
        await self.health.enter_graceful_shutdown()
        await self.guard.drain(self.grace)
        await self.server.stop(max(self.grace - (time.monotonic() - started), 0.1))
        if self.health_server is not None:
            await self.health_server.stop(0)
        if self.metrics_server is not None:
            self.metrics_server.stop()
        for callback in self.on_stop:
            result = callback()
            if asyncio.iscoroutine(result):
                await result


async def start(
    *,
    listen: str,
    register: Callable[[grpc.aio.Server], None],
    services: Sequence[str],
    guard: CallGuard,
    grace: float,
    reflection_enabled: bool,
    credentials: grpc.ServerCredentials | None = None,
    options: Sequence[tuple[str, object]] = (),
    health_listen: str = "",
    metrics_listen: str = "",
    interceptors: Sequence[Interceptor] = (),
) -> Served:
    """`interceptors` run outside the guard (tracing first); with `metrics_listen`, every
    RPC is also counted and timed, and /metrics is served there over plaintext HTTP.
    Raises `listen.AddressInUse` when an address is taken, before anything listens."""
    for address in (listen, health_listen, metrics_listen):
        if address:
            listening.ensure_free(address)
    outer = [*interceptors, *([RpcMetrics()] if metrics_listen else [])]
    server = grpc.aio.server(
        interceptors=[*outer, guard],
        options=[*listening.GRPC_SERVER_OPTIONS, *options],
    )
    register(server)
    health_servicer: HealthService = health_aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    if reflection_enabled:
        reflection.enable_server_reflection(
            [
                *services,
                health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                reflection.SERVICE_NAME,
            ],
            server,
        )
    port = await _add_port(server, listen, credentials)
    await server.start()
    for name in ["", *services]:
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    health_server = None
    if health_listen:  # plaintext, health only: for kubelet probes beside an mTLS port
        health_server = grpc.aio.server(options=listening.GRPC_SERVER_OPTIONS)
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, health_server)
        try:
            await _add_port(health_server, health_listen, None)
        except OSError:
            await server.stop(None)
            raise
        await health_server.start()
    served = Served(server, port, health_servicer, guard, grace, health_server)
    if metrics_listen:
        served.metrics_server = metrics.serve(metrics_listen)
    return served


async def _add_port(
    server: grpc.aio.Server, address: str, credentials: grpc.ServerCredentials | None
) -> int:
    """Binds `address`; a bind that fails (the address taken since `ensure_free`, or not
    an address of this machine) stops the server, so nothing is left half started."""
    try:
        if credentials is None:
            port = server.add_insecure_port(address)
        else:
            port = server.add_secure_port(address, credentials)
    except RuntimeError:  # grpcio raises instead of returning 0 on a failed bind
        port = 0
    if port == 0:
        await server.stop(None)
        listening.ensure_free(address)  # AddressInUse when that is why
        raise OSError(f"cannot listen on {address}")
    return port


async def run_until_signal(served: Served, name: str, port_file: str | None = None) -> None:
    """Serves until SIGTERM or SIGINT, then shuts down gracefully."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if port_file:
        listening.announce(port_file, served.port)
    log.info("serving", extra={"service": name, "port": served.port})
    await stop.wait()
    log.info("draining", extra={"service": name, "grace_s": served.grace})
    await served.stop()
    log.info("stopped", extra={"service": name})

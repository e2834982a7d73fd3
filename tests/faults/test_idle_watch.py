"""A long-idle watch: it survives keepalive pings on both hops (the equivalent of ten minutes
at the default 30 s interval, with the interval shortened to 1 s), and then a runtime restart
long after its start, with a transparent reconnect and no gap or duplicate."""

from __future__ import annotations

import logging
import threading
import time

import grpc

from agentmem.client import MemoryClient
from agentmem.v1 import events_pb2
from agentmem_kernel import transport
from runtime_svc import app as runtime_app
from tests.faults.conftest import wait_until
from tests.harness import ADMIN_A
from tests.test_thread_mode import DISABLED, read, set_mode

KEEPALIVE_S = 1.0  # gRPC core sends at most one ping a second whatever the setting
PINGS = 21  # 10 minutes of pings at the default 30 s interval, and one more
RECONNECT_S = 3.0


class Watcher:
    def __init__(self, client: MemoryClient) -> None:
        self.sequences: list[int] = []
        self.error: grpc.RpcError | None = None
        self._stream = client.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=0))
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for item in self._stream:
                self.sequences.append(item.event.sequence)
        except grpc.RpcError as e:
            self.error = e

    def wait_for(self, n: int) -> None:
        wait_until(lambda: len(self.sequences) >= n or self.error, what=f"{n} events")
        assert self.error is None or self.error.code() == grpc.StatusCode.CANCELLED, self.error

    def close(self) -> None:
        self._stream.cancel()
        self._thread.join(timeout=10)


def test_idle_watch_survives_keepalive_and_a_late_runtime_restart(make_stack, caplog):
    stack = make_stack(
        transport__keepalive_time=KEEPALIVE_S,
        transport__min_ping_interval=KEEPALIVE_S / 2,
        gateway__watch_reconnect=RECONNECT_S,
    )
    options = transport.channel_options(stack.settings.transport)  # the client pings too
    client = MemoryClient(grpc.insecure_channel(stack.address, options=options), ADMIN_A.token)
    stack.clients.append(client)
    for i in range(3):
        set_mode(client, DISABLED, 0, thread_id=f"before{i}")
    watcher = Watcher(client)
    watcher.wait_for(3)

    with caplog.at_level(logging.INFO, logger="agentmem.gateway.watch"):
        # Idle on purpose: the duration is what is tested (keepalive pings on both hops),
        # not a stand-in for waiting on something.
        time.sleep(PINGS * KEEPALIVE_S)
        assert watcher.error is None
        assert "watch reconnecting" not in caplog.text  # no GOAWAY too_many_pings
        assert watcher.sequences == [1, 2, 3]

        # The runtime restarts on the same port, long after the watch started.
        port = stack.runtime.port
        stack.loop.run(stack.runtime.stop())
        stack.runtime = stack.loop.run(
            runtime_app.start(stack.settings, listen=f"127.0.0.1:{port}")
        )
        # The gateway's channel to the runtime reconnects with backoff (up to 1 s): a write
        # sent before it has answers UNAVAILABLE (retryable, nothing written). A read, which
        # the gateway itself retries on UNAVAILABLE, returns once it has reconnected.
        assert read(client, "after0", timeout=30).revision == 0
        for i in range(3):
            set_mode(client, DISABLED, 0, thread_id=f"after{i}")
        watcher.wait_for(6)
        set_mode(client, DISABLED, 0, thread_id="last")
        watcher.wait_for(7)
        assert "watch reconnecting" in caplog.text
    assert watcher.sequences == list(range(1, 8))  # no gap, no duplicate
    watcher.close()

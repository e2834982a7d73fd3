"""SIGTERM on the gateway with calls and a watch in flight: the watch ends at once with a
resumable UNAVAILABLE (with ErrorInfo), new calls get UNAVAILABLE with ErrorInfo, the calls
in flight complete, and the process exits 0 well before its grace period."""

from __future__ import annotations

import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest

from agentmem.client import connect
from agentmem.v1 import events_pb2
from tests.faults.conftest import log_count, wait_until
from tests.harness import ADMIN_A, metadata_of, reason
from tests.test_thread_mode import DISABLED, read, set_mode

GRACE_S = 5.0


def test_gateway_sigterm_with_calls_and_a_watch_in_flight(services):
    services.configure(
        runtime={"grace": GRACE_S},
        gateway={"grace": GRACE_S},
        storage={"url": services.url, "busy_timeout_ms": 30_000},
        logging={"level": "DEBUG"},
    )
    runtime = services.runtime()
    gateway = services.gateway(runtime.address)
    client = connect(gateway.address, ADMIN_A.token)
    set_mode(client, DISABLED, 0, thread_id="first")  # the tenant exists; one event
    watch = client.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=0))
    events: list[int] = []
    ended: list[grpc.RpcError] = []

    def follow() -> None:
        try:
            for item in watch:
                events.append(item.event.sequence)
        except grpc.RpcError as e:
            ended.append(e)

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    wait_until(lambda: events == [1], what="the watch to be open")

    pool = ThreadPoolExecutor(4)
    with services.write_lock():
        started = log_count(runtime, "SetThreadMemoryMode")  # before the calls can be logged
        in_flight = [pool.submit(set_mode, client, DISABLED, 0, f"d{i}", "", 30) for i in range(4)]
        wait_until(lambda: log_count(runtime, "SetThreadMemoryMode") >= started + 4, what="calls")
        assert not any(f.done() for f in in_flight)
        stopped_at = time.monotonic()
        gateway.proc.send_signal(signal.SIGTERM)
        wait_until(lambda: log_count(gateway, '"msg": "draining"'), what="draining")

        wait_until(lambda: ended, timeout=GRACE_S / 2, what="the watch to end")
        assert ended[0].code() == grpc.StatusCode.UNAVAILABLE
        assert reason(ended[0]) == "UNAVAILABLE"
        assert metadata_of(ended[0]) == {"cause": "shutting_down"}
        with pytest.raises(grpc.RpcError) as e:
            read(client, "fresh", timeout=5)
        assert e.value.code() == grpc.StatusCode.UNAVAILABLE and reason(e.value) == "UNAVAILABLE"
    # The lock is released: the calls in flight complete.
    assert [f.result().revision for f in in_flight] == [1, 1, 1, 1]
    pool.shutdown()
    assert gateway.wait() == 0
    assert time.monotonic() - stopped_at < GRACE_S
    client.close()

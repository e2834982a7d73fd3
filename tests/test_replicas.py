"""Two gateways and two runtimes on one database: every guarantee holds across replicas."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import grpc

from agentmem.v1 import events_pb2
from tests.harness import reason
from tests.memory_helpers import COLD, classify, insert, search_ids
from tests.test_thread_mode import DISABLED, ENABLED, read, set_mode


def test_replicas_share_state_order_and_compare_and_swap(make_stack):
    a = make_stack()
    b = make_stack(storage__url=a.settings.storage.url)  # another gateway + runtime, same DB
    client_a, client_b = a.client(), b.client()

    # read-your-writes across replicas, and filtering before search with cold sources
    s = insert(client_b, "The user grows tomatoes on the balcony")
    assert search_ids(client_a, "tomatoes") == [s.source_id]
    classify(client_a, s.source_id, 1, COLD)
    assert search_ids(client_b, "tomatoes") == []

    # a watcher on gateway A sees what is written through gateway B, in order, no gap
    stream = client_a.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=2))
    got: list = []
    reader = threading.Thread(
        target=lambda: got.extend(e.event for _, e in zip(range(3), stream, strict=False))
    )
    reader.start()
    set_mode(client_b, DISABLED, 0)
    set_mode(client_a, ENABLED, 1)
    set_mode(client_b, DISABLED, 2)
    reader.join(timeout=60)
    stream.cancel()
    assert [e.sequence for e in got] == [3, 4, 5]
    assert [e.thread_memory_mode_updated.revision for e in got] == [1, 2, 3]

    # compare-and-swap across replicas: exactly one of many concurrent setters wins
    def attempt(i: int) -> str:
        client = client_a if i % 2 else client_b
        try:
            set_mode(client, ENABLED, 3, thread_id="t1")
            return "ok"
        except grpc.RpcError as e:
            return reason(e) or e.code().name

    with ThreadPoolExecutor(20) as pool:
        outcomes = list(pool.map(attempt, range(20)))
    assert outcomes.count("ok") == 1
    assert set(outcomes) <= {"ok", "REVISION_MISMATCH", "CONCURRENT_MODIFICATION"}
    assert read(client_a).revision == read(client_b).revision == 4

"""A watcher that stops reading is cut off with RESOURCE_EXHAUSTED (ErrorInfo
SUBSCRIBER_TOO_SLOW) and, resuming from the last sequence it saw, gets the rest with no
gap and no duplicate."""

from __future__ import annotations

import grpc

from agentmem.client import MemoryClient
from agentmem.v1 import events_pb2
from tests.harness import ADMIN_A, reason
from tests.test_thread_mode import DISABLED, set_mode

EVENTS = 100


def test_slow_watcher_is_cut_then_resumes_without_gap(make_stack):
    stack = make_stack(events__subscriber_queue=2)
    client = stack.client()
    # A small HTTP/2 window and a reader that does not read while the events are written:
    # the gateway's queue of 2 fills.
    slow = MemoryClient(
        grpc.insecure_channel(
            stack.address,
            options=[("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 1024)],
        ),
        ADMIN_A.token,
    )
    stack.clients.append(slow)
    seen: list[int] = []
    cuts = 0
    stream = slow.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=0), timeout=30)
    for i in range(EVENTS):
        set_mode(client, DISABLED, 0, thread_id=f"t{i}")
    while len(seen) < EVENTS and cuts < 50:
        try:
            for item in stream:
                seen.append(item.event.sequence)
                if item.event.sequence == EVENTS:
                    stream.cancel()
                    break
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, e
            assert reason(e) == "SUBSCRIBER_TOO_SLOW"
            cuts += 1
        after = seen[-1] if seen else 0
        stream = slow.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=after), timeout=30)
    assert cuts >= 1  # it was cut off at least once
    assert seen == list(range(1, EVENTS + 1))  # and resumed with no gap, no duplicate

"""WatchEvents: live, ordered, gapless, resumable; compaction; slow subscribers."""

from __future__ import annotations

import threading

import grpc
import pytest

from agentmem.client import Client
from agentmem.v1 import common_pb2, events_pb2
from tests.harness import ADMIN_A, ADMIN_B, metadata_of, reason
from tests.test_thread_mode import DISABLED, ENABLED, set_mode


def toggle(client, n, thread_id="t1", start_revision=0):
    rev = start_revision
    for i in range(n):
        rev = set_mode(
            client, DISABLED if i % 2 == 0 else ENABLED, rev, thread_id=thread_id
        ).revision


def take(stream, n):
    out = []
    for item in stream:
        out.append(item.event)
        if len(out) == n:
            break
    return out


def test_live_watcher_receives_every_field(stack):
    client = stack.client()
    stream = client.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=0))
    got: list = []
    reader = threading.Thread(target=lambda: got.extend(take(stream, 2)))
    reader.start()
    first = set_mode(client, DISABLED, 0)
    second = set_mode(client, ENABLED, 1)
    reader.join(timeout=30)
    stream.cancel()
    assert [e.sequence for e in got] == [1, 2]
    e = got[0]
    assert e.event_id and e.at == first.effective_at
    u = e.thread_memory_mode_updated
    assert (u.thread_id, u.previous_mode, u.mode, u.revision, u.effective_at) == (
        "t1",
        ENABLED,
        DISABLED,
        1,
        first.effective_at,
    )
    assert got[1].thread_memory_mode_updated.revision == second.revision


def test_resume_gets_exactly_the_later_events(stack):
    client = stack.client()
    toggle(client, 6)
    stream = client.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=3))
    got = take(stream, 3)
    stream.cancel()
    assert [e.sequence for e in got] == [4, 5, 6]
    assert [e.thread_memory_mode_updated.revision for e in got] == [4, 5, 6]
    # and from there on, live, no duplicate of 6
    stream = client.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=6))
    set_mode(client, DISABLED, 6)
    assert [e.sequence for e in take(stream, 1)] == [7]
    stream.cancel()


def test_kinds_filter(stack):
    client = stack.client()
    toggle(client, 2)
    kind = events_pb2.EVENT_KIND_THREAD_MEMORY_MODE_UPDATED
    stream = client.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=0, kinds=[kind]))
    assert [e.sequence for e in take(stream, 2)] == [1, 2]
    stream.cancel()


def test_watch_is_per_tenant(stack):
    a, b = stack.client(ADMIN_A), stack.client(ADMIN_B)
    toggle(a, 3)
    toggle(b, 1, thread_id="only-b")
    stream = b.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=0))
    got = take(stream, 1)
    stream.cancel()
    assert [(e.sequence, e.thread_memory_mode_updated.thread_id) for e in got] == [(1, "only-b")]


def test_resume_point_older_than_retention_is_out_of_range(make_stack):
    stack = make_stack(events__max_events_per_tenant=3)
    client = stack.client()
    toggle(client, 6)  # events 1..3 are compacted away
    with pytest.raises(grpc.RpcError) as e:
        take(client.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=2)), 1)
    assert e.value.code() == grpc.StatusCode.OUT_OF_RANGE
    assert reason(e.value) == "EVENTS_COMPACTED"
    stream = client.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=3))
    assert [x.sequence for x in take(stream, 3)] == [4, 5, 6]
    stream.cancel()


def test_resume_point_past_the_head_is_out_of_range_naming_the_head(stack):
    """A watcher resuming from a sequence this log never reached (its database restored from
    an older backup) is told so, instead of waiting silently and skipping the events that
    take those sequence numbers again."""
    client = stack.client()
    toggle(client, 3)
    with pytest.raises(grpc.RpcError) as e:
        take(client.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=9), timeout=10), 1)
    assert e.value.code() == grpc.StatusCode.OUT_OF_RANGE
    assert reason(e.value) == "RESUME_POINT_AHEAD"
    assert metadata_of(e.value) == {"head_sequence": "3"}
    # At the head itself, the watch waits for the next event.
    stream = client.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=3))
    toggle(client, 1, thread_id="t2")
    assert [x.sequence for x in take(stream, 1)] == [4]
    stream.cancel()


def test_slow_subscriber_is_cut_and_can_resume(make_stack):
    stack = make_stack(events__subscriber_queue=2)
    client = stack.client()
    # A watcher with a small HTTP/2 window that stops reading: flow control stalls the
    # gateway's writes, its queue of 2 fills, and the watcher is cut off.
    slow = Client(
        stack.address,
        ADMIN_A.token,
        options=[("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", 1024)],
    )
    stream = slow.WatchEvents(events_pb2.WatchEventsRequest(after_sequence=0), timeout=60)
    for i in range(10):
        toggle(client, 30, thread_id=f"t{i}")
    seen, error = [], None
    try:
        for item in stream:
            seen.append(item.event.sequence)
    except grpc.RpcError as e:
        error = e
    slow.close()
    assert error is not None and error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error
    assert reason(error) == "SUBSCRIBER_TOO_SLOW"
    assert 0 < len(seen) < 300
    assert seen == list(range(1, len(seen) + 1))  # what arrived was in order, no gap
    # Resuming replays the rest as fast as the gateway reads it, so a queue of 2 may cut
    # the watcher again; each cut delivers what was queued first, so resuming progresses.
    rest: list[int] = []
    for _ in range(300):
        resumed = client.WatchEvents(
            events_pb2.WatchEventsRequest(after_sequence=(rest or seen)[-1]), timeout=60
        )
        try:
            for item in resumed:
                rest.append(item.event.sequence)
                if len(seen) + len(rest) == 300:
                    break
        except grpc.RpcError as e:
            assert reason(e) == "SUBSCRIBER_TOO_SLOW", e
        resumed.cancel()
        if len(seen) + len(rest) == 300:
            break
    assert rest == list(range(seen[-1] + 1, 301))


def test_unknown_event_kind_is_invalid(stack):
    with pytest.raises(grpc.RpcError) as e:
        take(stack.client().WatchEvents(events_pb2.WatchEventsRequest(kinds=[99])), 1)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and reason(e.value) == "INVALID_FIELD"


def test_modes_enum_names_are_stable():
    assert common_pb2.MemoryMode.Name(1) == "MEMORY_MODE_ENABLED"

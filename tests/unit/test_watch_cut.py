"""A watcher cut off for falling a full queue behind still gets the events queued before
the cut, so resuming from the last one it saw always progresses."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from agentmem.contract.errors import AgentmemError, Reason
from agentmem.v1 import events_pb2
from protocol_svc.watch import watch

QUEUE = 2


def burst(
    request: events_pb2.WatchEventsRequest, connected: Callable[[], None]
) -> AsyncIterator[events_pb2.Event]:
    async def events() -> AsyncIterator[events_pb2.Event]:
        connected()
        for seq in range(request.after_sequence + 1, 101):
            yield events_pb2.Event(sequence=seq)  # back to back: faster than any reader

    return events()


async def read_until_cut(after: int) -> tuple[list[int], AgentmemError | None]:
    seen: list[int] = []
    stream = watch(
        events_pb2.WatchEventsRequest(after_sequence=after),
        burst,
        queue_size=QUEUE,
        reconnect_for=1.0,
    )
    try:
        async for event in stream:
            seen.append(event.sequence)
            await asyncio.sleep(0)  # lets the pump run ahead between reads
    except AgentmemError as e:
        return seen, e
    return seen, None


def test_a_cut_delivers_the_queued_events_first_and_resuming_reaches_the_end() -> None:
    seen: list[int] = []
    cuts = 0
    while len(seen) < 100:
        got, error = asyncio.run(read_until_cut(seen[-1] if seen else 0))
        assert len(got) >= QUEUE or len(seen) + len(got) == 100  # progress at every cut
        seen += got
        if error is not None:
            assert error.reason is Reason.SUBSCRIBER_TOO_SLOW
            cuts += 1
        assert cuts <= 100
    assert cuts >= 1
    assert seen == list(range(1, 101))


@pytest.mark.parametrize("queue_size", [1, 4])
def test_a_reader_that_never_reads_is_cut_after_a_queue_of_events(queue_size: int) -> None:
    async def first_then_stall() -> tuple[list[int], AgentmemError | None]:
        stream = watch(
            events_pb2.WatchEventsRequest(), burst, queue_size=queue_size, reconnect_for=1.0
        )
        seen: list[int] = []
        try:
            seen.append((await anext(stream)).sequence)
            await asyncio.sleep(0)  # the reader is away while the burst arrives
            async for event in stream:
                seen.append(event.sequence)
        except AgentmemError as e:
            return seen, e
        return seen, None

    seen, error = asyncio.run(first_then_stall())
    assert error is not None and error.reason is Reason.SUBSCRIBER_TOO_SLOW
    assert seen == list(range(1, len(seen) + 1)) and 0 < len(seen) <= queue_size + 1

"""An append of one turn to a BEAM session, timed: AppendMessages p50 / p99 on the chat's
last stored conversation, each call the next revision of the one before (compare-and-swap),
its turns the chat's own messages in order (their real lengths), next to the two-hop echo
floor (target: p50 at most 3x the echo's).

Part of `make bench BENCH_ARGS="--only beam"` (`bench.beam` calls `append_latency` after its
chats are stored); alone, on one chat, lexical:

    python -m bench.append_run --chat 1 --appends 200
"""

from __future__ import annotations

from typing import Any

from agentmem.client import connect
from agentmem.v1 import sources_pb2
from bench.common import timed

TARGET_ECHO_RATIO = 3.0
APPENDS = 200  # of the chat's own turns: the session stays under 1,000,000 characters


def append_latency(
    address: str, token: str, source_id: str, turns: list[dict], n: int = APPENDS
) -> dict[str, float]:
    """`n` appends of one turn each to `source_id` (at revision 1), back to back (ten more
    first, untimed)."""
    revision = [1]
    with connect(address, token) as client:

        def one(i: int) -> None:
            turn = turns[i % len(turns)]
            r = client.AppendMessages(
                sources_pb2.AppendMessagesRequest(
                    source_id=source_id,
                    expected_revision=revision[0],
                    messages=[sources_pb2.Message(role=turn["role"], content=turn["content"])],
                ),
                timeout=60,
            )
            revision[0] = r.revision

        return timed([lambda i=i: one(i) for i in range(n)], warmup=10)


def on_chat(address: str, token: str, id_of: dict[tuple[str, int], int], chat: Any) -> dict:
    """`append_latency` on a stored chat's last conversation, with the chat's own turns."""
    source_id, held = last_source(id_of)
    turns = [m for _, batch in chat.batches for m in batch]
    return append_latency(address, token, source_id, turns) | {"session_messages": held}


def check(lat: dict[str, Any], echo_p50: float) -> tuple[bool, str]:
    """Whether p50 is within the target's multiple of the echo, and the figure."""
    ratio = lat["p50_ms"] / echo_p50 if echo_p50 else 0.0
    return ratio <= TARGET_ECHO_RATIO, f"{lat['p50_ms']} ms = {ratio:.2f}x echo"


def last_source(id_of: dict[tuple[str, int], int]) -> tuple[str, int]:
    """The chat's last stored conversation and how many messages it held."""
    source_id = next(reversed(id_of))[0]
    return source_id, sum(1 for s, _ in id_of if s == source_id)


def line(lat: dict[str, Any], echo_p50: float, label: str, held: int) -> str:
    ratio = lat["p50_ms"] / echo_p50 if echo_p50 else 0.0
    return (
        f"AppendMessages of one turn, {label}, to a stored session of {held} messages: "
        f"p50 {lat['p50_ms']} ms, p99 {lat['p99_ms']} ms ({ratio:.2f}x the two-hop echo "
        f"p50 {echo_p50} ms; target {TARGET_ECHO_RATIO:g}x)"
    )

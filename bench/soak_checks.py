"""The soak's checks, as pure functions of what the clients recorded and what the service
stored or logged afterwards (`tests/test_soak_checks.py` tests them)."""

from __future__ import annotations

import math
import threading
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentmem.client.errors import ApiError


@dataclass
class Outcomes:
    """What a soak's calls ended with, by operation and status ("op CODE[/REASON]")."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    codes: Counter[str] = field(default_factory=Counter)

    def status(self, op: str, code: str) -> None:
        with self.lock:
            self.codes[f"{op} {code}"] += 1


def error_code(e: ApiError) -> str:
    return e.code().name + (f"/{e.reason}" if e.reason else "")


@dataclass(frozen=True)
class CasOp:
    """One compare-and-swap: its real-time interval, what it expected, and its outcome
    ("ok" with the new revision, "mismatch" with the revision the server reported, or
    "unknown" when the client cannot tell whether it took effect)."""

    key: str
    start: float
    end: float
    expected: int
    outcome: str
    revision: int


def check_linearizable(ops: list[CasOp], initial: dict[str, int]) -> list[str]:
    """A compare-and-swap register whose revision goes up by one on every success.

    Linearizable iff (1) the successes' revisions are distinct and, with the in-doubt
    calls that took effect, fill initial+1..final with no gap; (2) success revisions respect real
    time (one that ended before another began has the lower revision); (3) each success
    expected the revision just before its own; (4) a mismatch reported a revision that was
    current at some point during its call: at least the highest success that ended before
    it began, and at most the highest success that began before it ended plus the in-doubt
    calls."""
    problems = []
    by_key: dict[str, list[CasOp]] = defaultdict(list)
    for op in ops:
        by_key[op.key].append(op)
    for key, key_ops in by_key.items():
        oks = sorted((o for o in key_ops if o.outcome == "ok"), key=lambda o: o.revision)
        unknown = sum(1 for o in key_ops if o.outcome == "unknown")
        revisions = [o.revision for o in oks]
        if len(set(revisions)) != len(revisions):
            problems.append(f"{key}: a revision was granted twice")
        start = initial.get(key, 0)
        top = max(revisions, default=start)
        if top - start - len(revisions) > unknown:
            problems.append(f"{key}: revisions missing beyond the in-doubt calls")
        for o in oks:
            if o.expected != o.revision - 1:
                problems.append(f"{key}: success at {o.revision} expected {o.expected}")
        for a in oks:
            for b in oks:
                if a.end < b.start and a.revision > b.revision:
                    problems.append(f"{key}: revision {a.revision} before {b.revision}")
        for m in (o for o in key_ops if o.outcome == "mismatch"):
            floor = max((o.revision for o in oks if o.end < m.start), default=start)
            ceiling = max((o.revision for o in oks if o.start < m.end), default=start) + unknown
            if not floor <= m.revision <= ceiling:
                problems.append(
                    f"{key}: mismatch reported {m.revision} not in [{floor}, {ceiling}]"
                )
    return problems


@dataclass(frozen=True)
class Ack:
    """An acknowledged turn: the conversation it went to and the revision it made (the
    conversation's first turn, stored by its insert, is revision 1)."""

    conversation: str
    revision: int


def check_turns(
    acked: Mapping[str, Ack],
    in_doubt: Mapping[str, str],
    stored: Mapping[str, Sequence[str]],
) -> list[str]:
    """Nothing acknowledged is lost: every acknowledged turn is stored in its conversation
    exactly once, at the place its revision says (revision r is the conversation's r-th
    turn, so the turns are in the order they were acknowledged), no revision was granted
    twice, and nothing is stored that was neither acknowledged nor in doubt (a call whose
    outcome the client could not know: `in_doubt` maps its turn to its conversation; such
    a turn may be stored once, or not at all). `stored`: each conversation's turn ids as
    read back, in order."""
    problems: list[str] = []
    places: dict[str, dict[str, list[int]]] = {}
    for conversation, turns in stored.items():
        where: dict[str, list[int]] = defaultdict(list)
        for i, turn in enumerate(turns):
            where[turn].append(i)
        places[conversation] = where
    granted: dict[tuple[str, int], str] = {}
    for turn, ack in sorted(acked.items(), key=lambda kv: (kv[1].conversation, kv[1].revision)):
        twin = granted.setdefault((ack.conversation, ack.revision), turn)
        if twin != turn:
            problems.append(
                f"{ack.conversation}: revision {ack.revision} acknowledged to {twin} and {turn}"
            )
        at = places.get(ack.conversation, {}).get(turn, [])
        if not at:
            problems.append(f"{ack.conversation}: turn {turn} (revision {ack.revision}) lost")
        elif len(at) > 1:
            problems.append(f"{ack.conversation}: turn {turn} stored {len(at)} times")
        elif at[0] != ack.revision - 1:
            problems.append(
                f"{ack.conversation}: turn {turn} (revision {ack.revision}) stored as turn "
                f"{at[0] + 1}"
            )
    for conversation, where in places.items():
        for turn, at in where.items():
            owner = acked.get(turn)
            if owner is not None:
                if owner.conversation != conversation:
                    problems.append(f"{conversation}: turn {turn} of {owner.conversation} stored")
                continue
            if turn not in in_doubt:
                problems.append(f"{conversation}: turn {turn} stored but never acknowledged")
            elif len(at) > 1:
                problems.append(f"{conversation}: turn {turn} (in doubt) stored {len(at)} times")
            elif in_doubt[turn] != conversation:
                problems.append(f"{conversation}: turn {turn} stored in another conversation")
    return problems


WARNING_LEVELS = ("warning", "error", "critical")


def log_problems(
    records: Sequence[Mapping[str, Any]], max_warnings: int = 5, max_repeats: int = 3
) -> list[str]:
    """A service's log holds no error loop: at most `max_warnings` lines at warning or
    above, no such line (logger and message) `max_repeats` times or more, and no failure
    to embed logged more than once."""
    loud = [r for r in records if str(r.get("level", "")).lower() in WARNING_LEVELS]
    problems = []
    if len(loud) > max_warnings:
        problems.append(f"{len(loud)} lines at warning or above (at most {max_warnings})")
    same = Counter((str(r.get("logger", "")), str(r.get("msg", ""))) for r in loud)
    for (logger, msg), n in same.most_common():
        if n >= max_repeats:
            problems.append(f"repeated {n} times: {logger}: {msg}")
    embedding = sum(
        n for (_, msg), n in same.items() if "embedding" in msg.lower() and "failed" in msg.lower()
    )
    if embedding > 1:
        problems.append(f"{embedding} failures to embed logged")
    return problems


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile `q` (0-100) of `values` (NaN when there are none)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]

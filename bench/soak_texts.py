"""What the soak's agents say: everyday turns that carry a word of their own, and probes of
meaning (a memory from the paraphrase sets, found later by its question alone).

Every turn's first word is its id (`turn_word`): a made-up word no other text holds, so a
search for it finds its conversation by words, and the stored conversation can be read back
turn by turn (`turn_ids`). The rest of a turn comes from `FILLER`, everyday words that share
no content word with any probe's question (`tests/test_soak_checks.py` checks it), so a
probe's question can find the probe's passage by meaning only.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from bench.paraphrase import PAIRS
from bench.paraphrase_heldback import HELD_BACK_V2_PAIRS

FILLER = [
    "harbour",
    "lantern",
    "kite",
    "river",
    "orchard",
    "meadow",
    "beacon",
    "compass",
    "willow",
    "ember",
    "pebble",
    "thistle",
    "granite",
    "saffron",
    "tangerine",
    "copper",
]
_SYLLABLES = ("ba", "ke", "di", "fo", "gu", "la", "me", "ni", "po", "ru")
_PREFIX = "zu"
_ID = re.compile(r"^(zu(?:ba|ke|di|fo|gu|la|me|ni|po|ru)+)\b")


def turn_word(n: int) -> str:
    """The made-up word of turn number `n` (distinct for every `n` >= 0): its digits as
    syllables after a prefix no English word starts a text with."""
    return _PREFIX + "".join(_SYLLABLES[int(d)] for d in str(n))


def turn_id(content: str) -> str | None:
    """The id word a stored message starts with, or None (a message the soak did not
    write first in a turn)."""
    m = _ID.match(content)
    return m.group(1) if m else None


def turn_ids(contents: list[str]) -> list[str]:
    """The turn ids of a conversation's stored messages, in order."""
    return [t for t in (turn_id(c) for c in contents) if t is not None]


def everyday(word: str, rng: random.Random) -> list[dict[str, str]]:
    """A user's turn and the assistant's reply, the user's starting with `word`."""
    a, b, c = rng.sample(FILLER, 3)
    return [
        {"role": "user", "content": f"{word} the {a} by the {b} and the {c}"},
        {"role": "assistant", "content": f"so the {c} and the {a}"},
    ]


@dataclass(frozen=True)
class Probe:
    """A memory said in a turn, and the question that asks for it in other words."""

    memory: str
    question: str


PROBES = [Probe(m, q) for m, q in PAIRS + HELD_BACK_V2_PAIRS]


def probe_turn(word: str, probe: Probe) -> list[dict[str, str]]:
    """A turn that says the probe's memory (after its id word), and the assistant's reply
    that takes note of it (the reply's passage, which holds both, is the one its question
    finds best: the turn's own passage also holds the message before it)."""
    return [
        {"role": "user", "content": f"{word} {probe.memory}"},
        {"role": "assistant", "content": f"Noted: {probe.memory}"},
    ]


def probe_pool(probes: list[Probe], seed: int) -> list[Probe]:
    """Every probe once, in an order of the seed's (each tenant draws from its own pool: a
    question then has one answer in its tenant)."""
    pool = list(probes)
    random.Random(seed).shuffle(pool)
    return pool

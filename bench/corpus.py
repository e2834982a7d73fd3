"""Synthetic natural-language memories for the benchmark, and a bulk loader.

Vocabulary: English function words (as frequent as in real text) plus 40,000 pseudo-words
whose frequencies follow a Zipf law (s = 1.05), so a few content words are very common and
most are rare, as in real memories. Sentences are 10 to 22 words; queries are questions built
from the same distribution ("what did I say about the … and …?"), so common words make
OR queries expensive exactly as natural-language questions do.

The loader writes sources and their index entries through the runtime's own repositories,
in large transactions (a fixture import: no per-memory events or receipts).
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy import text

from agentmem.core.config import Storage
from runtime_svc.domain import eligibility
from runtime_svc.domain.ids import new_id
from runtime_svc.domain.sources import (
    Body,
    Classification,
    Provenance,
    SaveIntent,
    Source,
    SourceKind,
    Status,
)
from runtime_svc.storage import migrate
from runtime_svc.storage.db import open_database
from runtime_svc.storage.search_index import SHARDS, shard_name
from runtime_svc.storage.unit_of_work import UnitOfWork

_FUNCTION_WORDS = """
    the a to and of i in my it that was for on with is at we me but so this had have be our
    you she he they her his about from by just
"""
FUNCTION_WORDS = _FUNCTION_WORDS.split()
VOCABULARY_SEED = 7
CONTENT_WORDS = 40_000
ZIPF_S = 1.05
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


def _vocabulary(rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < CONTENT_WORDS:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


class Language:
    """One vocabulary (always the same), sampled with its own seed."""

    def __init__(self, seed: int = 7) -> None:
        vocabulary_rng = random.Random(VOCABULARY_SEED)
        self.words = _vocabulary(vocabulary_rng)
        vocabulary_rng.shuffle(self.words)
        self.rng = random.Random(seed)
        weights = [1 / (rank**ZIPF_S) for rank in range(1, CONTENT_WORDS + 1)]
        self.cumulative = list(itertools.accumulate(weights))

    def content_word(self) -> str:
        x = self.rng.random() * self.cumulative[-1]
        return self.words[bisect.bisect_left(self.cumulative, x)]

    def sentence(self) -> str:
        parts = []
        for _ in range(self.rng.randint(10, 22)):
            parts.append(
                self.rng.choice(FUNCTION_WORDS) if self.rng.random() < 0.45 else self.content_word()
            )
        return parts[0].capitalize() + " " + " ".join(parts[1:]) + "."

    def question(self) -> str:
        a, b, c = (self.content_word() for _ in range(3))
        return self.rng.choice(
            [
                f"What did I say about the {a} and the {b}?",
                f"When was the {a} {b} with {c}?",
                f"Do you remember my {a} from the {b}?",
                f"Tell me about {a}, {b} and {c}.",
            ]
        )


def memories(lang: Language, n: int) -> Iterator[str]:
    for _ in range(n):
        yield lang.sentence()


def load(
    db_path: Path, tenants: list[str], per_tenant: int, *, seed: int = 7, batch: int = 5000
) -> None:
    """Creates the database and loads `per_tenant` memories into each tenant."""
    db = open_database(Storage(url=f"sqlite:///{db_path}"))
    migrate.upgrade(db.writer)
    uow = UnitOfWork(db)
    lang = Language(seed)
    provenance = Provenance("bench-loader", "service", "import", "")
    for tenant in tenants:
        left = per_tenant
        while left:
            n = min(batch, left)
            left -= n
            batch_sources = [
                Source(
                    new_id("src"),
                    1,
                    SourceKind.MEMORY,
                    Classification.ACTIVE,
                    Status.ACTIVE,
                    "",
                    Body(content=text),
                    provenance,
                    SaveIntent(),
                    {},
                    1,
                    1,
                )
                for text in memories(lang, n)
            ]
            with uow.write(tenant) as tx:
                pks = tx.sources.add_many(batch_sources)
                tx.index.put_many(
                    [
                        (pk, s.body.generated_form(), True)
                        for pk, s in zip(pks, batch_sources, strict=True)
                    ]
                )
                tx.counters.indexed_docs += n
    with db.writer.begin() as conn:  # merge each shard's segments, as a long-lived index would be
        for shard in range(SHARDS):
            name = shard_name(shard)
            conn.exec_driver_sql(f"INSERT INTO {name}({name}) VALUES ('optimize')")
    db.dispose()


def make_cold(db_path: Path, tenant: str, fraction: float, *, seed: int = 11) -> int:
    """Marks about `fraction` of the tenant's sources cold and the rest active (revision + 1
    and index scope updated for each change, as SetSourceClassification does); returns how
    many are cold."""
    db = open_database(Storage(url=f"sqlite:///{db_path}"))
    uow = UnitOfWork(db)
    rng = random.Random(seed)
    with uow.write(tenant) as tx:
        rows = tx.conn.execute(
            text("SELECT pk, classification FROM sources WHERE tenant_id = :t ORDER BY pk"),
            {"t": tenant},
        ).all()
        cold = {pk for pk, _ in rows if rng.random() < fraction}
        for pk, classification in rows:
            want = Classification.COLD if pk in cold else Classification.ACTIVE
            if want.value == classification:
                continue
            tx.conn.execute(
                text(
                    "UPDATE sources SET classification = :c, revision = revision + 1 WHERE pk = :pk"
                ),
                {"c": want.value, "pk": pk},
            )
            row = {
                "classification": want.value,
                "status": "active",
                "revoked_at_us": 0,
                "assent_state": "",
                "assent_expires_at_us": 0,
            }
            tx.index.set_eligible(pk, eligibility.eligible_regardless_of_time(row))
    db.dispose()
    return len(cold)

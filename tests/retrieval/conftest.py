"""The retrieval package's fast layer: an in-memory SQLite database (schema from the models, no
server), tenants filled through the storage writers, and a brute-force reference ranking over
a tenant's eligible entries computed from the domain's pure functions alone."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import pytest
from sqlalchemy import event, insert
from sqlalchemy.pool import StaticPool

from runtime_svc.domain import entry_keys, lexical, passages
from runtime_svc.domain.ids import new_id
from runtime_svc.domain.passages import Window
from runtime_svc.domain.sources import (
    Body,
    Classification,
    Message,
    Provenance,
    SaveIntent,
    Source,
    SourceKind,
    Status,
)
from runtime_svc.domain.text import Term
from runtime_svc.retrieval.embedders.model import signature
from runtime_svc.retrieval.hits import Hit
from runtime_svc.retrieval.indexer.vector_store import encode
from runtime_svc.storage import sqlite_vectors
from runtime_svc.storage.db import Database, sqlite_engine
from runtime_svc.storage.models import Base, MemoryVectorRow
from runtime_svc.storage.unit_of_work import UnitOfWork

MODEL = "test-model"


@pytest.fixture(scope="module")
def database() -> Iterator[Database]:
    """One in-memory database for a module's tests (each example uses a tenant of its own):
    one connection, shared by the writer and the readers, with sqlite-vec loaded."""
    engine = sqlite_engine(
        "sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False}
    )
    event.listen(engine, "connect", lambda dbapi, _record: sqlite_vectors.load(dbapi))
    Base.metadata.create_all(engine)
    db = Database(writer=engine, reader=engine)
    yield db
    db.dispose()


@dataclass(frozen=True)
class Doc:
    """A memory of a generated tenant: whole text, or a conversation (`messages`)."""

    words: tuple[str, ...] = ()
    messages: tuple[tuple[str, ...], ...] = ()
    eligible: bool = True


@dataclass
class Tenant:
    """What a tenant holds: each source's entries (key -> text) and whether it is eligible."""

    tenant_id: str
    source_ids: dict[int, str] = field(default_factory=dict)  # pk -> source id
    entries: dict[int, dict[int, str]] = field(default_factory=dict)  # pk -> key -> text
    eligible: dict[int, bool] = field(default_factory=dict)


def _source(doc: Doc) -> Source:
    if doc.messages:
        body = Body(
            messages=tuple(
                Message("user" if i % 2 else "assistant", " ".join(m), "Ann" if i % 2 else "")
                for i, m in enumerate(doc.messages)
            )
        )
    else:
        body = Body(content=" ".join(doc.words))
    classification = Classification.ACTIVE if doc.eligible else Classification.COLD
    return Source(
        new_id("src"),
        1,
        SourceKind.MEMORY,
        classification,
        Status.ACTIVE,
        "",
        body,
        Provenance("test", "service", "import", ""),
        SaveIntent(),
        {},
        1,
        1,
    )


def fill(uow: UnitOfWork, tenant_id: str, docs: Sequence[Doc], window: Window) -> Tenant:
    """The tenant's sources and index entries, written as the lifecycle writes them (an
    ineligible one is written eligible, then made cold, as a classification does)."""
    tenant = Tenant(tenant_id)
    with uow.write(tenant_id) as tx:
        made = [_source(d) for d in docs]
        pks = tx.sources.add_many(made)
        for pk, doc, source in zip(pks, docs, made, strict=True):
            tenant.source_ids[pk] = source.source_id
            tenant.eligible[pk] = doc.eligible
            if source.body.messages:
                found = passages.derive(source.body.messages, window)
                tx.index.put_passages(pk, found, eligible=True, revision=1)
                keyed = {entry_keys.entry_key(pk, p.range): p.text for p in found}
            else:
                tx.index.put(pk, source.body.generated_form(), eligible=True, revision=1)
                keyed = {entry_keys.entry_key(pk): source.body.generated_form()}
            tenant.entries[pk] = keyed
            if not doc.eligible:
                tx.index.set_eligible(pk, False, 1)
    return tenant


@dataclass(frozen=True)
class Expected:
    source_id: str
    score: float
    key: int


def reference(tenant: Tenant, terms: Sequence[Term], limit: int, grouped: bool) -> list[Expected]:
    """BM25 over the tenant's eligible entries, brute force: statistics from the eligible
    entries only, each query word's impact times idf added in stem order; best first, ties by
    source id then entry key; grouped, each source by its best entry."""
    live = {
        key: lexical.analyse(text).impacts
        for pk, keyed in tenant.entries.items()
        if tenant.eligible[pk]
        for key, text in keyed.items()
    }
    stems = sorted({t.stem for t in terms})
    docs = {s: sum(1 for impacts in live.values() if s in impacts) for s in stems}
    weights = [(s, lexical.idf(len(live), docs[s])) for s in stems if docs[s]]
    scored: list[Expected] = []
    for key, impacts in live.items():
        if not any(s in impacts for s, _ in weights):
            continue
        total = 0.0
        for i, (s, w) in enumerate(weights):
            part = impacts.get(s, 0.0) * w
            total = part if i == 0 else total + part
        scored.append(Expected(tenant.source_ids[entry_keys.source_pk(key)], total, key))
    return _top(scored, limit, grouped)


def _top(scored: list[Expected], limit: int, grouped: bool) -> list[Expected]:
    if grouped:
        best: dict[str, Expected] = {}
        for e in scored:
            held = best.get(e.source_id)
            if held is None or (-e.score, e.key) < (-held.score, held.key):
                best[e.source_id] = e
        scored = list(best.values())
    return sorted(scored, key=lambda e: (-e.score, e.source_id, e.key))[:limit]


def vector_reference(
    tenant: Tenant,
    vectors: dict[int, Sequence[float]],
    query: Sequence[float],
    limit: int,
    grouped: bool,
) -> list[Expected]:
    """Cosine similarity over the eligible entries' vectors (by entry key), brute force."""

    def cos(a: Sequence[float], b: Sequence[float]) -> float:
        dot = sum(x * y for x, y in zip(a, b, strict=True))
        return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))

    scored = [
        Expected(tenant.source_ids[entry_keys.source_pk(key)], cos(v, query), key)
        for key, v in vectors.items()
        if tenant.eligible[entry_keys.source_pk(key)]
    ]
    return _top(scored, limit, grouped)


def seen(hits: Sequence[Hit]) -> list[Expected]:
    return [Expected(h.source_id, h.score, h.key) for h in hits]


def store_vectors(uow: UnitOfWork, tenant: Tenant, vectors: Mapping[int, Sequence[float]]) -> None:
    """The tenant's vectors of `MODEL`, by entry key, stored as the indexer stores them."""
    with uow.write(tenant.tenant_id) as tx:
        rows = [
            {
                "source_pk": entry_keys.source_pk(key),
                "passage": entry_keys.passage(key),
                "model_id": MODEL,
                "tenant_id": tenant.tenant_id,
                "source_id": tenant.source_ids[entry_keys.source_pk(key)],
                "source_revision": 1,
                "dimension": len(v),
                "embedding": encode(tx.conn, list(v)),
                "signature": signature(list(v)),
                "created_at_us": 1,
            }
            for key, v in vectors.items()
        ]
        tx.conn.execute(insert(MemoryVectorRow.__table__), rows)

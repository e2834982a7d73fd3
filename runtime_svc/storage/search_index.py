"""The full-text search index (SQLite FTS5), with the eligibility filter in the same query.

One index row per source that has an index entry; its rowid is the source's internal pk.
`body` holds the generated form. `scope` holds tokens that carry the filter inside the
index: the tenant's token on every row, and the tenant's eligibility token while the source
is eligible. A scoped query intersects the query terms with the scope token inside FTS5, so
cost follows the tenant's size, not the whole index. Every query, scoped or not, joins the
source row and applies the tenant check and the full eligibility predicate (including what
depends on the time, such as an assent's expiry) in the same statement, before ranking and
LIMIT: top k is always taken among eligible sources, and the tokens only ever narrow what
the predicate allows. (A token shared by most of the index narrows nothing and costs a
pass over its postings when FTS5 computes bm25 statistics: the caller scopes only where it
is selective.)
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Column,
    Connection,
    Integer,
    MetaData,
    Table,
    Text,
    bindparam,
    delete,
    func,
    insert,
    literal_column,
    select,
    update,
)

from runtime_svc.domain.text import Term
from runtime_svc.storage import eligibility_sql
from runtime_svc.storage.sources import sources

# The index is split into shards by tenant: FTS5 computes bm25 statistics with a pass over
# each query term's postings in the whole table, so a tenant's query pays for the postings
# of its shard only. Changing the number of shards needs a migration that rebuilds them.
SHARDS = 16


def _set_indexed_revision(conn: Connection, tenant_id: str, pks: list[int], revision: int) -> None:
    """The source row's record of which revision its index entry was derived from (0: none).
    Written here only: the index is the one truth of what is indexed."""
    if pks:
        conn.execute(
            update(sources)
            .where(sources.c.tenant_id == tenant_id, sources.c.pk.in_(pks))
            .values(indexed_revision=revision)
        )


def shard_of(tenant_id: str) -> int:
    return int(hashlib.sha256(tenant_id.encode()).hexdigest()[:8], 16) % SHARDS


def shard_name(shard: int) -> str:
    return f"memory_index_{shard:02d}"


@dataclass(frozen=True)
class _Shard:
    table: Table
    vocab: Table
    fts: Any  # the table name as an SQL expression, for MATCH and bm25()
    bm25: Any
    insert: Any


def _shard(i: int) -> _Shard:
    meta = MetaData()
    name = shard_name(i)
    table = Table(
        name,
        meta,
        Column("rowid", Integer, primary_key=True),
        Column("body", Text),
        Column("scope", Text),
    )
    vocab = Table(f"{name}_vocab", meta, Column("term", Text), Column("doc", Integer))
    fts = literal_column(name)
    # bm25 weights per column: body counts, scope tokens do not.
    return _Shard(table, vocab, fts, func.bm25(fts, 1.0, 0.0), insert(table))


_SHARDS = [_shard(i) for i in range(SHARDS)]


@dataclass(frozen=True)
class Hit:
    pk: int
    source_id: str
    revision: int
    score: float  # higher is better
    text: str  # the generated form
    save_intent: str


@dataclass(frozen=True)
class MatchRow:
    source_id: str
    revision: int
    classification: str
    state: str
    score: float


class SearchIndex:
    def __init__(self, conn: Connection, tenant_id: str) -> None:
        self.conn = conn
        self.tenant_id = tenant_id
        digest = hashlib.sha256(tenant_id.encode()).hexdigest()[:24]
        self._tenant_token, self._eligible_token = f"tt{digest}", f"te{digest}"
        self.shard = shard_of(tenant_id)
        self._s = _SHARDS[self.shard]

    def _scope(self, eligible: bool) -> str:
        return f"{self._tenant_token} {self._eligible_token}" if eligible else self._tenant_token

    def put(self, pk: int, body: str, *, eligible: bool, revision: int) -> None:
        self.conn.execute(
            self._s.insert, {"rowid": pk, "body": body, "scope": self._scope(eligible)}
        )
        _set_indexed_revision(self.conn, self.tenant_id, [pk], revision)

    def put_many(self, rows: list[tuple[int, str, bool]], revision: int = 1) -> None:
        """Bulk import: (pk, body, eligible) per source, all at `revision`."""
        self.conn.execute(
            self._s.insert,
            [
                {"rowid": pk, "body": body, "scope": self._scope(eligible)}
                for pk, body, eligible in rows
            ],
        )
        _set_indexed_revision(self.conn, self.tenant_id, [pk for pk, _, _ in rows], revision)

    def remove(self, pk: int) -> bool:
        """Deletes the entry (FTS5 secure-delete: its words leave the index's pages too);
        whether there was one."""
        removed = self.conn.execute(delete(self._s.table).where(self._s.table.c.rowid == pk))
        _set_indexed_revision(self.conn, self.tenant_id, [pk], 0)
        return removed.rowcount > 0

    def has(self, pk: int) -> bool:
        stmt = select(self._s.table.c.rowid).where(self._s.table.c.rowid == pk)
        return self.conn.execute(stmt).first() is not None

    def set_eligible(self, pk: int, eligible: bool, revision: int) -> None:
        self.conn.execute(
            update(self._s.table)
            .where(self._s.table.c.rowid == pk)
            .values(scope=self._scope(eligible))
        )
        _set_indexed_revision(self.conn, self.tenant_id, [pk], revision)

    def retrievable(self, pk: int, now_us: int) -> bool:
        """Whether a search whose words match this entry would return it: the ranked
        query's own filter (eligibility token, tenant, the full predicate) on this row."""
        stmt = (
            select(sources.c.pk)
            .select_from(self._s.table.join(sources, sources.c.pk == self._s.table.c.rowid))
            .where(
                self._s.fts.op("MATCH")(bindparam("match", f'scope : "{self._eligible_token}"')),
                self._s.table.c.rowid == pk,
                sources.c.tenant_id == self.tenant_id,
                eligibility_sql.eligible(sources.c, bindparam("now_us", now_us)),
            )
        )
        return self.conn.execute(stmt).first() is not None

    def _match(self, terms: Sequence[Term], *, eligible_only: bool, scoped: bool) -> str:
        words = " OR ".join(f'"{t.word}"' for t in terms)
        if not scoped:
            return f"body : ({words})"
        scope = self._eligible_token if eligible_only else self._tenant_token
        return f'scope : "{scope}" AND body : ({words})'

    def _scored(self, terms: Sequence[Term], *, eligible_only: bool, scoped: bool):  # type: ignore[no-untyped-def]
        """The index's matches with their bm25 score, computed inside FTS5 and materialized,
        so the query always starts from the (scope-narrowed) matches and then joins the few
        source rows it needs, whatever the planner thinks of the tenant's size."""
        return (
            select(self._s.table.c.rowid.label("pk"), (-self._s.bm25).label("score"))
            .where(
                self._s.fts.op("MATCH")(
                    bindparam(
                        "match", self._match(terms, eligible_only=eligible_only, scoped=scoped)
                    )
                )
            )
            .cte("scored")
            .prefix_with("MATERIALIZED")
        )

    def search(self, terms: Sequence[Term], limit: int, now_us: int, *, scoped: bool) -> list[Hit]:
        """Top `limit` eligible sources by bm25, ties broken by source id, with their text."""
        if not terms:
            return []
        scored = self._scored(terms, eligible_only=True, scoped=scoped)
        stmt = (
            select(
                sources.c.pk,
                sources.c.source_id,
                sources.c.revision,
                scored.c.score,
                sources.c.generated_form,
                sources.c.save_intent,
            )
            .select_from(scored.join(sources, sources.c.pk == scored.c.pk))
            .where(
                sources.c.tenant_id == self.tenant_id,
                eligibility_sql.eligible(sources.c, bindparam("now_us", now_us)),
            )
            .order_by(scored.c.score.desc(), sources.c.source_id)
            .limit(limit)
        )
        return [Hit(*r) for r in self.conn.execute(stmt)]

    def matches(
        self, terms: Sequence[Term], now_us: int, cap: int, *, scoped: bool
    ) -> tuple[list[MatchRow], int]:
        """Every indexed source of the tenant matching the terms, whatever its state: up to
        `cap` of them (eligible ones first, best first), and how many there are."""
        if not terms:
            return [], 0
        scored = self._scored(terms, eligible_only=False, scoped=scoped)
        state = eligibility_sql.state(sources.c, bindparam("now_us", now_us)).label("state")
        stmt = (
            select(
                sources.c.source_id,
                sources.c.revision,
                sources.c.classification,
                state,
                scored.c.score,
                func.count().over().label("total"),
            )
            .select_from(scored.join(sources, sources.c.pk == scored.c.pk))
            .where(sources.c.tenant_id == self.tenant_id)
            .order_by(state != "eligible", scored.c.score.desc(), sources.c.source_id)
            .limit(cap)
        )
        rows = self.conn.execute(stmt).all()
        return [MatchRow(*r[:5]) for r in rows], (rows[0].total if rows else 0)

    def doc_freq(self, stem: str) -> int:
        """In how many rows of the tenant's shard (all its tenants) the stem occurs."""
        return (
            self.conn.execute(
                select(self._s.vocab.c.doc).where(self._s.vocab.c.term == stem)
            ).scalar_one_or_none()
            or 0
        )

"""The search index on PostgreSQL: `tsvector` of the generated form with a GIN index, the
eligibility predicate and the tenant check in the same ranked statement.

The index entry is the source row itself (`indexed_revision > 0` says it has one), so
put/remove/set_eligible only keep that provenance; PostgreSQL's `english` configuration
(Snowball stemmer, its own stop list) stands where SQLite uses Porter and ours."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, bindparam, func, literal_column, select

from runtime_svc.domain.text import Term
from runtime_svc.storage import eligibility_sql
from runtime_svc.storage.search_index import Hit, MatchRow, _set_indexed_revision
from runtime_svc.storage.sources import sources

_VECTOR = func.to_tsvector(literal_column("'english'"), sources.c.generated_form)


class PgSearchIndex:
    shard = 0

    def __init__(self, conn: Connection, tenant_id: str) -> None:
        self.conn = conn
        self.tenant_id = tenant_id

    def put(self, pk: int, body: str, *, eligible: bool, revision: int) -> None:
        """The row's generated form is what is indexed: the entry is `indexed_revision`."""
        _set_indexed_revision(self.conn, self.tenant_id, [pk], revision)

    def put_many(self, rows: list[tuple[int, str, bool]], revision: int = 1) -> None:
        _set_indexed_revision(self.conn, self.tenant_id, [pk for pk, _, _ in rows], revision)

    def set_eligible(self, pk: int, eligible: bool, revision: int) -> None:
        """Eligibility is read from the row by the ranked query itself."""
        _set_indexed_revision(self.conn, self.tenant_id, [pk], revision)

    def remove(self, pk: int) -> bool:
        """Whether there was an entry (asked before it is cleared: the column is the entry)."""
        had = self.has(pk)
        _set_indexed_revision(self.conn, self.tenant_id, [pk], 0)
        return had

    def has(self, pk: int) -> bool:
        return bool(
            self.conn.execute(
                select(sources.c.indexed_revision).where(
                    sources.c.pk == pk, sources.c.tenant_id == self.tenant_id
                )
            ).scalar_one_or_none()
        )

    def retrievable(self, pk: int, now_us: int) -> bool:
        stmt = select(sources.c.pk).where(
            sources.c.pk == pk,
            sources.c.tenant_id == self.tenant_id,
            sources.c.indexed_revision > 0,
            eligibility_sql.eligible(sources.c, bindparam("now_us", now_us)),
        )
        return self.conn.execute(stmt).first() is not None

    def _query(self, terms: Sequence[Term]):  # type: ignore[no-untyped-def]
        text = " | ".join(t.word for t in terms)
        return func.to_tsquery(literal_column("'english'"), bindparam("q", text))

    def search(
        self, terms: Sequence[Term], limit: int, now_us: int, *, scoped: bool = True
    ) -> list[Hit]:
        if not terms:
            return []
        query = self._query(terms)
        score = func.ts_rank(_VECTOR, query)
        stmt = (
            select(
                sources.c.pk,
                sources.c.source_id,
                sources.c.revision,
                score.label("score"),
                sources.c.generated_form,
                sources.c.save_intent,
            )
            .where(
                sources.c.tenant_id == self.tenant_id,
                sources.c.indexed_revision > 0,
                _VECTOR.op("@@")(query),
                eligibility_sql.eligible(sources.c, bindparam("now_us", now_us)),
            )
            .order_by(score.desc(), sources.c.source_id)
            .limit(limit)
        )
        return [Hit(*r) for r in self.conn.execute(stmt)]

    def matches(
        self, terms: Sequence[Term], now_us: int, cap: int, *, scoped: bool = True
    ) -> tuple[list[MatchRow], int]:
        if not terms:
            return [], 0
        query = self._query(terms)
        score = func.ts_rank(_VECTOR, query)
        state = eligibility_sql.state(sources.c, bindparam("now_us", now_us)).label("state")
        stmt = (
            select(
                sources.c.source_id,
                sources.c.revision,
                sources.c.classification,
                state,
                score.label("score"),
                func.count().over().label("total"),
            )
            .where(
                sources.c.tenant_id == self.tenant_id,
                sources.c.indexed_revision > 0,
                _VECTOR.op("@@")(query),
            )
            .order_by(state != "eligible", score.desc(), sources.c.source_id)
            .limit(cap)
        )
        rows = self.conn.execute(stmt).all()
        return [MatchRow(*r[:5]) for r in rows], (rows[0].total if rows else 0)

    def doc_freq(self, stem: str) -> int:
        """Not kept on PostgreSQL: every query term is searched (the GIN index prunes)."""
        return 0

"""Facts and their full-text index; eligibility comes from the source, and currency from
the fact's chain (`fact_links`), in the same query."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import (
    BindParameter,
    Column,
    ColumnElement,
    Integer,
    MetaData,
    Table,
    Text,
    and_,
    bindparam,
    delete,
    func,
    insert,
    literal_column,
    not_,
    or_,
    select,
    update,
)

from runtime_svc.domain.fact_chains import NOW, Link, Period
from runtime_svc.domain.facts import Fact, How, Span, Triple
from runtime_svc.domain.passages import Range
from runtime_svc.domain.text import Term
from runtime_svc.storage import eligibility_sql
from runtime_svc.storage.models import FactRow
from runtime_svc.storage.repositories import _Repository
from runtime_svc.storage.source_rows import sources

facts = cast(Table, FactRow.__table__)
# SQLite: rowid = facts.pk; `src` holds the source id so that a source's rows can be found
# (and purged) through the index itself, whatever happened to the facts table.
fact_index = Table(
    "fact_index",
    MetaData(),
    Column("rowid", Integer, primary_key=True),
    Column("statement", Text),
    Column("src", Text),
)
_fts: ColumnElement[Any] = literal_column("fact_index")
_INSERT_FACT = insert(facts)
_INSERT_INDEX = insert(fact_index)
_COLUMNS = (
    facts.c.fact_id,
    facts.c.subject,
    facts.c.predicate,
    facts.c.object,
    facts.c.statement,
    facts.c.confidence,
    facts.c.confidence_reason,
    facts.c.save_intent,
    facts.c.save_intent_source,
    facts.c.source_id,
    facts.c.source_revision,
    facts.c.created_at_us,
    facts.c.passage_start,
    facts.c.passage_end,
    facts.c.sentence_start,
    facts.c.sentence_end,
    facts.c.valid_from_us,
    facts.c.ends,
    facts.c.retracted_at_us,
    facts.c.opens,
    facts.c.valid_to_us,
    facts.c.superseded_by,
    facts.c.superseded_by_source,
    facts.c.supersedes,
)


class FactRepository(_Repository):
    @property
    def _sqlite(self) -> bool:
        return self.conn.dialect.name == "sqlite"

    def add(self, fact: Fact, object_key: str) -> None:
        """A new fact (outside any chain until the chain writer links it); `object_key`:
        its attribute's value key."""
        t = fact.triple
        inserted = self.conn.execute(
            _INSERT_FACT,
            {
                "tenant_id": self.tenant_id,
                "fact_id": fact.fact_id,
                "source_id": fact.source_id,
                "source_revision": fact.source_revision,
                "subject": t.subject,
                "predicate": t.predicate,
                "object": t.object,
                "statement": t.statement,
                "confidence": fact.confidence,
                "confidence_reason": fact.confidence_reason,
                "save_intent": fact.save_intent,
                "save_intent_source": fact.save_intent_source,
                "created_at_us": fact.created_at_us,
                "passage_start": fact.passage.start if fact.passage else None,
                "passage_end": fact.passage.end if fact.passage else None,
                "sentence_start": t.span.start if t.span else None,
                "sentence_end": t.span.end if t.span else None,
                "valid_from_us": fact.valid_from_us,
                "ends": int(t.ends),
                "object_key": object_key,
            },
        ).inserted_primary_key
        assert inserted is not None  # an INSERT of one row
        pk = inserted[0]
        if self._sqlite:  # PostgreSQL indexes the statement column itself (GIN)
            self.conn.execute(
                _INSERT_INDEX, {"rowid": pk, "statement": t.statement, "src": fact.source_id}
            )

    def get(self, fact_id: str) -> Fact | None:
        stmt = select(*_COLUMNS).where(
            facts.c.tenant_id == self.tenant_id, facts.c.fact_id == fact_id
        )
        row = self.conn.execute(stmt).one_or_none()
        return None if row is None else _fact(row)

    def retract(self, fact_id: str, at_us: int) -> None:
        """Marks the fact wrong (RetractFact); it stays a derived record of its source."""
        self.conn.execute(
            update(facts)
            .where(facts.c.tenant_id == self.tenant_id, facts.c.fact_id == fact_id)
            .values(retracted_at_us=at_us)
        )

    def ids_for_source(self, source_id: str) -> list[tuple[int, str]]:
        return [
            (r.pk, r.fact_id)
            for r in self.conn.execute(
                select(facts.c.pk, facts.c.fact_id).where(
                    facts.c.tenant_id == self.tenant_id, facts.c.source_id == source_id
                )
            )
        ]

    def purge_for_source(self, source_id: str) -> list[str]:
        """Deletes the source's facts (their index rows are `purge_index_rows`)."""
        found = self.ids_for_source(source_id)
        if found:
            self.conn.execute(delete(facts).where(facts.c.pk.in_([pk for pk, _ in found])))
        return [fact_id for _, fact_id in found]

    def index_rows_for_source(self, source_id: str) -> list[int]:
        """The full-text rows derived from the source's facts (on PostgreSQL the GIN index
        entries of the fact rows themselves)."""
        if not self._sqlite:
            return [pk for pk, _ in self.ids_for_source(source_id)]
        stmt = select(fact_index.c.rowid).where(
            _fts.op("MATCH")(bindparam("src", _src_match(source_id)))
        )
        return list(self.conn.execute(stmt).scalars())

    def purge_index_rows(self, source_id: str) -> None:
        if self._sqlite:
            rows = self.index_rows_for_source(source_id)
            if rows:
                self.conn.execute(delete(fact_index).where(fact_index.c.rowid.in_(rows)))

    def search(
        self,
        terms: Sequence[Term] | None,
        *,
        state: str,
        save_intent: str,
        save_intent_source: str,
        now_us: int,
        limit: int,
        source_ids: Sequence[str] | None = None,
        period: Period = NOW,
    ) -> list[Fact]:
        """Facts of the tenant whose source is in `state` ("eligible", "ineligible", "all"),
        best match first (or most confident first without terms); with `source_ids`, only
        facts of those sources. An eligible source's facts are those of the `period` (by
        default the current ones); retracted facts and ends of values are never returned."""
        joined = facts.join(
            sources,
            and_(
                sources.c.tenant_id == facts.c.tenant_id, sources.c.source_id == facts.c.source_id
            ),
        )
        order = [facts.c.confidence.desc(), facts.c.created_at_us, facts.c.fact_id]
        if period.history:  # each attribute's intervals in time order (ties: stored order)
            order = [
                facts.c.subject,
                facts.c.predicate,
                facts.c.object_key,
                facts.c.valid_from_us,
                facts.c.pk,
            ]
        if terms and not self._sqlite:
            vector = func.to_tsvector(literal_column("'english'"), facts.c.statement)
            query = func.to_tsquery(
                literal_column("'english'"), bindparam("q", " | ".join(t.word for t in terms))
            )
            order = [func.ts_rank(vector, query).desc(), facts.c.fact_id]
        elif terms:
            words = " OR ".join(f'"{t.word}"' for t in terms)
            scored = (
                select(fact_index.c.rowid.label("pk"), (-func.bm25(_fts, 1.0, 0.0)).label("score"))
                .where(_fts.op("MATCH")(bindparam("match", f"statement : ({words})")))
                .cte("fact_scored")
                .prefix_with("MATERIALIZED")
            )
            joined = joined.join(scored, scored.c.pk == facts.c.pk)
            order = [scored.c.score.desc(), facts.c.fact_id]
        stmt = select(*_COLUMNS).select_from(joined).where(facts.c.tenant_id == self.tenant_id)
        if terms and not self._sqlite:
            stmt = stmt.where(vector.op("@@")(query))
        eligible = eligibility_sql.eligible(sources.c, bindparam("now_us", now_us))
        stmt = stmt.where(facts.c.retracted_at_us == 0, facts.c.ends == 0)
        in_period = and_(eligible, _in(period))
        if state == "eligible":
            stmt = stmt.where(in_period)
        elif state == "ineligible":
            stmt = stmt.where(not_(eligible))
        else:
            stmt = stmt.where(or_(in_period, not_(eligible)))
        if source_ids is not None:
            stmt = stmt.where(facts.c.source_id.in_(list(source_ids)))
        if save_intent:
            stmt = stmt.where(facts.c.save_intent == save_intent)
        if save_intent_source:
            stmt = stmt.where(facts.c.save_intent_source == save_intent_source)
        return [_fact(r) for r in self.conn.execute(stmt.order_by(*order).limit(limit))]


def _src_match(source_id: str) -> str:
    """An FTS5 query for the rows of one source: its id as a phrase in the `src` column."""
    return 'src : "' + source_id.replace('"', "") + '"'


def _in(period: Period) -> ColumnElement[bool]:
    """The facts of a chain that a read of `period` returns (`fact_chains.current_at`)."""
    opened = facts.c.opens == 1
    if period.history:
        if not period.as_of_us:
            return opened
        return and_(opened, facts.c.valid_from_us <= bindparam("as_of_us", period.as_of_us))
    if not period.as_of_us:
        return and_(opened, facts.c.valid_to_us == 0)
    at: BindParameter[int] = bindparam("as_of_us", period.as_of_us)
    return and_(
        opened,
        facts.c.valid_from_us <= at,
        or_(facts.c.valid_to_us == 0, facts.c.valid_to_us > at),
    )


def _fact(r: Any) -> Fact:  # a row of _COLUMNS
    return Fact(
        r.fact_id,
        Triple(
            r.subject,
            r.predicate,
            r.object,
            r.statement,
            ends=bool(r.ends),
            how=How.DIRECT,  # how it was read is kept in its confidence and reason
            span=None if r.sentence_start is None else Span(r.sentence_start, r.sentence_end),
        ),
        r.confidence,
        r.confidence_reason,
        r.save_intent,
        r.save_intent_source,
        r.source_id,
        r.source_revision,
        r.created_at_us,
        None if r.passage_start is None else Range(r.passage_start, r.passage_end),
        r.valid_from_us,
        Link(bool(r.opens), r.valid_to_us, r.superseded_by, r.superseded_by_source, r.supersedes),
        r.retracted_at_us,
    )

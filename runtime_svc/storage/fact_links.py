"""The chain columns of facts: what the chain writer (`services.fact_chains`) reads and writes.

A fact's link (`opens`, `valid_to_us`, `superseded_by` and its source, `supersedes`) is a
derived record: computed from the live statements of its attribute, rewritten whenever one
of them changes (an insert, approval, classification, revocation, erasure or retraction).
A link names the source of the statement that closed the interval, so that the links a
source takes part in are found by source even once its facts are gone.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from sqlalchemy import ColumnElement, and_, bindparam, or_, select, tuple_, update

from runtime_svc.domain import fact_chains
from runtime_svc.domain.attributes import AttributeKey, value_key
from runtime_svc.domain.fact_chains import Link
from runtime_svc.storage import eligibility_sql
from runtime_svc.storage.facts import facts
from runtime_svc.storage.repositories import _Repository
from runtime_svc.storage.source_rows import sources

_SAVE = (
    update(facts)
    .where(facts.c.pk == bindparam("b_pk"))
    .values(
        opens=bindparam("b_opens"),
        valid_to_us=bindparam("b_valid_to_us"),
        superseded_by=bindparam("b_superseded_by"),
        superseded_by_source=bindparam("b_superseded_by_source"),
        supersedes=bindparam("b_supersedes"),
    )
)


@dataclass(frozen=True)
class ChainRow:
    """One stored statement of an attribute, with the link it has now."""

    pk: int
    key: AttributeKey
    statement: fact_chains.Statement
    link: Link


class FactLinks(_Repository):
    def keys_for_source(self, source_id: str) -> set[AttributeKey]:
        """The attributes the source's statements are about."""
        return self._keys(facts.c.source_id == source_id)

    def keys_for_facts(self, fact_ids: Collection[str]) -> set[AttributeKey]:
        return self._keys(facts.c.fact_id.in_(list(fact_ids)))

    def _keys(self, which: ColumnElement[bool]) -> set[AttributeKey]:
        # No DISTINCT: it would have the planner walk the attribute index over the whole
        # tenant instead of looking the few rows up by source or fact id.
        stmt = select(facts.c.subject, facts.c.predicate, facts.c.object_key).where(
            facts.c.tenant_id == self.tenant_id, which
        )
        return {AttributeKey(*r) for r in self.conn.execute(stmt)}

    def rows(self, keys: Collection[AttributeKey], without_source: str = "") -> list[ChainRow]:
        """Every stored statement of the attributes; a statement is live when its source is
        eligible (time-dependent rules aside: no fact comes from a foreign source), it is
        not retracted, and it is not of `without_source` (a source being purged)."""
        if not keys:
            return []
        live = and_(
            eligibility_sql.eligible_regardless_of_time(sources.c),
            facts.c.retracted_at_us == 0,
            facts.c.source_id != without_source,
        )
        stmt = (
            select(
                facts.c.pk,
                facts.c.fact_id,
                facts.c.source_id,
                facts.c.subject,
                facts.c.predicate,
                facts.c.object_key,
                facts.c.object,
                facts.c.valid_from_us,
                facts.c.ends,
                facts.c.opens,
                facts.c.valid_to_us,
                facts.c.superseded_by,
                facts.c.superseded_by_source,
                facts.c.supersedes,
                live.label("live"),
            )
            .select_from(
                facts.join(
                    sources,
                    and_(
                        sources.c.tenant_id == facts.c.tenant_id,
                        sources.c.source_id == facts.c.source_id,
                    ),
                )
            )
            .where(
                facts.c.tenant_id == self.tenant_id,
                tuple_(facts.c.subject, facts.c.predicate, facts.c.object_key).in_(
                    [(k.subject, k.predicate, k.value) for k in keys]
                ),
            )
        )
        return [
            ChainRow(
                r.pk,
                AttributeKey(r.subject, r.predicate, r.object_key),
                fact_chains.Statement(
                    r.fact_id,
                    value_key(r.object),
                    r.valid_from_us,
                    r.pk,
                    bool(r.ends),
                    bool(r.live),
                    r.source_id,
                ),
                Link(
                    bool(r.opens),
                    r.valid_to_us,
                    r.superseded_by,
                    r.superseded_by_source,
                    r.supersedes,
                ),
            )
            for r in self.conn.execute(stmt)
        ]

    def save(self, changed: Iterable[tuple[int, Link]]) -> None:
        """Writes new links, by fact pk (only the chain writer calls this)."""
        params = [
            {
                "b_pk": pk,
                "b_opens": int(link.opens),
                "b_valid_to_us": link.valid_to_us,
                "b_superseded_by": link.superseded_by,
                "b_superseded_by_source": link.superseded_by_source,
                "b_supersedes": link.supersedes,
            }
            for pk, link in changed
        ]
        if params:
            self.conn.execute(_SAVE, params)

    def of_source(self, source_id: str) -> list[str]:
        """The supersession links a source takes part in, as `<fact>><fact>` ids: those that
        close one of its facts' intervals, and those its statements close."""
        stmt = select(facts.c.fact_id, facts.c.superseded_by).where(
            facts.c.tenant_id == self.tenant_id,
            facts.c.superseded_by != "",
            or_(facts.c.source_id == source_id, facts.c.superseded_by_source == source_id),
        )
        return [f"{r.fact_id}>{r.superseded_by}" for r in self.conn.execute(stmt)]

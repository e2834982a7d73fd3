"""The checks of the eligible-take loop (`retrieval.take`): candidates' sources against the
tenant and the whole eligibility predicate, in SQL, one statement a round, with what a hit
shows of each source."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, Select, bindparam, case, func, literal_column, select

from runtime_svc.domain import entry_keys
from runtime_svc.domain.eligibility import RULES, Expired, State
from runtime_svc.retrieval.take import Checked, Verdict
from runtime_svc.storage import eligibility_sql, turn_log
from runtime_svc.storage.models import MemoryVectorRow
from runtime_svc.storage.read_rows import driver_rows, one_of
from runtime_svc.storage.shown_sources import ShownSource
from runtime_svc.storage.source_rows import sources, tenants_by_pk

v = MemoryVectorRow.__table__

# What a hit shows of its source, in `ShownSource`'s order.
SOURCE_COLUMNS = (
    sources.c.pk,
    sources.c.source_id,
    sources.c.revision,
    sources.c.generated_form,
    sources.c.save_intent,
    sources.c.kind,
    turn_log.whole_raw().label("raw"),  # a conversation's appended messages too
)
_WIDTH = len(SOURCE_COLUMNS)
# The states that only the passage of time brings (the index's eligibility ignores time).
_TIMED = frozenset(r.state.value for r in RULES if isinstance(r.condition, Expired))
_ELIGIBLE = State.ELIGIBLE.value
_DROPPED = Checked(Verdict.DROPPED)


def source_row(r: tuple[Any, ...]) -> ShownSource:
    """A `ShownSource` from a row whose first columns are `SOURCE_COLUMNS`."""
    return ShownSource(r[0], r[1], r[2], r[3] or "", r[4], r[5], r[6] or "")


def _states_statement(dialect: str) -> Select[Any]:
    """Some of the tenant's sources with what a hit shows, and their state now (the whole
    predicate: 'eligible' or the first reason they are not)."""
    return select(*SOURCE_COLUMNS, eligibility_sql.state(sources.c, bindparam("now_us"))).where(
        one_of(sources.c.pk, "pks", dialect), tenants_by_pk()
    )


def _eligible_ids_statement(dialect: str) -> Select[Any]:
    """Of some of the tenant's sources, those eligible now: their pk and source id."""
    return select(sources.c.pk, sources.c.source_id).where(
        one_of(sources.c.pk, "pks", dialect),
        tenants_by_pk(),
        eligibility_sql.eligible(sources.c, bindparam("now_us")),
    )


# PostgreSQL: the eligible ones of some sources, the first `need` by source id (compared as
# Python compares strings, by code point: the "C" collation).
_PG_FIRST = (
    select(*SOURCE_COLUMNS)
    .where(
        one_of(sources.c.pk, "pks", "postgresql"),
        tenants_by_pk(),
        eligibility_sql.eligible(sources.c, bindparam("now_us")),
    )
    .order_by(sources.c.source_id.collate("C"))
    .limit(bindparam("need"))
)


class Sources:
    """Checks candidates by their source's pk. A source refused by time alone is kept (an
    index entry's eligibility ignores time); one gone or refused otherwise is dropped."""

    def __init__(
        self,
        conn: Connection,
        tenant_id: str,
        now_us: int,
        shown: dict[int, ShownSource] | None = None,
    ) -> None:
        """`shown`: what the transaction's checks read of sources, by pk (filled in here, never
        read: a row there says nothing of its source's eligibility now)."""
        self._conn, self._tenant_id, self._now_us = conn, tenant_id, now_us
        self._known: dict[int, Checked] = {}  # kept for the search: a ranking may restart
        self._shown = shown if shown is not None else {}

    def check(self, refs: list[int]) -> Mapping[int, Checked]:
        wanted = [pk for pk in refs if pk not in self._known]
        if wanted:
            params = {"pks": wanted, "tenant_id": self._tenant_id, "now_us": self._now_us}
            for r in driver_rows(self._conn, _states_statement, params):
                state = r[_WIDTH]
                if state == _ELIGIBLE:
                    row = self._shown[r[0]] = source_row(r)
                    self._known[r[0]] = Checked(Verdict.ELIGIBLE, row)
                elif state in _TIMED:
                    self._known[r[0]] = Checked(Verdict.KEPT)
            for pk in wanted:
                self._known.setdefault(pk, _DROPPED)  # gone, or refused for good
        return {pk: self._known[pk] for pk in refs}

    def check_first(self, refs: list[int], need: int) -> Mapping[int, Checked]:
        """The eligible ones among `refs` with the `need` smallest source ids, looked up
        whole; the others only by their id and eligibility (a few columns of each). On
        PostgreSQL in one statement (a round trip costs more than the rows)."""
        params = {"pks": refs, "tenant_id": self._tenant_id, "now_us": self._now_us}
        if self._conn.dialect.name == "postgresql":
            rows = driver_rows(self._conn, _PG_FIRST, params | {"need": need})
            for r in rows:
                self._known[r[0]] = Checked(Verdict.ELIGIBLE, source_row(r))
            return {r[0]: self._known[r[0]] for r in rows}
        ids = driver_rows(self._conn, _eligible_ids_statement, params)
        first = [pk for pk, _ in sorted(ids, key=lambda r: r[1])[:need]]
        found = self.check(first)
        return {pk: c for pk, c in found.items() if c.verdict is Verdict.ELIGIBLE}


def candidate_filter(dialect: str = "sqlite") -> tuple[Any, ...]:
    """The vectors given by their seqs (`seqs`: on SQLite a JSON array, on PostgreSQL an
    array parameter), the tenant's and the model's, joined to their sources, the tenant's."""
    if dialect == "postgresql":
        # As on SQLite, checks only: the candidates read by their seq, their sources by pk.
        return (
            one_of(v.c.seq, "seqs", dialect),
            tenants_by_pk(v.c),
            v.c.model_id.concat("") == bindparam("model_id"),
            tenants_by_pk(),
        )
    wanted: Select[Any] = select(literal_column("value")).select_from(
        func.json_each(bindparam("seqs")).table_valued("value")
    )
    return (
        v.c.seq.in_(wanted.scalar_subquery()),
        # As expressions, so that SQLite reads the candidates by their seq and their
        # sources by pk, instead of walking every source of the tenant (its index).
        func.coalesce(v.c.tenant_id, "") == bindparam("tenant_id"),
        func.coalesce(v.c.model_id, "") == bindparam("model_id"),
        func.coalesce(sources.c.tenant_id, "") == bindparam("tenant_id"),
    )


def eligible_flag() -> Any:
    """1 when the source is eligible now (the whole predicate), else 0."""
    return case((eligibility_sql.eligible(sources.c, bindparam("now_us")), 1), else_=0).label("ok")


@lru_cache(maxsize=2)
def _vectors_statement(dialect: str) -> Select[Any]:
    """Those of the candidate vectors that still exist, each with its source's pk, whether
    that source is eligible, and its revision."""
    return (
        select(sources.c.pk, eligible_flag(), v.c.seq, v.c.passage, sources.c.revision)
        .select_from(v.join(sources, sources.c.pk == v.c.source_pk))
        .where(*candidate_filter(dialect))
    )


def _shown_statement(dialect: str) -> Select[Any]:
    """What a hit shows of some of the tenant's sources."""
    return select(*SOURCE_COLUMNS).where(one_of(sources.c.pk, "pks", dialect), tenants_by_pk())


class Vectors:
    """Checks candidate vectors by their seq. A vector whose source is refused is
    kept (the source may become eligible again; its vector stays); a vector gone (its
    source's vectors purged or replaced) is dropped. What a hit shows of a source is read
    once per source (a long session has a passage, and a candidate vector, per message),
    not once per vector, nor again when the lexical side of the same transaction read it."""

    def __init__(
        self,
        conn: Connection,
        tenant_id: str,
        model_id: str,
        now_us: int,
        shown: dict[int, ShownSource] | None = None,
    ) -> None:
        """`shown`: what the transaction's checks read of sources, by pk (shared)."""
        self._conn = conn
        self._params = {"tenant_id": tenant_id, "model_id": model_id, "now_us": now_us}
        self._shown = shown if shown is not None else {}

    def check(self, refs: list[int]) -> Mapping[int, Checked]:
        pg = self._conn.dialect.name == "postgresql"
        params = self._params | {"seqs": refs if pg else json.dumps(refs)}
        found = driver_rows(self._conn, _vectors_statement, params)
        # Eligible sources only, and again where the row read before is of another revision
        # (on PostgreSQL each statement reads its own snapshot: an append may be between).
        wanted = list(
            {
                pk
                for pk, ok, _, _, revision in found
                if ok and (pk not in self._shown or self._shown[pk].revision != revision)
            }
        )
        if wanted:
            shown = {"pks": wanted, "tenant_id": self._params["tenant_id"]}
            for r in driver_rows(self._conn, _shown_statement, shown):
                self._shown[r[0]] = source_row(r)
        out: dict[int, Checked] = {}
        for pk, ok, seq, passage, revision in found:
            key = entry_keys.with_passage(pk, passage)
            if not ok:
                out[seq] = Checked(Verdict.KEPT, None, key)
                continue
            row = self._shown.get(pk)
            if row is None:
                continue  # gone between the two reads: dropped
            if row.revision != revision:  # changed again between them: offered again later
                out[seq] = Checked(Verdict.KEPT, None, key)
                continue
            out[seq] = Checked(Verdict.ELIGIBLE, row, key)
        return out

"""The ranking statistics (`storage.term_counts`, read by `retrieval.lexical.statistics`)
follow every write of the one writer (`storage.postings`): after any sequence of entries
written eligible or not, eligibility flips and removals, each word's counts are what the
postings say, and a query's statistics are those of the eligible entries alone."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test
from sqlalchemy import func, select

from runtime_svc.domain import lexical
from runtime_svc.domain.query import Query
from runtime_svc.retrieval.lexical import statistics
from runtime_svc.storage.postings import postings
from runtime_svc.storage.term_counts import terms_table
from runtime_svc.storage.unit_of_work import UnitOfWork

WORDS = ["guitar", "garden", "coffee", "river", "piano"]
TENANTS = itertools.count()
PKS = itertools.count(1)  # an entry key is unique across tenants (sources.pk)


class Counts(RuleBasedStateMachine):
    uow: UnitOfWork  # set by the test

    def __init__(self) -> None:
        super().__init__()
        self.tenant = f"stats-{next(TENANTS)}"
        self.texts: dict[int, str] = {}
        self.eligible: dict[int, bool] = {}

    @rule(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), eligible=st.booleans())
    def put(self, words: list[str], eligible: bool) -> None:
        pk = next(PKS)
        with self.uow.write(self.tenant) as tx:
            tx.index.put(pk, " ".join(words), eligible=eligible, revision=1)
        self.texts[pk], self.eligible[pk] = " ".join(words), eligible

    @rule(data=st.data(), eligible=st.booleans())
    def set_eligible(self, data, eligible: bool) -> None:  # type: ignore[no-untyped-def]
        if not self.texts:
            return
        pk = data.draw(st.sampled_from(sorted(self.texts)))
        with self.uow.write(self.tenant) as tx:
            tx.index.set_eligible(pk, eligible, 2)
        self.eligible[pk] = eligible

    @rule(data=st.data())
    def remove(self, data) -> None:  # type: ignore[no-untyped-def]
        if not self.texts:
            return
        pk = data.draw(st.sampled_from(sorted(self.texts)))
        with self.uow.write(self.tenant) as tx:
            assert tx.index.remove(pk)
        del self.texts[pk], self.eligible[pk]

    @invariant()
    def counts_are_what_the_postings_say(self) -> None:
        p, t = postings.c, terms_table.c
        with self.uow.read(self.tenant) as tx:
            counted = {
                r.term: (r.docs, r.eligible_docs)
                for r in tx.conn.execute(
                    select(
                        p.term,
                        func.count().label("docs"),
                        func.sum(p.eligible).label("eligible_docs"),
                    )
                    .where(p.tenant_id == self.tenant)
                    .group_by(p.term)
                )
            }
            kept = {
                r.term: (r.docs, r.eligible_docs)
                for r in tx.conn.execute(
                    select(t.term, t.docs, t.eligible_docs).where(t.tenant_id == self.tenant)
                )
            }
            stats = statistics.read(tx.conn, self.tenant, Query.of(" ".join(WORDS)).stems)
        assert kept == counted
        live = [lexical.analyse(self.texts[pk]).impacts for pk, ok in self.eligible.items() if ok]
        assert stats.eligible_entries == len(live)
        assert stats.entries == len(self.texts)
        assert {s.stem: s.docs for s in stats.by_stem} == {
            s: n for s in sorted({x for i in live for x in i}) if (n := sum(s in i for i in live))
        }


def test_statistics_count_the_eligible_entries_after_any_writes(database) -> None:
    Counts.uow = UnitOfWork(database)
    run_state_machine_as_test(
        Counts,
        settings=settings(
            max_examples=25,
            stateful_step_count=15,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )

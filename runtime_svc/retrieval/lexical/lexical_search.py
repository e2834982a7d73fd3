"""The lexical side of retrieval, for one transaction: the query's statistics read, the
ranker the plan chose (`retrieval.plan.lexical`) run through the eligible-take loop, hits
made of what it took."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection

from runtime_svc.domain.lexical import Certificate
from runtime_svc.domain.passages import Decoded, Window
from runtime_svc.domain.query import Query
from runtime_svc.retrieval import plan
from runtime_svc.retrieval.held import held_rank
from runtime_svc.retrieval.held.mirrors import Mirrors
from runtime_svc.retrieval.hits import Hit, MatchRow, make_hit
from runtime_svc.retrieval.lexical import matches, statistics, tables
from runtime_svc.retrieval.source_checks import Sources
from runtime_svc.storage.shown_sources import ShownSource

DEFAULT_BUDGET = tables.DEFAULT_BUDGET


@dataclass(frozen=True)
class Ranked:
    hits: list[Hit]  # best first
    certificate: Certificate
    ran: plan.Lexical | None  # None: no query word is in the tenant's eligible entries


class LexicalSearch:
    def __init__(
        self,
        conn: Connection,
        tenant_id: str,
        *,
        window: Window | None = None,
        mirrors: Mirrors | None = None,
        budget: int = DEFAULT_BUDGET,
        decoded: dict[tuple[int, int], Decoded] | None = None,
        shown: dict[int, ShownSource] | None = None,
    ) -> None:
        """`mirrors`: large tenants' postings held in memory (None: every search reads the
        index tables); `budget`: postings read per word at most, unless fewer than k would
        be found (see `lexical.tables`); `decoded`: conversations decoded in the transaction
        so far, by source and revision (`hits.make_hit`); `shown`: what the transaction's
        checks read of sources, by pk (`source_checks`))."""
        self._decoded, self._shown = decoded, shown
        self.conn, self.tenant_id = conn, tenant_id
        self._window = window or Window()
        self._mirrors = mirrors
        self._budget = budget

    def search(self, query: Query, limit: int, now_us: int, *, grouped: bool = True) -> list[Hit]:
        """Top `limit` eligible sources by score (each its best passage), ties broken by
        source id, with their text; with `grouped` off, the top passages (several of one
        source may appear)."""
        return self.rank(query, limit, now_us, grouped=grouped).hits

    def rank(self, query: Query, limit: int, now_us: int, *, grouped: bool = True) -> Ranked:
        """As `search`, with what the result is certified to be (exact, unless a word's
        eligible postings outnumber the budget) and the ranker that ran."""
        stats = statistics.read(self.conn, self.tenant_id, query.stems)
        mirrors = self._mirrors
        held_min = mirrors.min_entries if mirrors is not None else None
        chosen = plan.lexical(stats.entries, held_min)
        if mirrors is not None and chosen is plan.Lexical.TABLES and mirrors.holds(self.tenant_id):
            mirrors.forget(self.tenant_id)  # searched in the tables from now: nothing held
        if not stats.by_bound:
            return Ranked([], Certificate(True, 0.0), None)
        if mirrors is None or chosen is plan.Lexical.TABLES:
            taken, cert = tables.search(
                self.conn,
                self.tenant_id,
                stats,
                limit,
                now_us,
                budget=self._budget,
                grouped=grouped,
                shown=self._shown,
            )
            ran = plan.Lexical.TABLES
        else:
            checker = Sources(self.conn, self.tenant_id, now_us, self._shown)
            with mirrors.hold(self.conn, self.tenant_id) as held:
                method = held_rank.method(held, self.conn, self.tenant_id, stats)
                taken, ran = held_rank.search(
                    held, self.conn, self.tenant_id, stats, checker, limit, grouped, method
                )
            cert = Certificate(True, 0.0)
        decoded = self._decoded if self._decoded is not None else {}
        hits = [make_hit(t.score, t.key, t.row, self._window, decoded) for t in taken]
        return Ranked([h for h in hits if h.in_its_row], cert, ran)

    def matches(self, query: Query, now_us: int, cap: int) -> tuple[list[MatchRow], int]:
        """Every indexed source of the tenant matching the query's words, whatever its state:
        up to `cap` of them (eligible ones first, best first), and how many there are."""
        stats = statistics.read(self.conn, self.tenant_id, query.stems)
        return matches.matches(self.conn, self.tenant_id, stats, now_us, cap)

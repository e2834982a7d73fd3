"""Search ranking: per-tenant statistics, top k equal to the exhaustive ranking, and what is
not eligible never returned, whatever happens to the sources in between."""

from __future__ import annotations

import random
import time

import pytest

from agentmem.v1 import foreign_pb2
from agentmem_kernel.config import Storage
from runtime_svc.domain.ids import new_id
from runtime_svc.domain.query import Query
from runtime_svc.domain.sources import (
    Body,
    Classification,
    Provenance,
    SaveIntent,
    Source,
    SourceKind,
    Status,
)
from runtime_svc.retrieval import plan as search_plan
from runtime_svc.retrieval.held.mirrors import Mirrors
from runtime_svc.retrieval.lexical.lexical_search import DEFAULT_BUDGET, LexicalSearch
from runtime_svc.storage import migrate
from runtime_svc.storage.db import open_database
from runtime_svc.storage.postings import Indexable
from runtime_svc.storage.unit_of_work import UnitOfWork
from tests.harness import ADMIN_B, database_url, drop_database, words_held_in_memory
from tests.memory_helpers import ACTIVE, COLD, assemble, classify, explain, insert, search

WORDS = [
    "guitar",
    "garden",
    "coffee",
    "river",
    "dinner",
    "piano",
    "winter",
    "yoga",
    "letter",
    "ticket",
    "bread",
    "lamp",
]


def _source(
    content: str, classification: Classification = Classification.ACTIVE, **assent: object
) -> Source:
    """A memory as the runtime stores it (for tests that write through the repositories)."""
    return Source(
        new_id("src"),
        1,
        SourceKind.MEMORY,
        classification,
        Status.ACTIVE,
        "",
        Body(content=content),
        Provenance("test", "service", "import", ""),
        SaveIntent(),
        {},
        1,
        1,
        **assent,  # type: ignore[arg-type]
    )


# Where a tenant's top k is taken: the index tables, or its postings held in memory, with
# every slot scored (what a tenant of this size gets) or pruned by MaxScore (what a tenant
# with millions of postings gets: `retrieval.plan.DENSE_MAX` patched to 0).
PLANS = ["tables", "held", "held, pruned"]


@pytest.fixture(params=PLANS, ids=["tables", "held", "held-pruned"])
def plan(request, monkeypatch) -> str:
    if request.param == "held, pruned":
        monkeypatch.setattr(search_plan, "DENSE_MAX", 0)
    return request.param


def lexical(tx, mirrors=None, budget=DEFAULT_BUDGET) -> LexicalSearch:  # type: ignore[no-untyped-def]
    """The lexical side in a test's transaction (`mirrors`: postings held in memory)."""
    return LexicalSearch(tx.conn, tx.sources.tenant_id, mirrors=mirrors, budget=budget)


def ranking(client, query, limit=10):
    return [(h.source_id, h.score) for h in search(client, query, limit).hits]


def explained(client, query):
    return [(e.source_id, e.reason, e.score) for e in explain(client, query, 100).entries]


def _ranks_as_exhaustive(tx, mirrors, terms, limit, now, query):  # type: ignore[no-untyped-def]
    """The top `limit` equals the exhaustive ranking's first eligible matches (score, then
    source id); the hits."""
    every, _ = lexical(tx).matches(terms, now, 1000)
    exact = sorted(
        (m for m in every if m.state == "eligible"),
        key=lambda m: (-m.score, m.source_id),
    )[:limit]
    hits = lexical(tx, mirrors).search(terms, limit, now)
    assert [(h.source_id, h.score) for h in hits] == [(m.source_id, m.score) for m in exact], query
    return hits


def test_a_tenants_scores_do_not_depend_on_another_tenants_memories(stack):
    """Tenants A and B (whose memories once shared an index shard): whatever B stores, A's
    results, order and scores stay the same to the last bit."""
    a, b = stack.client(), stack.client(ADMIN_B)
    for line in (
        "I play the guitar in the garden on Sundays",
        "My garden has tomatoes and a lemon tree",
        "Coffee with Sam by the river, he plays guitar too",
        "The piano needs tuning before winter",
    ):
        insert(a, line)
    queries = ["guitar", "garden guitar", "who plays the piano in winter?", "river coffee"]
    before = {q: (ranking(a, q), explained(a, q)) for q in queries}
    assert all(before[q][0] for q in queries)
    for i in range(40):
        insert(b, f"guitar lesson {i} in the garden with a guitar teacher")
    insert(b, "piano piano piano winter river coffee")
    after = {q: (ranking(a, q), explained(a, q)) for q in queries}
    assert after == before
    # and B's own ranking is computed from B's memories: its scores differ from A's
    assert ranking(b, "guitar")[0][1] != before["guitar"][0][0][1]


def _corpus_line(rng: random.Random) -> str:
    words = [rng.choice(WORDS[:3]) if rng.random() < 0.5 else rng.choice(WORDS) for _ in range(6)]
    return " ".join([*words, rng.choice(["today", "with Ann", "again", ""])])


def test_top_k_is_the_exhaustive_ranking_and_never_holds_what_is_not_eligible(make_stack, plan):
    """A random history of inserts, cold and active flips, revocations and erasures over
    lists longer than the first reading depth: after each step, every search returns exactly
    the best eligible sources of the exhaustive ranking (ExplainRetrieval), in order, and
    nothing cold, revoked or erased; prompts cite nothing of those either. The same with the
    tenant's postings held in memory, every slot scored or pruned."""
    stack = make_stack(**({"search__held_min_entries": 0} if plan != "tables" else {}))
    client = stack.client()
    rng = random.Random(12)
    revision: dict[str, int] = {}
    cold: set[str] = set()
    gone: set[str] = set()  # revoked or erased
    for _ in range(300):
        s = insert(client, _corpus_line(rng))
        revision[s.source_id] = s.revision
    for step in range(8):
        live = sorted(set(revision) - gone)
        for _ in range(15):
            sid = rng.choice(live)
            if sid in gone:
                continue
            flip = COLD if sid not in cold else ACTIVE
            revision[sid] = classify(client, sid, revision[sid], flip).revision
            (cold.add if flip == COLD else cold.discard)(sid)
        victim = rng.choice(live)
        if step % 2:
            client.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=victim))
        else:
            client.EraseSource(
                foreign_pb2.EraseSourceRequest(source_id=victim, expected_revision=revision[victim])
            )
        gone.add(victim)
        for i in range(5):  # read-your-writes: the new ones rank at once
            s = insert(client, f"{_corpus_line(rng)} zqmarker{step}x{i}")
            revision[s.source_id] = s.revision
            assert [h.source_id for h in search(client, f"zqmarker{step}x{i}").hits] == [
                s.source_id
            ]
        for _ in range(6):
            query = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
            limit = rng.choice([1, 3, 10, 25])
            hits = search(client, query, limit).hits
            entries = explain(client, query, limit).entries
            best = [e for e in entries if e.included]
            assert [h.source_id for h in hits] == [e.source_id for e in best], query
            for h, e in zip(hits, best, strict=True):
                assert h.score == pytest.approx(e.score, rel=1e-9)
            ids = {h.source_id for h in hits}
            assert not ids & (cold | gone)
            cited = {c.source_id for c in assemble(client, query).citations}
            assert not cited & (cold | gone)


def test_a_budget_too_small_for_a_word_bounds_what_can_be_missed(tmp_path):
    """With at most 100 postings read per word, a search over longer lists may stop short of
    certainty; then no eligible source scores above the stated bound and is missed, and every
    score returned is exact."""
    url = database_url(tmp_path / "budget.db")
    db = open_database(Storage(url=url))
    try:
        migrate.upgrade(db.writer)
        uow = UnitOfWork(db)
        rng = random.Random(5)
        batch = [_source(_corpus_line(rng)) for _ in range(600)]
        with uow.write("t") as tx:
            pks = tx.sources.add_many(batch)
            tx.index.put_many(
                [
                    Indexable(pk, s.body.generated_form(), True)
                    for pk, s in zip(pks, batch, strict=True)
                ]
            )
        now = int(time.time() * 1e6)
        inexact = 0
        for _ in range(40):
            terms = Query.of(" ".join(rng.sample(WORDS, rng.randint(1, 3))))
            with uow.read("t") as tx:
                ranked = lexical(tx, budget=100).rank(terms, 10, now)
                hits, cert = ranked.hits, ranked.certificate
                every, _ = lexical(tx).matches(terms, now, 1000)
            score = {m.source_id: m.score for m in every}
            for h in hits:
                assert h.score == pytest.approx(score[h.source_id], rel=1e-9)
            exact = sorted(every, key=lambda m: (-m.score, m.source_id))[:10]
            if cert.exact:
                assert [h.source_id for h in hits] == [m.source_id for m in exact]
                continue
            inexact += 1
            returned = {h.source_id for h in hits}
            kth = hits[-1].score
            for m in every:
                if m.source_id not in returned and m.score > kth:
                    assert m.score <= cert.bound + 1e-9
        assert inexact  # the bounded path was taken
    finally:
        db.dispose()
        drop_database(url)


def test_the_migration_builds_the_index_from_the_sources_already_stored(tmp_path):
    """Sources indexed before the postings tables existed are searchable after upgrading:
    down to 0005 (the index tables go) and up again (they are filled from the sources)."""
    from alembic import command

    url = database_url(tmp_path / "migrate.db")
    db = open_database(Storage(url=url))
    try:
        migrate.upgrade(db.writer)
        uow = UnitOfWork(db)
        lines = ["the kayak club meets on fridays", "a red kayak by the river", "bread"]
        batch = [
            _source(line, Classification.COLD if i == 1 else Classification.ACTIVE)
            for i, line in enumerate(lines)
        ]
        with uow.write("t") as tx:
            pks = tx.sources.add_many(batch)
            tx.index.put_many(
                [
                    Indexable(pk, s.body.generated_form(), s.indexable())
                    for pk, s in zip(pks, batch, strict=True)
                ]
            )
        terms = Query.of("kayak")
        with uow.read("t") as tx:
            before = lexical(tx).search(terms, 10, 0)
        cfg = migrate.alembic_config()
        for target in ("0005", "head"):
            with db.writer.begin() as conn:
                cfg.attributes["connection"] = conn
                (command.downgrade if target == "0005" else command.upgrade)(cfg, target)
        with uow.read("t") as tx:
            after = lexical(tx).search(terms, 10, 0)
            assert tx.index.has(pks[1]) and not lexical(tx).search(Query.of("red"), 10, 0)
        assert [h.source_id for h in after] == [batch[0].source_id]
        assert after == before
    finally:
        db.dispose()
        drop_database(url)


def test_sources_refused_by_time_inside_the_ranking_never_leave_fewer_than_k(tmp_path, plan):
    """Sources whose assent has expired keep postings marked eligible (the index ignores
    time); when they hold the best scores, search passes over them inside its ranking and
    still returns the k best eligible sources, in the exhaustive order, grouped by source
    or not; and, searched as of before they expired, they are back (postings held in memory
    do not forget what only time refused)."""
    url = database_url(tmp_path / "expired.db")
    db = open_database(Storage(url=url))
    try:
        migrate.upgrade(db.writer)
        held = Mirrors(0, 10**7) if plan != "tables" else None
        uow = UnitOfWork(db, words_removed=held.forget_words if held else None)
        rng = random.Random(9)
        now = int(time.time() * 1e6)
        lines = [_corpus_line(rng) for _ in range(400)]
        # The shortest memories of the commonest words score best: their assent expired.
        expired = [f"{WORDS[0]} {WORDS[1]} " * 4 for _ in range(30)]
        batch = [
            _source(
                line,
                assent_state="valid" if i < len(expired) else "",
                assent_expires_at_us=now - 1 if i < len(expired) else 0,
            )
            for i, line in enumerate(expired + lines)
        ]
        with uow.write("t") as tx:
            pks = tx.sources.add_many(batch)
            tx.index.put_many(
                [
                    Indexable(pk, s.body.generated_form(), True)
                    for pk, s in zip(pks, batch, strict=True)
                ]
            )
        gone = {s.source_id for s in batch[: len(expired)]}
        for query in (WORDS[0], f"{WORDS[0]} {WORDS[1]}", f"{WORDS[1]} {WORDS[5]} {WORDS[0]}"):
            terms = Query.of(query)
            with uow.read("t") as tx:
                every, _ = lexical(tx).matches(terms, now, 1000)
                for limit in (1, 10, 25):
                    exact = sorted(
                        (m for m in every if m.state == "eligible"),
                        key=lambda m: (-m.score, m.source_id),
                    )[:limit]
                    assert len(exact) == limit
                    for grouped in (True, False):
                        hits = lexical(tx, held).search(terms, limit, now, grouped=grouped)
                        assert [h.source_id for h in hits] == [m.source_id for m in exact]
                        assert not {h.source_id for h in hits} & gone
                        for h, m in zip(hits, exact, strict=True):
                            assert h.score == pytest.approx(m.score, rel=1e-9)
        # and before they expired, they were among the best
        with uow.read("t") as tx:
            top = lexical(tx, held).search(Query.of(f"{WORDS[0]} {WORDS[1]}"), 10, now - 2)
        assert len({h.source_id for h in top} & gone) >= 5
    finally:
        db.dispose()
        drop_database(url)


def test_postings_held_in_memory_follow_writes_made_through_another_runtime(make_stack):
    """Two runtimes on one database, both holding the tenant's postings in memory: whatever
    one of them does (inserts, cold and active flips, revocations, erasures), a search
    through the other right after returns exactly what the exhaustive ranking says, with
    nothing cold, revoked or erased."""
    a = make_stack(search__held_min_entries=0)
    b = make_stack(storage__url=a.settings.storage.url, search__held_min_entries=0)
    writer, reader = a.client(), b.client()
    rng = random.Random(5)
    revision = {}
    for _ in range(120):
        s = insert(writer, _corpus_line(rng))
        revision[s.source_id] = s.revision
    query = f"{WORDS[0]} {WORDS[1]}"
    assert search(reader, query, 10).hits  # both hold the tenant from here on
    assert search(writer, query, 10).hits
    cold: set[str] = set()
    gone: set[str] = set()
    for step in range(12):
        top = [h.source_id for h in search(reader, query, 10).hits]
        victim = top[step % len(top)]
        if step % 3 == 0:
            revision[victim] = classify(writer, victim, revision[victim], COLD).revision
            cold.add(victim)
        elif step % 3 == 1:
            writer.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=victim))
            gone.add(victim)
        else:
            writer.EraseSource(
                foreign_pb2.EraseSourceRequest(source_id=victim, expected_revision=revision[victim])
            )
            gone.add(victim)
        if step % 4 == 3:  # one comes back
            back = sorted(cold)[0]
            revision[back] = classify(writer, back, revision[back], ACTIVE).revision
            cold.discard(back)
        new = insert(writer, f"{WORDS[0]} {WORDS[1]} {WORDS[0]}")
        revision[new.source_id] = new.revision
        for client in (reader, writer):
            hits = search(client, query, 10).hits
            best = [e for e in explain(client, query, 10).entries if e.included]
            assert [h.source_id for h in hits] == [e.source_id for e in best]
            assert new.source_id in {h.source_id for h in hits}
            assert not {h.source_id for h in hits} & (cold | gone)


@pytest.mark.parametrize("pruned", [True, False], ids=["pruned", "every-slot"])
def test_held_search_equals_the_exhaustive_ranking_for_rare_and_common_words(
    tmp_path, monkeypatch, pruned
):
    """Postings held in memory, pruned by the rarest word's best scores (MaxScore), or with
    every slot scored: over a corpus of rare and common words in memories of every length,
    every query's top k equals the exhaustive ranking, scores to the last bit."""
    if pruned:
        monkeypatch.setattr(search_plan, "DENSE_MAX", 0)
    url = database_url(tmp_path / "pruned.db")
    db = open_database(Storage(url=url))
    try:
        migrate.upgrade(db.writer)
        mirrors = Mirrors(0, 10**7)
        held = UnitOfWork(db, words_removed=mirrors.forget_words)
        rng = random.Random(3)
        vocabulary = [f"zq{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(60)]
        weights = [1 / (rank + 1) ** 1.1 for rank in range(len(vocabulary))]
        batch = [
            _source(" ".join(rng.choices(vocabulary, weights, k=rng.randint(1, 30))))
            for _ in range(800)
        ]
        with held.write("t") as tx:
            pks = tx.sources.add_many(batch)
            tx.index.put_many(
                [
                    Indexable(pk, s.body.generated_form(), True)
                    for pk, s in zip(pks, batch, strict=True)
                ]
            )
        now = int(time.time() * 1e6)
        for _ in range(150):
            query = " ".join(rng.sample(vocabulary, rng.randint(2, 4)))
            terms = Query.of(query)
            limit = rng.choice([1, 3, 10, 30])
            with held.read("t") as tx:
                _ranks_as_exhaustive(tx, mirrors, terms, limit, now, query)
    finally:
        db.dispose()
        drop_database(url)


def test_a_long_tie_of_equal_scores_ranks_as_the_exhaustive_ranking(tmp_path, plan):
    """Hundreds of memories of the same words (equal scores), a third of them cold: the top
    k is the first eligible sources by source id, as the exhaustive ranking says, whichever
    ranker takes it (a tie that long is looked up by source id first)."""
    url = database_url(tmp_path / "ties.db")
    db = open_database(Storage(url=url))
    try:
        migrate.upgrade(db.writer)
        mirrors = None if plan == "tables" else Mirrors(0, 10**7)
        uow = UnitOfWork(db, index_changed=None if mirrors is None else mirrors.apply)
        cold = [i % 3 == 0 for i in range(300)]
        batch = [
            _source("coffee with tea", Classification.COLD if c else Classification.ACTIVE)
            for c in cold
        ]
        with uow.write("t") as tx:
            pks = tx.sources.add_many(batch)
            tx.index.put_many(
                [
                    Indexable(pk, s.body.generated_form(), not c)
                    for pk, s, c in zip(pks, batch, cold, strict=True)
                ]
            )
        now = int(time.time() * 1e6)
        for query, limit in [("coffee", 10), ("tea coffee", 1), ("coffee", 50), ("tea", 3)]:
            terms = Query.of(query)
            with uow.read("t") as tx:
                hits = _ranks_as_exhaustive(tx, mirrors, terms, limit, now, query)
            assert len(hits) == limit
    finally:
        db.dispose()
        drop_database(url)


def test_a_runtime_holding_postings_before_it_serves_ranks_as_the_index_says(make_stack):
    """A runtime started on a database with a large tenant holds its postings before it
    serves; its searches equal the exhaustive ranking, and writes made afterwards through
    another runtime are ranked at once."""
    a = make_stack(search__held_min_entries=50)
    writer = a.client()
    rng = random.Random(8)
    revision = {}
    for _ in range(80):
        s = insert(writer, _corpus_line(rng))
        revision[s.source_id] = s.revision
    cold = sorted(revision)[:10]
    for sid in cold:
        classify(writer, sid, revision[sid], COLD)
    b = make_stack(storage__url=a.settings.storage.url, search__held_min_entries=50)
    reader = b.client()
    for step in range(6):
        new = insert(writer, f"{WORDS[1]} {WORDS[2]} {WORDS[1]} zqwarm{step}")
        for query in (f"{WORDS[1]} {WORDS[2]}", WORDS[0], f"{WORDS[2]} {WORDS[5]} zqwarm{step}"):
            hits = search(reader, query, 10).hits
            best = [e for e in explain(reader, query, 10).entries if e.included]
            assert [(h.source_id, h.score) for h in hits] == [(e.source_id, e.score) for e in best]
            assert not {h.source_id for h in hits} & set(cold)
        assert new.source_id in {h.source_id for h in search(reader, f"zqwarm{step}", 3).hits}


@pytest.mark.parametrize("purge", ["erase", "revoke"])
def test_a_word_only_a_purged_memory_held_leaves_every_runtime_s_memory(make_stack, purge):
    """Erasure removes a word that no other memory holds from the index; the runtimes
    holding the tenant's postings in memory (the one that erased and another on the same
    database) forget it at their next search, and still rank what remains as before."""
    a = make_stack(search__held_min_entries=0)
    b = make_stack(storage__url=a.settings.storage.url, search__held_min_entries=0)
    writer, reader = a.client(), b.client()
    kept = insert(writer, "the user plays the zqharp on sundays")
    secret = insert(writer, "my bank pin zqsecretword is written on a zqharp card")
    for client in (writer, reader):  # each loads the tenant's words, all at once
        assert {h.source_id for h in search(client, "zqharp").hits} == {
            kept.source_id,
            secret.source_id,
        }
    mirrors = [a.runtime.mirrors, b.runtime.mirrors]
    assert {"zqsecretword", "bank", "zqharp"} <= words_held_in_memory(mirrors)
    if purge == "erase":
        writer.EraseSource(
            foreign_pb2.EraseSourceRequest(source_id=secret.source_id, expected_revision=1)
        )
    else:
        writer.RevokeSource(foreign_pb2.RevokeSourceRequest(source_id=secret.source_id))
    for client in (writer, reader):
        assert [h.source_id for h in search(client, "zqharp sundays").hits] == [kept.source_id]
        assert not search(client, "zqsecretword").hits
    held = words_held_in_memory(mirrors)
    assert not {"zqsecretword", "bank", "pin", "card", "written"} & held, sorted(held)
    assert {"zqharp", "user", "plai", "sundai"} <= held  # what remains holds these


def test_words_removed_from_the_index_leave_every_process_s_memory_without_a_search(tmp_path):
    """Two processes hold a tenant's postings: when an erasure removes words from the index,
    the one that wrote it forgets them as it commits, and the other when its minute's sweep
    comes, though neither searches the tenant again; and a tenant that shrinks below the
    size held in memory is no longer held at all."""
    url = database_url(tmp_path / "swept.db")
    db = open_database(Storage(url=url))
    try:
        migrate.upgrade(db.writer)
        mirrors = {name: Mirrors(0, 10**7) for name in ("a", "b")}
        uows = {name: UnitOfWork(db, words_removed=m.forget_words) for name, m in mirrors.items()}
        batch = [_source("zqharp on sundays"), _source("a zqsecretword on a zqharp card")]
        with uows["a"].write("t") as tx:
            pks = tx.sources.add_many(batch)
            tx.index.put_many(
                [
                    Indexable(pk, s.body.generated_form(), True)
                    for pk, s in zip(pks, batch, strict=True)
                ]
            )
        now = int(time.time() * 1e6)
        for name, uow in uows.items():
            with uow.read("t") as tx:
                found = lexical(tx, mirrors[name]).search(Query.of("zqharp"), 10, now)
                assert len(found) == 2
        assert all("zqsecretword" in words_held_in_memory([m]) for m in mirrors.values())
        with uows["a"].write("t") as tx:
            assert tx.index.remove(pks[1])
        assert "zqsecretword" not in words_held_in_memory([mirrors["a"]])
        assert "zqsecretword" in words_held_in_memory([mirrors["b"]])  # not yet swept
        mirrors["b"].sweep(db.reader.connect)
        held = words_held_in_memory([mirrors["b"]])
        assert "zqsecretword" not in held and {"zqharp", "sundai"} <= held

        small = Mirrors(5, 10**7)
        uow = UnitOfWork(db, words_removed=small.forget_words)
        more = [_source(f"zqharp number {i}") for i in range(4)]
        with uow.write("t") as tx:
            tx.index.put_many(
                [
                    Indexable(pk, s.body.generated_form(), True)
                    for pk, s in zip(tx.sources.add_many(more), more, strict=True)
                ]
            )
        with uow.read("t") as tx:
            assert len(lexical(tx, small).search(Query.of("zqharp"), 10, now)) == 5
        assert small.holds("t")
        with uow.write("t") as tx:
            assert tx.index.remove(pks[0])
        with uow.read("t") as tx:  # 4 entries: searched in the tables
            assert len(lexical(tx, small).search(Query.of("zqharp"), 10, now)) == 4
        assert not small.holds("t")
    finally:
        db.dispose()
        drop_database(url)

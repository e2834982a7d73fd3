"""The coarse pass's choice of the nearest signatures (pure numpy, no database)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from runtime_svc.retrieval.vectors.signature_rows import HeldRows
from runtime_svc.retrieval.vectors.signature_rows import packed as _words
from runtime_svc.retrieval.vectors.signatures import _distances, _nearest


@given(st.lists(st.integers(0, 40), min_size=2, max_size=300), st.data())
def test_the_n_smallest_distances_are_chosen_once_each(distances, data):
    n = data.draw(st.integers(1, len(distances) - 1))
    d = np.array(distances, np.uint16)
    got = _nearest(d, n)
    assert len(set(got.tolist())) == n
    assert sorted(d[got].tolist()) == sorted(distances)[:n]


@given(st.lists(st.binary(min_size=48, max_size=48), min_size=1, max_size=50), st.data())
def test_distances_are_the_hamming_distances_of_the_signatures(signatures, data):
    query = data.draw(st.binary(min_size=48, max_size=48))
    expected = [
        sum(bin(a ^ b).count("1") for a, b in zip(s, query, strict=True)) for s in signatures
    ]
    assert _distances(_words(signatures), query).tolist() == expected


@given(
    st.lists(st.integers(0, 30), max_size=60),
    st.lists(st.integers(0, 30), max_size=60),
    st.lists(st.integers(0, 30), max_size=20, unique=True),
)
def test_entries_are_found_at_their_latest_row_after_every_change(first, more, wanted):
    held = HeldRows()
    for batch in (first, more):  # rows appended after the index was made: it is made anew
        keys = np.array(batch, np.int64)
        if not len(keys):
            continue
        seqs = np.arange(len(held), len(held) + len(keys), dtype=np.int64) + 1
        held.append(seqs, _words([b"\0" * 8] * len(keys)), None, keys, np.ones(len(keys), bool))
        every = [] if held.keys is None else held.keys.tolist()
        found, rows = held.rows_of(np.array(wanted, np.int64))
        latest = {k: r for r, k in enumerate(every)}  # a later row of a key wins
        assert dict(zip(found.tolist(), rows.tolist(), strict=True)) == {
            k: latest[k] for k in wanted if k in latest
        }


def _vector_rows(tenant: str, n: int, rng, dimension: int = 64, first_pk: int = 1):  # type: ignore[no-untyped-def]
    from runtime_svc.retrieval.embedders.model import signature

    out = []
    for pk in range(first_pk, first_pk + n):
        vector = rng.standard_normal(dimension).astype(np.float32)
        out.append(
            {
                "passage": 0,
                "source_pk": pk,
                "model_id": "m",
                "tenant_id": tenant,
                "source_id": f"s{pk}",
                "source_revision": 1,
                "dimension": dimension,
                "embedding": vector.tobytes(),
                "signature": signature(vector.tolist()),
                "created_at_us": 1,
            }
        )
    return out


def _vectors_table(url: str = "sqlite://"):  # type: ignore[no-untyped-def]
    """The vectors' table, with the index's entry rows and the tenants' stamps the held
    rows' flags follow (`retrieval.vectors.vector_mask`)."""
    from sqlalchemy import create_engine

    from runtime_svc.storage.models import MemoryVectorRow, SearchPosting, TenantState

    table = MemoryVectorRow.__table__
    engine = create_engine(url)
    for t in (table, SearchPosting.__table__, TenantState.__table__):
        t.create(engine)

    return engine, table


def _insert(conn, rows) -> None:  # type: ignore[no-untyped-def]
    """Vectors and their entries' rows in the index (eligible)."""
    from sqlalchemy import insert

    if not rows:
        return
    from runtime_svc.domain.entry_keys import with_passage
    from runtime_svc.storage.models import MemoryVectorRow, SearchPosting

    conn.execute(insert(MemoryVectorRow.__table__), rows)
    entries = [
        {
            "pk": with_passage(r["source_pk"], r["passage"]),
            "term": "",
            "tenant_id": r["tenant_id"],
            "eligible": 1,
            "impact": 0.0,
            "stamp": 0,
        }
        for r in rows
    ]
    conn.execute(insert(SearchPosting.__table__), entries)


def test_a_proposal_computed_ahead_is_what_the_search_would_find_and_is_dropped_when_stale():
    from runtime_svc.retrieval.vectors.signatures import Signatures

    engine, _table = _vectors_table()
    rng = np.random.default_rng(7)
    rows = _vector_rows("t", 300, rng)
    query = rng.standard_normal(64).tolist()
    with engine.begin() as conn:
        _insert(conn, rows)
        expected = Signatures().nearest(conn, "t", "m", query, 20)
        held = Signatures()
        held.refresh(conn, "t", "m")
        held.propose("t", "m", query, 20)
        got = held.nearest(conn, "t", "m", query, 20, expected.last)
        assert got.seqs.tolist() == expected.seqs.tolist()
        assert not held._proposals  # taken
        held.propose("t", "m", query, 20)
        first = expected.seqs[:1].tolist()
        held.forget("t", "m", first)  # what is held changed: computed again
        again = held.nearest(conn, "t", "m", query, 20, expected.last).seqs.tolist()
        assert first[0] not in again and len(again) == 20
        held.propose("another tenant", "m", query, 20)  # not held: nothing computed
        assert not held._proposals


def test_held_vectors_stay_row_for_row_with_their_signatures_within_their_bound():
    from sqlalchemy import delete

    from runtime_svc.retrieval.vectors.signatures import Signatures

    engine, table = _vectors_table()
    rng = np.random.default_rng(11)
    query = rng.standard_normal(64).tolist()
    held = Signatures(max_vectors=500)

    def stored(conn):  # type: ignore[no-untyped-def]
        return {r.seq: np.frombuffer(r.embedding, np.float32) for r in conn.execute(table.select())}

    def check(conn, tenant: str) -> bool:  # type: ignore[no-untyped-def]
        """Whether the tenant's vectors are held, each the stored one of its seq."""
        near = held.nearest(conn, tenant, "m", query, 50)
        if near.vectors is None:
            return False
        by_seq = stored(conn)
        assert len(near.vectors) == len(near.seqs)
        for seq, vector in zip(near.seqs.tolist(), near.vectors, strict=True):
            assert np.array_equal(vector, by_seq[seq])
        return True

    with engine.begin() as conn:
        # Appended in several reads (the buffer grows past the views handed out).
        for first in range(1, 301, 60):
            _insert(conn, _vector_rows("a", 60, rng, first_pk=first))
            assert check(conn, "a")
        gone = conn.execute(table.select().where(table.c.source_pk <= 10)).all()
        conn.execute(delete(table).where(table.c.source_pk <= 10))
        held.forget("a", "m", [r.seq for r in gone])
        assert check(conn, "a")
        # Another tenant's 300 do not fit beside them: the least recently used tenant's
        # vectors go (its signatures stay), and its candidates are ranked in SQL instead.
        _insert(conn, _vector_rows("b", 300, rng, first_pk=1000))
        assert check(conn, "b")
        assert not check(conn, "a")
        assert len(held.nearest(conn, "a", "m", query, 50).seqs) == 50
        # A tenant alone above the bound holds none, and takes nothing from the others.
        _insert(conn, _vector_rows("c", 600, rng, first_pk=5000))
        assert not check(conn, "c")
        assert check(conn, "b")


def test_what_is_held_is_read_a_bounded_number_of_rows_at_a_time(monkeypatch):
    """A tenant larger than one read is held whole, row for row, in several reads."""
    from runtime_svc.retrieval.vectors import signatures
    from runtime_svc.retrieval.vectors.signatures import Signatures

    monkeypatch.setattr(signatures, "READ_ROWS", 7)
    engine, table = _vectors_table()
    rng = np.random.default_rng(5)
    query = rng.standard_normal(64).tolist()
    held = Signatures()
    with engine.begin() as conn:
        _insert(conn, _vector_rows("a", 100, rng))
        near = held.nearest(conn, "a", "m", query, 200)
        stored = {
            r.seq: np.frombuffer(r.embedding, np.float32) for r in conn.execute(table.select())
        }
        assert near.vectors is not None and sorted(near.seqs.tolist()) == sorted(stored)
        for seq, vector in zip(near.seqs.tolist(), near.vectors, strict=True):
            assert np.array_equal(vector, stored[seq])


def _bounded(seed: int):  # type: ignore[no-untyped-def]
    """An empty vectors' table, a random source, a query, and held rows bound to 250
    vectors in all."""
    from runtime_svc.retrieval.vectors.signatures import Signatures

    engine, _ = _vectors_table()
    rng = np.random.default_rng(seed)
    return engine, rng, rng.standard_normal(64).tolist(), Signatures(max_vectors=250)


def test_a_tenant_too_large_to_hold_lets_no_other_tenants_vectors_go_whatever_the_reads(
    monkeypatch,
):
    """Read a few rows at a time, a tenant whose vectors do not fit beside the others in
    the end takes no room from them on the way (its own are not held)."""
    from runtime_svc.retrieval.vectors import signatures

    monkeypatch.setattr(signatures, "READ_ROWS", 7)
    engine, rng, query, held = _bounded(23)
    with engine.begin() as conn:
        _insert(conn, _vector_rows("a", 100, rng, first_pk=1))
        _insert(conn, _vector_rows("b", 100, rng, first_pk=1000))
        assert held.nearest(conn, "a", "m", query, 20).vectors is not None
        assert held.nearest(conn, "b", "m", query, 20).vectors is not None
        _insert(conn, _vector_rows("c", 300, rng, first_pk=5000))
        assert held.nearest(conn, "c", "m", query, 20).vectors is None
        assert held.nearest(conn, "a", "m", query, 20).vectors is not None
        assert held.nearest(conn, "b", "m", query, 20).vectors is not None


def test_warming_holds_the_largest_tenants_vectors_and_the_next_ones_signatures_only():
    """Warmed largest first, a tenant whose vectors do not fit beside the larger ones' holds
    its signatures only; it does not make the largest one's vectors go."""
    from runtime_svc.storage.repositories import TenantEntries

    engine, rng, query, held = _bounded(29)
    with engine.begin() as conn:
        _insert(conn, _vector_rows("a", 200, rng, first_pk=1))
        _insert(conn, _vector_rows("b", 100, rng, first_pk=1000))
    tenants = [TenantEntries("b", 100), TenantEntries("a", 200)]
    assert held.warm(engine.connect, tenants, "m", 0) == 300
    with engine.begin() as conn:
        assert held.nearest(conn, "a", "m", query, 20).vectors is not None
        b = held.nearest(conn, "b", "m", query, 20)
        assert b.vectors is None and len(b.seqs) == 20


def test_two_tenants_caught_up_at_once_hold_no_more_vectors_than_the_bound(monkeypatch, tmp_path):
    """The room a tenant's coming vectors need is taken when it is found, not as they are
    read: a second tenant read meanwhile does not count on it."""
    import threading

    from runtime_svc.retrieval.vectors import signatures
    from runtime_svc.retrieval.vectors.signature_rows import HeldRows

    monkeypatch.setattr(signatures, "READ_ROWS", 50)
    engine, _ = _vectors_table(f"sqlite:///{tmp_path / 'vectors.db'}")
    rng = np.random.default_rng(31)
    held = signatures.Signatures(max_vectors=250)
    with engine.begin() as conn:
        _insert(conn, _vector_rows("a", 200, rng, first_pk=1))
        _insert(conn, _vector_rows("b", 200, rng, first_pk=1000))
    a = held._entry("a", "m")
    a_read_some, b_read = threading.Event(), threading.Event()
    append = HeldRows.append

    def pausing(self, *rows):  # type: ignore[no-untyped-def]
        append(self, *rows)
        if self is a and not a_read_some.is_set():  # a's first read: b's catch-up now
            a_read_some.set()
            assert b_read.wait(30)

    monkeypatch.setattr(HeldRows, "append", pausing)

    def catch_up(tenant: str) -> None:
        with engine.begin() as conn:
            held.refresh(conn, tenant, "m")

    reading_a = threading.Thread(target=catch_up, args=("a",))
    reading_a.start()
    assert a_read_some.wait(30)
    catch_up("b")
    b_read.set()
    reading_a.join(30)
    in_all = sum(len(h.vectors) for h in held._held.values() if h.vectors is not None)
    assert 0 < in_all <= 250
    assert held._held[("b", "m")].vectors is not None  # the one read last holds its own


def test_a_sweep_brings_every_tenant_held_up_to_date_without_a_search():
    """The vectors of a source revoked or erased since leave the held rows when the runtime's
    minute sweep runs, whether or not the tenant is searched again; those stored since wait
    for its next search (an idle tenant does not grow)."""
    from sqlalchemy import delete

    from runtime_svc.domain.entry_keys import with_passage
    from runtime_svc.retrieval.vectors.signatures import Signatures
    from runtime_svc.storage.models import SearchPosting, TenantState

    engine, table = _vectors_table()
    rng = np.random.default_rng(37)
    held = Signatures()
    with engine.begin() as conn:
        _insert(conn, _vector_rows("t", 50, rng, first_pk=1))
        held.refresh(conn, "t", "m")
        gone = [r.seq for r in conn.execute(table.select().where(table.c.source_pk <= 10))]
        conn.execute(delete(table).where(table.c.source_pk <= 10))
        postings = SearchPosting.__table__
        erased = [with_passage(pk, 0) for pk in range(1, 11)]
        conn.execute(delete(postings).where(postings.c.pk.in_(erased)))
        conn.execute(TenantState.__table__.insert().values(tenant_id="t", index_stamp=1))
        _insert(conn, _vector_rows("t", 5, rng, first_pk=100))
    held.sweep(engine.connect)
    rows = held._held[("t", "m")]
    assert rows.seqs is not None and len(rows) == 40
    assert not set(gone) & set(rows.seqs.tolist())


def test_a_tenant_busy_when_its_room_is_needed_lets_its_vectors_go_afterwards():
    """A search holding the least recently used tenant's rows does not cost the tenant that
    needs the room its vectors for good: the busy one lets them go when next brought up to
    date, and the bound holds from then on."""
    engine, rng, query, held = _bounded(41)
    with engine.begin() as conn:
        _insert(conn, _vector_rows("a", 200, rng, first_pk=1))
        assert held.nearest(conn, "a", "m", query, 20).vectors is not None
        _insert(conn, _vector_rows("b", 100, rng, first_pk=1000))
        a = held._entry("a", "m")
        with a.lock:  # a search of tenant a, under way
            assert held.nearest(conn, "b", "m", query, 20).vectors is not None
        assert held.nearest(conn, "a", "m", query, 20).vectors is None  # let go, at last
        in_all = sum(len(h.vectors) for h in held._held.values() if h.vectors is not None)
        assert in_all == 100

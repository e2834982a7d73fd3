"""A vector found is shown with its source as of the vector's own read: a row read earlier in
the search (by the lexical side, on PostgreSQL in an earlier statement's snapshot) of an older
revision is read again, and only eligible sources are read to be shown."""

from __future__ import annotations

import itertools
import time

import numpy as np
from sqlalchemy import update

from runtime_svc.domain import entry_keys
from runtime_svc.domain.passages import Window
from runtime_svc.retrieval.source_checks import Sources, Vectors
from runtime_svc.retrieval.take import Verdict
from runtime_svc.storage.models import MemoryVectorRow, SourceRow
from runtime_svc.storage.unit_of_work import UnitOfWork
from tests.retrieval.conftest import MODEL, Doc, fill, store_vectors

TENANTS = itertools.count()


def _with_vectors(database):  # type: ignore[no-untyped-def]
    uow = UnitOfWork(database, window=Window())
    tenant = fill(
        uow, f"shown-{next(TENANTS)}", [Doc(("a",)), Doc(("b",), eligible=False)], Window()
    )
    rng = np.random.default_rng(1)
    keys = [key for keyed in tenant.entries.values() for key in keyed]
    store_vectors(uow, tenant, {key: rng.standard_normal(8).tolist() for key in keys})
    return uow, tenant


def test_a_row_shown_of_an_older_revision_is_read_again(database):
    uow, tenant = _with_vectors(database)
    eligible, refused = tenant.entries
    now = int(time.time() * 1e6)
    with uow.read(tenant.tenant_id) as tx:
        shown: dict = {}
        Sources(tx.conn, tenant.tenant_id, now, shown).check([eligible])
    with uow.write(tenant.tenant_id) as tx:  # a new revision since (an append, an update)
        s = SourceRow.__table__
        tx.conn.execute(update(s).where(s.c.pk == eligible).values(revision=2))
    with uow.read(tenant.tenant_id) as tx:
        seqs = [r.seq for r in tx.conn.execute(MemoryVectorRow.__table__.select())]
        found = Vectors(tx.conn, tenant.tenant_id, MODEL, now, shown).check(seqs)
    by_pk = {c.key and entry_keys.source_pk(c.key): c for c in found.values()}
    assert by_pk[eligible].verdict is Verdict.ELIGIBLE
    assert by_pk[eligible].row is not None and by_pk[eligible].row.revision == 2
    assert by_pk[refused].verdict is Verdict.KEPT and by_pk[refused].row is None
    assert refused not in shown  # nothing of a refused source is read to be shown
    assert shown[eligible].revision == 2


def test_a_source_changed_between_the_two_reads_is_kept_not_dropped(database):
    """On PostgreSQL an append may commit between the vectors' read and the rows' read: the
    vector is kept for a later search (refused now), never dropped as gone (a dropped vector
    leaves the held rows for good)."""
    import dataclasses

    uow, tenant = _with_vectors(database)
    eligible, _ = tenant.entries
    now = int(time.time() * 1e6)

    class AppendedBetween(dict):  # the row as read after the append: a revision later
        def __setitem__(self, pk, row):  # type: ignore[no-untyped-def]
            super().__setitem__(pk, dataclasses.replace(row, revision=row.revision + 1))

    with uow.read(tenant.tenant_id) as tx:
        seqs = [r.seq for r in tx.conn.execute(MemoryVectorRow.__table__.select())]
        found = Vectors(tx.conn, tenant.tenant_id, MODEL, now, AppendedBetween()).check(seqs)
    by_pk = {c.key and entry_keys.source_pk(c.key): c for c in found.values()}
    assert by_pk[eligible].verdict is Verdict.KEPT


def test_a_passage_of_a_revision_newer_than_its_row_is_not_a_hit():
    # On PostgreSQL a later statement of a search can see a session's next revision's
    # entries beside its row as an earlier statement read it.
    from runtime_svc.domain.passages import Range
    from runtime_svc.domain.sources import Body, Message
    from runtime_svc.retrieval.hits import make_hit
    from runtime_svc.storage.shown_sources import ShownSource as Shown

    said = Body(messages=(Message("user", "the kite"), Message("assistant", "so")))
    row = Shown(7, "src_s", 2, said.generated_form(), "", "conversation", said.raw())
    old, new = (entry_keys.entry_key(7, Range(a, b)) for a, b in ((0, 1), (1, 2)))
    assert make_hit(1.0, old, row, Window()).in_its_row
    assert not make_hit(1.0, new, row, Window()).in_its_row
    whole = Shown(8, "src_m", 1, "a memory", "", "memory", "a memory")
    assert make_hit(1.0, entry_keys.entry_key(8, None), whole, Window()).in_its_row

"""A runtime empties its caches of what memories' texts hold when another runtime on the same
database erased a source (it sees the erasure recorded at its minute's look), and once more
at the look after (a search of a snapshot older than the erasure may have filled them)."""

from __future__ import annotations

from agentmem_kernel.config import Storage
from runtime_svc.retrieval import fusion
from runtime_svc.services.clock import system_clock
from runtime_svc.services.erasure_finisher import ErasureFinisher
from runtime_svc.services.journal import EventRetention, Journal
from runtime_svc.storage import migrate
from runtime_svc.storage.db import open_database
from runtime_svc.storage.unit_of_work import UnitOfWork
from tests.harness import database_url


def test_an_erasure_made_by_another_runtime_empties_this_ones_caches(tmp_path):
    db = open_database(Storage(url=database_url(tmp_path / "e.db")))
    migrate.upgrade(db.writer)
    uow = UnitOfWork(db)
    finisher = ErasureFinisher(uow, Journal(EventRetention(1000), lambda _: None), system_clock)

    def cached() -> bool:
        return bool(fusion._stems._found)

    try:
        finisher.forget_erased_elsewhere()  # the first look
        finisher.forget_erased_elsewhere()  # and the one after it: nothing new since
        fusion.held_stems("my zqvortexian bicycle is teal")
        finisher.forget_erased_elsewhere()
        assert cached()  # no erasure since: kept
        with uow.write("tenant-a") as tx:  # another runtime's erasure
            tx.erasures.record("src_erased", 1)
        finisher.forget_erased_elsewhere()
        assert not cached()
        fusion.held_stems("my zqvortexian bicycle is teal")  # an older snapshot's search
        finisher.forget_erased_elsewhere()
        assert not cached()
        fusion.held_stems("my zqvortexian bicycle is teal")
        finisher.forget_erased_elsewhere()
        assert cached()
        with uow.write("tenant-a") as tx:  # the same source again: turns of it, then all
            tx.erasures.record("src_erased", 2)
        finisher.forget_erased_elsewhere()
        assert not cached()
    finally:
        db.dispose()

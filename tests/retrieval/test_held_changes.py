"""Postings held in memory follow each committed change of their tenant's index as it is
made: the first search after many classification changes, inserts and edits reads nothing
back (no catch-up work, counted), and ranks like the brute force over the eligible entries.
A change this process was not told of (another process's) is still found by its stamp."""

from __future__ import annotations

import dataclasses
import itertools
import time

from runtime_svc.domain import entry_keys
from runtime_svc.domain.passages import Window
from runtime_svc.domain.query import Query
from runtime_svc.domain.sources import Classification
from runtime_svc.retrieval.held.held_postings import Held
from runtime_svc.retrieval.held.mirrors import Mirrors
from runtime_svc.retrieval.lexical.lexical_search import LexicalSearch
from runtime_svc.storage.unit_of_work import UnitOfWork
from tests.retrieval.conftest import Doc, Tenant, _source, fill, reference, seen

WINDOW = Window()
TENANTS = itertools.count()
WORDS = ["apple", "pie", "river", "lamp"]


def _search(uow: UnitOfWork, mirrors: Mirrors, tenant: Tenant, query: str) -> list:  # type: ignore[type-arg]
    asked = Query.of(query)
    with uow.read(tenant.tenant_id) as tx:
        hits = LexicalSearch(tx.conn, tenant.tenant_id, window=WINDOW, mirrors=mirrors).search(
            asked, 10, int(time.time() * 1e6)
        )
    assert seen(hits) == reference(tenant, asked.terms, 10, True), query
    return hits


def _held(mirrors: Mirrors, tenant: Tenant) -> Held:
    held = mirrors.held(tenant.tenant_id)
    assert held is not None
    return held


def _classify(uow: UnitOfWork, tenant: Tenant, pk: int, eligible: bool) -> None:
    """As SetSourceClassification does: a new revision, the index entry following it."""
    with uow.write(tenant.tenant_id) as tx:
        stored = tx.sources.get(tenant.source_ids[pk])
        assert stored is not None
        cls = Classification.ACTIVE if eligible else Classification.COLD
        updated = dataclasses.replace(
            stored.source, classification=cls, revision=stored.source.revision + 1
        )
        tx.writer.save(stored, updated)
    tenant.eligible[pk] = eligible


def _docs(n: int) -> list[Doc]:
    return [Doc(words=(WORDS[i % 4], WORDS[(i * 3) % 4], "apple", f"n{i}")) for i in range(n)]


def test_the_first_search_after_many_changes_catches_up_on_nothing(database) -> None:
    mirrors = Mirrors(0, 10**7)
    uow = UnitOfWork(database, window=WINDOW, index_changed=mirrors.apply)
    tenant = fill(uow, f"held-changes-{next(TENANTS)}", _docs(80), WINDOW)
    _search(uow, mirrors, tenant, "apple pie")  # loads what is held
    read_before = _held(mirrors, tenant).caught_up
    pks = sorted(tenant.source_ids)
    for pk in pks[::3]:  # a third made cold, each in its own transaction
        _classify(uow, tenant, pk, False)
    for pk in pks[::9]:  # some of them active again
        _classify(uow, tenant, pk, True)
    with uow.write(tenant.tenant_id) as tx:  # new sources
        for doc in _docs(5):
            source = _source(doc)
            stored = tx.writer.create(source, indexed=True)
            tenant.source_ids[stored.pk] = source.source_id
            tenant.eligible[stored.pk] = True
            tenant.entries[stored.pk] = {
                entry_keys.entry_key(stored.pk): source.body.generated_form()
            }
    for query in ["apple pie", "river lamp", "n3 n7 apple", "lamp"]:
        _search(uow, mirrors, tenant, query)
    assert _held(mirrors, tenant).caught_up == read_before


def test_a_change_not_told_is_found_by_its_stamp(database) -> None:
    mirrors = Mirrors(0, 10**7)
    uow = UnitOfWork(database, window=WINDOW, index_changed=mirrors.apply)
    tenant = fill(uow, f"held-changes-{next(TENANTS)}", _docs(40), WINDOW)
    _search(uow, mirrors, tenant, "apple pie")
    elsewhere = UnitOfWork(database, window=WINDOW)  # another process: tells nobody
    pks = sorted(tenant.source_ids)
    _classify(uow, tenant, pks[0], False)
    _classify(elsewhere, tenant, pks[1], False)
    _classify(uow, tenant, pks[2], False)  # told ahead of its turn: waits for the gap
    read_before = _held(mirrors, tenant).caught_up
    _search(uow, mirrors, tenant, "apple pie")
    assert _held(mirrors, tenant).caught_up == read_before + 2  # from the gap on
    _classify(uow, tenant, pks[3], False)
    _search(uow, mirrors, tenant, "apple")
    assert _held(mirrors, tenant).caught_up == read_before + 2

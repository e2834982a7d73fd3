"""Sources looked up by pk (a search's checks) or by source id (a prompt's citations, the
dates of its memories): only the caller's tenant's are found, on either backend. On
PostgreSQL each lookup goes through the primary key or the unique (tenant, source id) index
even when the tables have no planner statistics (a burst of inserts, before they are
analysed): through the tenant's index, one check read every source of the tenant
(docs/benchmarks.md, common words)."""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest

from runtime_svc.assembly import said as said_module
from runtime_svc.retrieval import source_checks
from runtime_svc.retrieval.source_checks import Sources
from runtime_svc.retrieval.take import Verdict
from runtime_svc.services.inserts import InsertCommand
from runtime_svc.storage import sources as sources_module
from runtime_svc.storage.read_rows import _read_sql
from tests.harness import ADMIN_A, ADMIN_B
from tests.service.wiring import caller

POSTGRES = bool(os.environ.get("AGENTMEM_TEST_DATABASE_URL"))


def _insert(cases: Any, key: Any, text: str) -> str:
    return str(cases.inserts.insert(caller(key), InsertCommand(content=text)).source_id)


def _pk(made: Any, source_id: str) -> int:
    return int(made.sql("SELECT pk FROM sources WHERE source_id = :s", s=source_id)[0][0])


def test_lookups_find_only_the_tenants_sources(make_service):
    made = make_service()
    mine = _insert(made.cases, ADMIN_A, "Alice likes the coffee")
    theirs = _insert(made.cases, ADMIN_B, "Bob likes the coffee")
    pks = [_pk(made, mine), _pk(made, theirs)]
    now = int(time.time() * 1_000_000)
    with made.uow.read("tenant-a") as tx:
        checked = Sources(tx.conn, "tenant-a", now).check(pks)
        assert checked[pks[0]].verdict is Verdict.ELIGIBLE
        assert checked[pks[1]].verdict is Verdict.DROPPED
        first = Sources(tx.conn, "tenant-a", now).check_first(pks, 2)
        assert list(first) == [pks[0]]
        assert tx.sources.eligible_revisions([mine, theirs, "src_none"], now) == {(mine, 1)}
        assert set(said_module.said(tx.conn, "tenant-a", [mine, theirs, "src_none"])) == {mine}
        assert said_module.said(tx.conn, "tenant-a", []) == {}


def _copies(made: Any, source_id: str, n: int) -> None:
    """`n` more sources of the tenant, copies of one under new pks and source ids."""
    columns = [
        r[0]
        for r in made.sql(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'sources' AND table_schema = current_schema() "
            "ORDER BY ordinal_position"
        )
    ]
    values = {
        "pk": "(SELECT max(pk) FROM sources) + g",
        "source_id": "source_id || '_' || g",
        "request_id": "''",
    }
    chosen = ", ".join(values.get(c, c) for c in columns)
    made.sql(
        f"INSERT INTO sources ({', '.join(columns)}) SELECT {chosen} "
        "FROM sources, generate_series(1, :n) AS g WHERE source_id = :s",
        n=n,
        s=source_id,
    )


def _plan(made: Any, make: Any, params: dict[str, Any]) -> str:
    sql, _, fixed = _read_sql(make, made.db.reader.dialect)
    with made.db.reader.connect() as conn:
        rows = conn.exec_driver_sql("EXPLAIN (FORMAT JSON) " + sql, {**fixed, **params}).all()
    return json.dumps(rows[0][0])


@pytest.mark.skipif(not POSTGRES, reason="PostgreSQL only")
def test_lookups_take_the_unique_indexes_without_statistics(make_service):
    made = make_service()
    made.sql("ALTER TABLE sources SET (autovacuum_enabled = false)")
    mine = _insert(made.cases, ADMIN_A, "Alice likes the coffee")
    _copies(made, mine, 20_000)
    assert not made.sql(
        "SELECT 1 FROM pg_stats WHERE tablename = 'sources' AND schemaname = current_schema()"
    )
    ids = [mine, *(f"{mine}_{i}" for i in range(1, 13))]
    pks = [r[0] for r in made.sql("SELECT pk FROM sources ORDER BY pk LIMIT 13")]
    now = int(time.time() * 1_000_000)
    by_pk = {"pks": pks, "tenant_id": "tenant-a", "now_us": now, "need": 10}
    by_id = {"ids": ids, "tenant": "tenant-a", "now_us": now}
    plans = {
        "states": _plan(made, source_checks._states_statement, by_pk),
        "first": _plan(made, source_checks._PG_FIRST, by_pk),
        "shown": _plan(made, source_checks._shown_statement, by_pk),
        "eligible": _plan(made, sources_module._eligible_of("postgresql"), by_id),
        "said": _plan(made, said_module._statement("postgresql"), by_id),
    }
    for name, plan in plans.items():
        assert "ix_sources_created" not in plan, name
        assert "Seq Scan" not in plan or '"Relation Name": "sources"' not in plan, name
    for name in ("states", "first", "shown"):
        assert '"Index Name": "pk_sources"' in plans[name], name
    for name in ("eligible", "said"):
        assert '"Index Name": "uq_sources_tenant_id"' in plans[name], name


@pytest.mark.skipif(not POSTGRES, reason="PostgreSQL only")
def test_writes_are_planned_for_their_values(make_service):
    """A writer connection keeps no generic plan chosen while the tables were small; readers
    keep the driver's prepared plans."""
    made = make_service()
    with made.db.writer.connect() as conn:
        assert conn.exec_driver_sql("SHOW plan_cache_mode").scalar() == "force_custom_plan"
    with made.db.reader.connect() as conn:
        assert conn.exec_driver_sql("SHOW plan_cache_mode").scalar() == "auto"

"""The runtime's use cases as its composition root wires them
(`runtime_svc.composition.use_cases`, the call the runtime makes), on a fresh migrated
database, for tests that call them without gRPC; and the caller the gateway would send."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import text

from agentmem.contract import save_intents
from agentmem.contract.errors import AgentmemError
from agentmem_kernel import config
from runtime_svc.adapters import tokenizers
from runtime_svc.composition import UseCases, unit_of_work, use_cases
from runtime_svc.domain.caller import Caller
from runtime_svc.retrieval import LexicalOnlyReason
from runtime_svc.retrieval.held.mirrors import Mirrors
from runtime_svc.storage import migrate
from runtime_svc.storage.db import Database, open_database
from runtime_svc.storage.unit_of_work import UnitOfWork
from tests.harness import ADMIN_A, Key, base_settings, drop_database


def caller(key: Key = ADMIN_A, request_id: str = "") -> Caller:
    """The caller the gateway would send for `key`'s credential."""
    trusted = key.trusted_save_intents
    return Caller(
        tenant_id=key.tenant,
        principal_id=key.principal,
        principal_kind=key.kind,
        scopes=frozenset(key.scopes),
        request_id=request_id,
        trusted_save_intents=save_intents.ALL if trusted is None else frozenset(trusted),
    )


def reason(err: AgentmemError) -> str:
    return err.reason.value


@dataclass
class Service:
    """The use cases on one database."""

    settings: config.Settings
    db_path: Path  # the SQLite file (unused on PostgreSQL)
    db: Database
    uow: UnitOfWork
    mirrors: Mirrors  # the postings held in memory
    cases: UseCases
    _closed: bool = field(default=False)

    def sql(self, statement: str, **params: Any) -> list[tuple[Any, ...]]:
        """Runs SQL on the database directly (to inspect)."""
        with self.db.writer.begin() as conn:
            result = conn.execute(text(statement), params)
            return [tuple(r) for r in result] if result.returns_rows else []

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.cases.finisher.stop()
            self.uow.close()
            self.db.dispose()
        finally:
            drop_database(self.settings.storage.url)


def wired(
    settings: config.Settings,
    uow: UnitOfWork,
    mirrors: Mirrors | None = None,
    notify: Callable[[str], None] = lambda _tenant: None,
) -> UseCases:
    """The use cases on `uow`, by words only (no model), as the runtime wires them."""
    held = (
        mirrors
        if mirrors is not None
        else Mirrors(settings.search.held_min_entries, settings.search.held_max_postings)
    )
    return use_cases(
        settings,
        uow,
        held,
        semantic=None,
        lexical_only_reason=LexicalOnlyReason.DISABLED,
        counter=tokenizers.counter(settings.retrieval.tokenizer),
        notify=notify,
    )


def start(tmp: Path, **overrides: Any) -> Service:
    """The runtime's use cases on a fresh database; keyword overrides are dotted config keys
    (`memory__insert_policy="review_pending"`)."""
    flat = {k.replace("__", "."): v for k, v in overrides.items()}
    settings = config.load(None, base_settings(tmp, **flat))
    db = open_database(settings.storage)
    migrate.upgrade(db.writer)
    mirrors = Mirrors(settings.search.held_min_entries, settings.search.held_max_postings)
    uow = unit_of_work(settings, db, mirrors)
    cases = wired(settings, uow, mirrors)
    cases.finisher.start()
    return Service(settings, tmp, db, uow, mirrors, cases)

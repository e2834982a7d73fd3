"""Sources and the derived records stored beside them (prompt records and their provenance)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import (
    ColumnElement,
    Connection,
    Row,
    Select,
    Table,
    and_,
    bindparam,
    delete,
    insert,
    literal_column,
    or_,
    select,
    update,
)

from agentmem.core.errors import AgentmemError, Reason
from runtime_svc.domain.sources import (
    Body,
    Classification,
    Provenance,
    Review,
    SaveIntent,
    Source,
    SourceKind,
    Status,
)
from runtime_svc.storage import compiled, eligibility_sql
from runtime_svc.storage.models import (
    DerivedProvenanceRow,
    PromptRecordRow,
    SourceRow,
    TenantPolicyRow,
)
from runtime_svc.storage.repositories import _Repository

sources = cast(Table, SourceRow.__table__)
prompt_records = cast(Table, PromptRecordRow.__table__)
derived_provenance = cast(Table, DerivedProvenanceRow.__table__)


_INSERT_SOURCE = insert(sources)
_BY_SOURCE_ID = select(sources).where(
    sources.c.tenant_id == bindparam("tenant"), sources.c.source_id == bindparam("key")
)
# `request_id != ''` repeats the partial index's condition, so the planner may use it (a
# bound key alone does not prove it): without it SQLite reads every source of the tenant.
_BY_REQUEST_ID = select(sources).where(
    sources.c.tenant_id == bindparam("tenant"),
    sources.c.request_id == bindparam("key"),
    sources.c.request_id != literal_column("''"),
)


@dataclass(frozen=True)
class Stored:
    pk: int  # internal; never leaves the runtime
    source: Source
    indexed_revision: int  # 0: no index entry


@dataclass(frozen=True)
class SourceFilter:
    classification: str = ""
    status: str = ""
    effective_state: str = ""
    kind: str = ""
    thread_id: str = ""


@dataclass(frozen=True)
class Summary:
    source_id: str
    revision: int
    kind: str
    classification: str
    status: str
    state: str
    created_at_us: int


@dataclass(frozen=True)
class Position:
    """Where a newest-first listing stopped: the last source's creation time and id (the
    tie-breaker). Its text form is what a page token carries."""

    created_at_us: int
    source_id: str

    def text(self) -> str:
        return f"{self.created_at_us}.{self.source_id}"

    @staticmethod
    def parse(text: str) -> Position | None:
        """None for the first page ("") and for text that is not a position."""
        created, _, source_id = text.partition(".")
        if not (created.isdigit() and source_id):
            return None
        return Position(int(created), source_id)


def _newest_first(stmt: Select[Any], after: Position | None) -> Select[Any]:
    """Newest first, ties by source id, after `after` (keyset pagination)."""
    c = sources.c
    if after is not None:
        stmt = stmt.where(
            or_(
                c.created_at_us < after.created_at_us,
                and_(c.created_at_us == after.created_at_us, c.source_id < after.source_id),
            )
        )
    return stmt.order_by(c.created_at_us.desc(), c.source_id.desc())


class SourceRepository(_Repository):
    def add(self, s: Source, indexed_revision: int = 0) -> int:
        """A new source's row; `indexed_revision` if its index entry is written in the same
        transaction (by the source writer)."""
        values = _values(self.tenant_id, s)
        values["indexed_revision"] = indexed_revision
        return compiled.insert(self.conn, _INSERT_SOURCE, values)

    def add_many(self, batch: list[Source]) -> list[int]:
        """Bulk import: adds the sources and returns their internal pks, in order."""
        self.conn.execute(insert(sources), [_values(self.tenant_id, s) for s in batch])
        ids = [s.source_id for s in batch]
        pks = dict(
            self.conn.execute(
                select(sources.c.source_id, sources.c.pk).where(
                    sources.c.tenant_id == self.tenant_id, sources.c.source_id.in_(ids)
                )
            ).all()
        )
        return [pks[i] for i in ids]

    def get(self, source_id: str) -> Stored | None:
        return self._one(_BY_SOURCE_ID, source_id)

    def require(self, source_id: str) -> Stored:
        """The source, or NOT_FOUND (also for another tenant's)."""
        stored = self.get(source_id)
        if stored is None:
            raise AgentmemError(Reason.NOT_FOUND)
        return stored

    def by_request_id(self, request_id: str) -> Stored | None:
        return self._one(_BY_REQUEST_ID, request_id)

    def _one(self, stmt: Select[Any], key: str) -> Stored | None:
        row = self.conn.execute(stmt, {"tenant": self.tenant_id, "key": key}).one_or_none()
        return _stored(row) if row else None

    def save_state(self, pk: int, s: Source) -> None:
        """Writes a new revision's state (classification, status, review, save intent,
        revocation, assent; an erased source's emptied bytes). Called by the source writer
        only (`runtime_svc.storage.source_writer`)."""
        review = s.review
        values: dict[str, object] = dict(
            revision=s.revision,
            classification=s.classification.value,
            status=s.status.value,
            updated_at_us=s.updated_at_us,
            save_intent=s.save_intent.intent,
            save_intent_source=s.save_intent.source,
            save_intent_evidence=s.save_intent.evidence,
            reviewed_by=review.reviewer_id if review else "",
            reviewed_at_us=review.reviewed_at_us if review else 0,
            review_note=review.note if review else "",
            assent_id=s.assent_id,
            assent_key_id=s.assent_key_id,
            erased_at_us=s.erased_at_us,
            revoked_at_us=s.revoked_at_us,
            assent_state=s.assent_state,
            assent_expires_at_us=s.assent_expires_at_us,
        )
        if s.erased_at_us:  # no byte of the content and no hash of it is kept
            values |= {"raw": "", "content_sha256": "", "labels": "{}", "generated_form": ""}
        self.conn.execute(
            update(sources)
            .where(sources.c.pk == pk, sources.c.tenant_id == self.tenant_id)
            .values(**values)
        )

    def eligible_now(self, pk: int, now_us: int) -> bool:
        """The retrieval predicate itself, on one source row."""
        stmt = select(sources.c.pk).where(
            sources.c.pk == pk,
            sources.c.tenant_id == self.tenant_id,
            eligibility_sql.eligible(sources.c, _now(now_us)),
        )
        return self.conn.execute(stmt).first() is not None

    def eligible_revisions(self, source_ids: list[str], now_us: int) -> set[tuple[str, int]]:
        """(source id, revision) of those of the sources that are eligible now."""
        stmt = select(sources.c.source_id, sources.c.revision).where(
            sources.c.tenant_id == self.tenant_id,
            sources.c.source_id.in_(source_ids),
            eligibility_sql.eligible(sources.c, _now(now_us)),
        )
        return {(r.source_id, r.revision) for r in self.conn.execute(stmt)}

    def unindexed_matching(self, stems: set[str], limit: int) -> list[Stored]:
        """Sources that are not erased and have no index entry (pending, rejected, revoked),
        whose stored text holds one of the stems: what explanation reports beside the index's
        matches. Matched here, by the same text analysis, because such sources have (and must
        have) no derived record to search."""
        from runtime_svc.domain import text

        stmt = (
            select(sources)
            .where(
                sources.c.tenant_id == self.tenant_id,
                sources.c.indexed_revision == 0,
                sources.c.erased_at_us == 0,
            )
            .order_by(sources.c.source_id)
        )
        out = []
        for row in self.conn.execute(stmt):
            stored = _stored(row)
            if stems & {text.stem(w) for w in text.words(stored.source.matchable_text())}:
                out.append(stored)
                if len(out) >= limit:
                    break
        return out

    def by_owner_key(self, owner: str, key_id: str) -> list[Stored]:
        rows = self.conn.execute(
            select(sources).where(
                sources.c.tenant_id == self.tenant_id,
                sources.c.canonical_owner == owner,
                sources.c.assent_key_id == key_id,
            )
        )
        return [_stored(r) for r in rows]

    def purge_generated_form(self, pk: int) -> None:
        self.conn.execute(
            update(sources)
            .where(sources.c.pk == pk, sources.c.tenant_id == self.tenant_id)
            .values(generated_form="", generated_revision=0)
        )

    def has_generated_form(self, pk: int) -> bool:
        return bool(
            self.conn.execute(
                select(sources.c.generated_form).where(
                    sources.c.pk == pk, sources.c.tenant_id == self.tenant_id
                )
            ).scalar_one()
        )

    def page_memories(
        self, statuses: tuple[str, ...], after: Position | None, limit: int
    ) -> list[Stored]:
        """Memories of these review statuses, newest first."""
        stmt = select(sources).where(
            sources.c.tenant_id == self.tenant_id, sources.c.status.in_(statuses)
        )
        return [_stored(r) for r in self.conn.execute(_newest_first(stmt, after).limit(limit))]

    def page(
        self, f: SourceFilter, after: Position | None, limit: int, now_us: int
    ) -> list[Summary]:
        """Sources matching the filter, newest first (metadata and effective state)."""
        state = eligibility_sql.state(sources.c, _now(now_us))
        stmt = select(
            sources.c.source_id,
            sources.c.revision,
            sources.c.kind,
            sources.c.classification,
            sources.c.status,
            state.label("state"),
            sources.c.created_at_us,
        ).where(sources.c.tenant_id == self.tenant_id)
        stmt = _newest_first(stmt, after).limit(limit)
        for column, value in (
            ("classification", f.classification),
            ("status", f.status),
            ("kind", f.kind),
            ("thread_id", f.thread_id),
        ):
            if value:
                stmt = stmt.where(sources.c[column] == value)
        if f.effective_state:
            stmt = stmt.where(state == f.effective_state)
        if not (f.status or f.effective_state):
            # Default reads leave out pending, rejected and erased sources.
            stmt = stmt.where(sources.c.status == Status.ACTIVE.value)
        return [
            Summary(
                source_id=r.source_id,
                revision=r.revision,
                kind=r.kind,
                classification=r.classification,
                status=r.status,
                state=r.state,
                created_at_us=r.created_at_us,
            )
            for r in self.conn.execute(stmt)
        ]


def _values(tenant_id: str, s: Source) -> dict[str, object]:
    return {
        "tenant_id": tenant_id,
        "source_id": s.source_id,
        "revision": s.revision,
        "kind": s.kind.value,
        "classification": s.classification.value,
        "status": s.status.value,
        "thread_id": s.thread_id,
        "raw": s.body.raw(),
        "content_sha256": s.body.sha256(),
        "generated_form": s.body.generated_form(),
        "generated_revision": s.revision,
        "indexed_revision": 0,  # set with the index entry (search index, source writer)
        "principal_id": s.provenance.principal_id,
        "principal_kind": s.provenance.principal_kind,
        "surface": s.provenance.surface,
        "request_id": s.provenance.request_id,
        "save_intent": s.save_intent.intent,
        "save_intent_source": s.save_intent.source,
        "save_intent_evidence": s.save_intent.evidence,
        "save_intent_held": s.save_intent_held,
        "labels": json.dumps(s.labels, sort_keys=True),
        "created_at_us": s.created_at_us,
        "updated_at_us": s.updated_at_us,
        "revoked_at_us": s.revoked_at_us,
        "assent_state": s.assent_state,
        "assent_expires_at_us": s.assent_expires_at_us,
        "canonical_owner": s.canonical_owner,
        "assent_id": s.assent_id,
        "assent_key_id": s.assent_key_id,
        "observed_at_us": s.observed_at_us or s.created_at_us,
    }


def _now(now_us: int) -> ColumnElement[int]:
    return bindparam("now_us", now_us)


def _stored(r: Row[Any]) -> Stored:
    kind = SourceKind(r.kind)
    return Stored(
        pk=r.pk,
        source=Source(
            source_id=r.source_id,
            revision=r.revision,
            kind=kind,
            classification=Classification(r.classification),
            status=Status(r.status),
            thread_id=r.thread_id,
            body=Body.from_raw(kind, r.raw),
            provenance=Provenance(r.principal_id, r.principal_kind, r.surface, r.request_id),
            save_intent=SaveIntent(r.save_intent, r.save_intent_source, r.save_intent_evidence),
            save_intent_held=r.save_intent_held,
            labels=json.loads(r.labels),
            created_at_us=r.created_at_us,
            updated_at_us=r.updated_at_us,
            revoked_at_us=r.revoked_at_us,
            assent_state=r.assent_state,
            assent_expires_at_us=r.assent_expires_at_us,
            review=Review(r.reviewed_by, r.reviewed_at_us, r.review_note)
            if r.reviewed_by
            else None,
            canonical_owner=r.canonical_owner,
            assent_id=r.assent_id,
            assent_key_id=r.assent_key_id,
            erased_at_us=r.erased_at_us,
            observed_at_us=r.observed_at_us or r.created_at_us,
        ),
        indexed_revision=r.indexed_revision,
    )


class PromptRecords(_Repository):
    def citing(self, source_id: str) -> list[str]:
        return list(
            self.conn.execute(
                select(derived_provenance.c.derived_id).where(
                    derived_provenance.c.tenant_id == self.tenant_id,
                    derived_provenance.c.derived_kind == "prompt_record",
                    derived_provenance.c.source_id == source_id,
                )
            ).scalars()
        )

    def purge_citing(self, source_id: str) -> list[str]:
        """Deletes every prompt record that cited the source, with its provenance."""
        ids = self.citing(source_id)
        if ids:
            self.conn.execute(
                delete(derived_provenance).where(
                    derived_provenance.c.tenant_id == self.tenant_id,
                    derived_provenance.c.derived_kind == "prompt_record",
                    derived_provenance.c.derived_id.in_(ids),
                )
            )
            self.conn.execute(
                delete(prompt_records).where(
                    prompt_records.c.tenant_id == self.tenant_id,
                    prompt_records.c.prompt_record_id.in_(ids),
                )
            )
        return ids

    def add(
        self,
        record_id: str,
        *,
        thread_id: str,
        created_at_us: int,
        token_budget: int,
        tokens_used: int,
        query_sha256: str,
        cited: list[tuple[str, int]],
    ) -> None:
        self.conn.execute(
            insert(prompt_records).values(
                tenant_id=self.tenant_id,
                prompt_record_id=record_id,
                thread_id=thread_id,
                created_at_us=created_at_us,
                token_budget=token_budget,
                tokens_used=tokens_used,
                query_sha256=query_sha256,
            )
        )
        if cited:
            self.conn.execute(
                insert(derived_provenance),
                [
                    {
                        "tenant_id": self.tenant_id,
                        "derived_kind": "prompt_record",
                        "derived_id": record_id,
                        "source_id": sid,
                        "source_revision": rev,
                    }
                    for sid, rev in cited
                ],
            )


tenant_policies = cast(Table, TenantPolicyRow.__table__)


_SELECT_POLICY = select(tenant_policies.c.insert_policy, tenant_policies.c.revision).where(
    tenant_policies.c.tenant_id == bindparam("tenant")
)


class TenantPolicies(_Repository):
    """A tenant's override of the configured insert policy.

    `known`: overrides already read in this transaction, by tenant (shared by the writes of
    one group commit, which hold the tenants' row locks; see `UnitOfWork`); a save forgets
    the tenant's, and so must the rollback of a savepoint that may have saved one."""

    def __init__(
        self,
        conn: Connection,
        tenant_id: str,
        known: dict[str, tuple[str, int] | None] | None = None,
    ) -> None:
        super().__init__(conn, tenant_id)
        self._known = known

    def get(self) -> tuple[str, int] | None:
        if self._known is not None and self.tenant_id in self._known:
            return self._known[self.tenant_id]
        row = compiled.execute(self.conn, _SELECT_POLICY, {"tenant": self.tenant_id}).one_or_none()
        policy = (row.insert_policy, row.revision) if row else None
        if self._known is not None:
            self._known[self.tenant_id] = policy
        return policy

    def save(self, insert_policy: str, revision: int, now_us: int) -> None:
        if self._known is not None:
            self._known.pop(self.tenant_id, None)
        values = {"insert_policy": insert_policy, "revision": revision, "updated_at_us": now_us}
        if revision == 1:
            self.conn.execute(insert(tenant_policies).values(tenant_id=self.tenant_id, **values))
        else:
            self.conn.execute(
                update(tenant_policies)
                .where(tenant_policies.c.tenant_id == self.tenant_id)
                .values(**values)
            )

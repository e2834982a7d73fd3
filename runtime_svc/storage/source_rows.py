"""A source's row: the `sources` table, and a source ↔ its row."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import (
    ColumnElement,
    Row,
    Select,
    String,
    Table,
    bindparam,
    func,
    select,
    true,
)
from sqlalchemy.dialects import postgresql

from runtime_svc.domain import tails
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
from runtime_svc.storage.models import SourceRow

sources = cast(Table, SourceRow.__table__)


@dataclass(frozen=True)
class Stored:
    pk: int  # internal; never leaves the runtime
    source: Source
    indexed_revision: int  # 0: no index entry


def row_values(tenant_id: str, s: Source) -> dict[str, object]:
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
        "hold_reason": s.hold_reason,
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
        **sizes(s.body),
    }


def sizes(body: Body) -> dict[str, int]:
    """A conversation's size columns (a text's are 0)."""
    messages = body.messages
    return {
        "message_count": len(messages),
        "content_chars": tails.chars(messages),
        "first_sent_at_us": tails.first_sent_at_us(messages),
    }


def now_param(now_us: int) -> ColumnElement[int]:
    return bindparam("now_us", now_us)


def stored_from(r: Row[Any], raw: str | None = None, body: Body | None = None) -> Stored:
    """The source of a row: its body from `body`, else from `raw` (the whole
    conversation's stored form, `source_store.whole`), else from the row's `raw`."""
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
            body=body or Body.from_raw(kind, r.raw if raw is None else raw),
            provenance=Provenance(r.principal_id, r.principal_kind, r.surface, r.request_id),
            save_intent=SaveIntent(r.save_intent, r.save_intent_source, r.save_intent_evidence),
            save_intent_held=r.save_intent_held,
            hold_reason=r.hold_reason,
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


def tenants_by_pk(c: Any = sources.c) -> ColumnElement[bool]:
    """The row is the tenant's (`tenant_id` parameter), as a check only, for statements that
    look sources up by their pks: an expression, not the column, so neither planner can reach
    the rows through the tenant's indexes. With the column, a planner whose statistics are
    missing or stale (a table just filled by inserts, before it is analysed) can take the
    tenant's index and filter every one of its rows by pk: 20 ms a check at 20,000 sources
    on PostgreSQL, instead of a few lookups in the primary key (docs/benchmarks.md)."""
    return cast(ColumnElement[str], c.tenant_id).concat("") == bindparam("tenant_id")


def by_source_ids(dialect: str, columns: Any, *where: Any) -> Select[Any]:
    """`columns` of those of the tenant's sources (`tenant` parameter) whose source ids are
    in the list parameter `ids` and that meet `where`. On PostgreSQL each id is looked up on
    its own (a lateral subquery per id, which the planner cannot merge into a scan): by the
    unique (tenant, source id) index, which an equality on both columns proves gives at most
    one row, whatever the statistics say. As one `IN` list, a planner without statistics (a
    table just filled, not yet analysed) reads every source of the tenant through its
    creation index and filters them (docs/benchmarks.md). SQLite's planner takes the unique
    index for the list."""
    if dialect != "postgresql":
        return select(*columns).where(
            sources.c.tenant_id == bindparam("tenant"),
            sources.c.source_id.in_(bindparam("ids", expanding=True)),
            *where,
        )
    want = (
        func.unnest(bindparam("ids", type_=postgresql.ARRAY(String)))
        .table_valued("id")
        .render_derived(name="want")
    )
    found = (
        select(*columns)
        .where(
            sources.c.tenant_id == bindparam("tenant"),
            sources.c.source_id == want.c.id,
            *where,
        )
        .limit(1)  # at most one anyway; it also keeps the subquery per id
        .lateral("found")
    )
    return select(*found.c).select_from(want.join(found, true()))

"""Sources: their rows written, read and changed, one tenant at a time (listings:
`source_pages`; the row of a source: `source_rows`)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, cast

from sqlalchemy import (
    Select,
    bindparam,
    insert,
    literal_column,
    select,
    update,
)

from agentmem.contract.errors import AgentmemError, Reason
from runtime_svc.domain import tails
from runtime_svc.domain.sources import Body, Message, Source, SourceKind
from runtime_svc.domain.turns import TurnErasure, TurnRecord
from runtime_svc.storage import compiled, eligibility_sql, turn_log
from runtime_svc.storage.source_pages import SourcePages
from runtime_svc.storage.source_rows import (
    Stored,
    by_source_ids,
    now_param,
    row_values,
    sizes,
    sources,
    stored_from,
)

_INSERT_SOURCE = insert(sources)


@lru_cache(maxsize=2)
def _eligible_of(dialect: str) -> Select[Any]:
    return by_source_ids(
        dialect,
        (sources.c.source_id, sources.c.revision),
        eligibility_sql.eligible(sources.c, bindparam("now_us")),
    )


_BY_SOURCE_ID = select(sources).where(
    sources.c.tenant_id == bindparam("tenant"), sources.c.source_id == bindparam("key")
)
# `request_id != ''` repeats the partial index's condition, so the planner may use it (a
# bound key alone does not prove it): without it SQLite reads every source of the tenant.
_BY_REQUEST_ID = select(sources).where(
    sources.c.tenant_id == bindparam("tenant"),
    sources.c.principal_id == bindparam("principal"),
    sources.c.request_id == bindparam("key"),
    sources.c.request_id != literal_column("''"),
)


# A source's row without its bytes and generated form (an append reads its size instead).
_HEAD_BY_SOURCE_ID = select(
    *(c for c in sources.c if c.name not in ("raw", "generated_form"))
).where(sources.c.tenant_id == bindparam("tenant"), sources.c.source_id == bindparam("key"))
_SIZES = ("message_count", "content_chars", "first_sent_at_us", "turn_rows")
# A new revision's state: the columns its parameters name (`save_state`), compiled once for
# each set of them; an append's also counts its turn row.
_SAVE = update(sources).where(
    sources.c.pk == bindparam("row_pk"), sources.c.tenant_id == bindparam("row_tenant")
)
_SAVE_GROWN = _SAVE.values(turn_rows=sources.c.turn_rows + literal_column("1"))


_UNINDEXED_CHUNK = 100  # sources read (and their appended turns) at a time, for explanations


class SourceRepository(SourcePages):
    def add(self, s: Source, indexed_revision: int = 0) -> int:
        """A new source's row; `indexed_revision` if its index entry is written in the same
        transaction (by the source writer)."""
        values = row_values(self.tenant_id, s)
        values["indexed_revision"] = indexed_revision
        return compiled.insert(self.conn, _INSERT_SOURCE, values)

    def add_many(self, batch: list[Source]) -> list[int]:
        """Bulk import: adds the sources and returns their internal pks, in order."""
        self.conn.execute(insert(sources), [row_values(self.tenant_id, s) for s in batch])
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

    def by_request_id(self, principal_id: str, request_id: str) -> Stored | None:
        """The source `principal_id`'s insert with `request_id` made, if one did."""
        return self._one(_BY_REQUEST_ID, request_id, principal=principal_id)

    def _one(self, stmt: Select[Any], key: str, **more: str) -> Stored | None:
        params = {"tenant": self.tenant_id, "key": key, **more}
        row = self.conn.execute(stmt, params).one_or_none()
        return self._whole([row])[0] if row else None

    def tail(self, source_id: str, keep: int) -> Stored:
        """The source, or NOT_FOUND, with a conversation read as its tail (`tails.Tail`):
        its last `keep` messages (or more) and its size, not the rest (an append)."""
        row = self.conn.execute(
            _HEAD_BY_SOURCE_ID, {"tenant": self.tenant_id, "key": source_id}
        ).one_or_none()
        if row is None:
            raise AgentmemError(Reason.NOT_FOUND)
        # A conversation has messages: a size of 0 was never written (a row inserted by a
        # runtime from before the size columns, during an upgrade), so it is read whole.
        if row.kind != SourceKind.CONVERSATION.value or row.erased_at_us or not row.message_count:
            return self.require(source_id)
        held = turn_log.decode(turn_log.last(self.conn, row.pk)) if row.turn_rows else ()
        if len(held) < min(keep, row.message_count):  # the first append reads the row's
            held = self.require(source_id).source.body.messages
        body = Body(
            messages=cast(
                tuple[Message, ...],
                tails.Tail(row.message_count, held, row.content_chars, row.first_sent_at_us),
            )
        )
        return stored_from(row, body=body)

    def turn_by_request_id(self, principal_id: str, request_id: str) -> turn_log.Turn | None:
        """The append that `principal_id` made with `request_id`, if one did."""
        return turn_log.by_request_id(self.conn, self.tenant_id, principal_id, request_id)

    def appenders(self, pk: int) -> set[str]:
        """The principals who appended turns to the source."""
        return turn_log.appenders(self.conn, pk)

    def turn_records(self, pks: list[int]) -> dict[int, list[TurnRecord]]:
        """Who appended each turn of these sources, in order (no text is read)."""
        return turn_log.records(self.conn, pks)

    def save_state(
        self,
        pk: int,
        s: Source,
        appended: tuple[int, turn_log.Appender] | None = None,
        indexed_revision: int | None = None,
    ) -> None:
        """Writes a new revision's state (classification, status, review, save intent and
        holds, revocation, assent; an erased source's emptied bytes, its turn rows deleted).
        `appended`: (the place of its first message, who appended them) when `s` is
        a conversation (its tail) with messages appended: they are written as one turn row
        and the conversation's size follows; its other bytes are not read nor rewritten.
        `indexed_revision`: the revision its index entry is derived from, when the same
        transaction derives it (an append's passages: one statement on the row, not two).
        Called by the source writer only (`runtime_svc.storage.source_writer`)."""
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
            save_intent_held=s.save_intent_held,
            hold_reason=s.hold_reason,
        )
        if indexed_revision is not None:
            values["indexed_revision"] = indexed_revision
        if appended is not None:
            first, by = appended
            added = tuple(s.body.messages[first:])
            turn = turn_log.Turn(pk, first, turn_log.stored_form(added), s.revision)
            turn_log.add(self.conn, self.tenant_id, turn, by)
            values |= sizes(s.body)
        if s.erased_at_us:  # no byte of the content and no hash of it is kept
            values |= {"raw": "", "content_sha256": "", "labels": "{}", "generated_form": ""}
            values |= dict.fromkeys(_SIZES, 0)
            turn_log.remove(self.conn, pk)
        values |= {"row_pk": pk, "row_tenant": self.tenant_id}
        compiled.execute(self.conn, _SAVE_GROWN if appended is not None else _SAVE, values)

    def save_turns_erased(self, pk: int, s: Source, plan: TurnErasure) -> None:
        """A partial erasure's new revision (`s`: the conversation without the erased
        turns): their rows deleted (and the row's own messages, when they were the erased
        principal's: it inserted the conversation), the kept ones moved to their places,
        the conversation's size and count of turn rows following. Called by the source
        writer only."""
        turn_log.erase_turns(self.conn, pk, plan)
        self.save_state(pk, s)
        # The inserter's messages erased: the row's array is emptied (`turn_log.EMPTY`), its
        # bytes and their hash go (its generated form is made from what is left); the
        # conversation is its kept turn rows.
        inserted = turn_log.emptied(s.body, s.revision) if plan.inserted_erased else {}
        self.conn.execute(
            update(sources)
            .where(sources.c.pk == pk, sources.c.tenant_id == self.tenant_id)
            .values(turn_rows=len(plan.kept), **sizes(s.body), **inserted)
        )

    def eligible_now(self, pk: int, now_us: int) -> bool:
        """The retrieval predicate itself, on one source row."""
        stmt = select(sources.c.pk).where(
            sources.c.pk == pk,
            sources.c.tenant_id == self.tenant_id,
            eligibility_sql.eligible(sources.c, now_param(now_us)),
        )
        return self.conn.execute(stmt).first() is not None

    def eligible_revisions(self, source_ids: list[str], now_us: int) -> set[tuple[str, int]]:
        """(source id, revision) of those of the sources that are eligible now (every prompt
        checks its citations with it: the statement is built once)."""
        params = {"tenant": self.tenant_id, "ids": source_ids, "now_us": now_us}
        rows = self.conn.execute(_eligible_of(self.conn.dialect.name), params)
        return {(r.source_id, r.revision) for r in rows}

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
        out: list[Stored] = []
        # A chunk of rows at a time, each made whole: reading stops at the limit.
        for chunk in self.conn.execute(stmt).partitions(_UNINDEXED_CHUNK):
            for stored in self._whole(chunk):
                if stems & {text.stem(w) for w in text.words(stored.source.matchable_text())}:
                    out.append(stored)
                    if len(out) >= limit:
                        return out
        return out

    def by_owner_key(self, owner: str, key_id: str) -> list[Stored]:
        rows = self.conn.execute(
            select(sources).where(
                sources.c.tenant_id == self.tenant_id,
                sources.c.canonical_owner == owner,
                sources.c.assent_key_id == key_id,
            )
        )
        return self._whole(rows.all())

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

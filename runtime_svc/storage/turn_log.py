"""A conversation's appended messages: one `source_turns` row per append, holding only the
messages it added (the rows of the source writer, `runtime_svc.storage.source_writer`).

The source row's `raw` holds the messages the conversation was inserted with; the whole
conversation is that array followed by its turn rows' arrays, joined (`join`) into exactly
the bytes one array of all its messages is (`Body.raw`). An append writes one small row and
reads the last one (its passages' context), whatever the session's length.

A conversation whose inserter's messages were erased (a partial erasure) keeps the empty
array (`EMPTY`) in its row: it is its turn rows' arrays alone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from sqlalchemy import (
    ColumnElement,
    Connection,
    Table,
    Text,
    aggregate_order_by,
    bindparam,
    case,
    delete,
    func,
    insert,
    literal,
    select,
    type_coerce,
    update,
)

from runtime_svc.domain import stored_json
from runtime_svc.domain.sources import Body, Message
from runtime_svc.domain.turns import TurnErasure, TurnRecord, TurnTrust
from runtime_svc.storage import compiled
from runtime_svc.storage.models import SourceRow, SourceTurnRow

turns = cast(Table, SourceTurnRow.__table__)
_sources = cast(Table, SourceRow.__table__)
_ADD = insert(turns)
EMPTY = "[]"  # a row's messages once its inserter's were erased
_LAST = (
    select(turns.c.rows)
    .where(turns.c.source_pk == bindparam("source_pk"))
    .order_by(turns.c.first_message.desc())
    .limit(1)
)


@dataclass(frozen=True)
class Appender:
    """Who appended a turn, the trust its append was given, and its request id."""

    principal_id: str
    principal_kind: str
    trust: TurnTrust = field(default_factory=TurnTrust)
    request_id: str = ""


@dataclass(frozen=True)
class Turn:
    """One append's row: the source, the place of its first message, its messages in
    stored form, the revision it made."""

    source_pk: int
    first_message: int
    rows: str
    revision: int


def stored_form(messages: Sequence[Message]) -> str:
    """Messages as `raw` stores them (`Body.raw`)."""
    return json.dumps([m.row() for m in messages], ensure_ascii=False)


def decode(rows: str) -> tuple[Message, ...]:
    return tuple(Message(*row) for row in stored_json.loads(rows)) if rows else ()


def join(raw: str, parts: Sequence[str]) -> str:
    """The whole conversation's stored form: its row's array, then each turn row's."""
    if not parts or not raw:
        return raw
    if raw == EMPTY:
        return "[" + ", ".join(p[1:-1] for p in parts) + "]"
    return raw[:-1] + "".join(", " + p[1:-1] for p in parts) + "]"


def emptied(left: Body, revision: int) -> dict[str, str | int]:
    """A source row's columns once its inserter's messages were erased: no byte of them
    and no hash of them is kept, and its generated form (made at insert from them) is made
    again from the messages `left`, at `revision`."""
    return {
        "raw": EMPTY,
        "content_sha256": hashlib.sha256(EMPTY.encode()).hexdigest(),
        "generated_form": left.generated_form(),
        "generated_revision": revision,
    }


def add(conn: Connection, tenant_id: str, turn: Turn, by: Appender) -> None:
    compiled.execute(
        conn,
        _ADD,
        {
            "tenant_id": tenant_id,
            "source_pk": turn.source_pk,
            "first_message": turn.first_message,
            "rows": turn.rows,
            "content_sha256": hashlib.sha256(turn.rows.encode()).hexdigest(),
            "revision": turn.revision,
            "request_id": by.request_id,
            "principal_id": by.principal_id,
            "principal_kind": by.principal_kind,
            "save_intent": by.trust.save_intent,
            "save_intent_held": by.trust.save_intent_held,
            "held": by.trust.held,
            "hold_reason": by.trust.hold_reason,
        },
    )


def parts(conn: Connection, pks: Sequence[int]) -> dict[int, list[str]]:
    """The turn rows of these sources, in order."""
    out: dict[int, list[str]] = {}
    if not pks:
        return out
    stmt = (
        select(turns.c.source_pk, turns.c.rows)
        .where(turns.c.source_pk.in_(list(pks)))
        .order_by(turns.c.source_pk, turns.c.first_message)
    )
    for pk, rows in conn.execute(stmt):
        out.setdefault(pk, []).append(rows)
    return out


def last(conn: Connection, pk: int) -> str:
    """The last turn row's messages (stored form) of a source ("" if it has none)."""
    return conn.execute(_LAST, {"source_pk": pk}).scalar() or ""


def by_request_id(
    conn: Connection, tenant_id: str, principal_id: str, request_id: str
) -> Turn | None:
    """The turn `principal_id`'s append with `request_id` made, if one did."""
    row = conn.execute(
        select(turns.c.source_pk, turns.c.first_message, turns.c.rows, turns.c.revision).where(
            turns.c.tenant_id == tenant_id,
            turns.c.principal_id == principal_id,
            turns.c.request_id == request_id,
            turns.c.request_id != "",
        )
    ).one_or_none()
    return Turn(*row) if row else None


def appenders(conn: Connection, pk: int) -> set[str]:
    """The principals who appended turns to a source."""
    return set(
        conn.execute(select(turns.c.principal_id).where(turns.c.source_pk == pk).distinct())
        .scalars()
        .all()
    )


def records(conn: Connection, pks: Sequence[int]) -> dict[int, list[TurnRecord]]:
    """Who appended each turn of these sources (no text is read), in order."""
    out: dict[int, list[TurnRecord]] = {}
    if not pks:
        return out
    stmt = (
        select(
            turns.c.source_pk,
            turns.c.first_message,
            turns.c.revision,
            turns.c.principal_id,
            turns.c.principal_kind,
            turns.c.save_intent,
            turns.c.save_intent_held,
            turns.c.held,
            turns.c.hold_reason,
        )
        .where(turns.c.source_pk.in_(list(pks)))
        .order_by(turns.c.source_pk, turns.c.first_message)
    )
    for r in conn.execute(stmt):
        trust = TurnTrust(r.save_intent, r.save_intent_held, r.held, r.hold_reason)
        out.setdefault(r.source_pk, []).append(
            TurnRecord(r.first_message, r.revision, r.principal_id, r.principal_kind, trust)
        )
    return out


def erase_turns(conn: Connection, pk: int, plan: TurnErasure) -> None:
    """Deletes the turn rows `plan.principal_id` appended to a source (their bytes go) and moves
    the kept ones to their new places (`plan`), in order: a place only ever decreases, so
    no two rows meet on the way."""
    conn.execute(
        delete(turns).where(turns.c.source_pk == pk, turns.c.principal_id == plan.principal_id)
    )
    for turn, first in plan.kept:
        if first != turn.first_message:
            conn.execute(
                update(turns)
                .where(turns.c.source_pk == pk, turns.c.first_message == turn.first_message)
                .values(first_message=first)
            )


def remove(conn: Connection, pk: int) -> None:
    """Every turn row of a source (erasure: its bytes go)."""
    conn.execute(delete(turns).where(turns.c.source_pk == pk))


def whole_raw() -> ColumnElement[str]:
    """A source row's whole stored form, in SQL (`join`: its turn rows' arrays after its
    row's, in order), for statements that read sources with their bytes."""
    inner = type_coerce(func.substr(turns.c.rows, 2, func.length(turns.c.rows) - 2), Text)
    joined = (
        select(
            aggregate_order_by(
                func.string_agg(literal(", ") + inner, literal("")), turns.c.first_message
            )
        )
        .where(turns.c.source_pk == _sources.c.pk)
        .scalar_subquery()
    )
    raw = _sources.c.raw
    return case(
        (_sources.c.turn_rows == 0, raw),
        # The inserter's messages erased: the turn rows' arrays alone (", " before the first
        # dropped).
        (raw == EMPTY, literal("[") + type_coerce(func.substr(joined, 3), Text) + literal("]")),
        else_=type_coerce(func.substr(raw, 1, func.length(raw) - 1), Text)
        + type_coerce(joined, Text)
        + literal("]"),
    )

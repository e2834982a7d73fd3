"""The prompt block's plain-text memories with the date each was said and whether a later
memory superseded it (`storage.said`), so the block puts current ones first and a model can
tell old from new."""

from __future__ import annotations

from dataclasses import replace

from runtime_svc.domain.assembly import Candidate
from runtime_svc.domain.passages import date_of_time
from runtime_svc.storage import said
from runtime_svc.storage.transaction import Transaction


def dated(tx: Transaction, candidates: list[Candidate]) -> list[Candidate]:
    """`candidates`, each plain-text memory with its date (when the deployment dates
    passages: `retrieval.passages.date`) and whether it is superseded."""
    plain = list({c.source_id for c in candidates if c.conversation is None})
    known = said.said(tx.conn, tx.sources.tenant_id, plain)
    out = []
    for c in candidates:
        s = known.get(c.source_id) if c.conversation is None else None
        if s is not None:
            day = date_of_time(s.observed_at_us) if tx.window.date else ""
            c = replace(c, said=day, superseded=s.superseded)
        out.append(c)
    return out

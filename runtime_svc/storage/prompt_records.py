"""Prompt records: which sources an assembled prompt cited (derived provenance)."""

from __future__ import annotations

from typing import cast

from sqlalchemy import (
    Table,
    delete,
    insert,
    select,
)

from runtime_svc.storage import compiled
from runtime_svc.storage.models import (
    DerivedProvenanceRow,
    PromptRecordRow,
)
from runtime_svc.storage.repositories import _Repository

prompt_records = cast(Table, PromptRecordRow.__table__)
derived_provenance = cast(Table, DerivedProvenanceRow.__table__)
_INSERT_PROMPT = insert(prompt_records)  # built once: every prompt records itself


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
        compiled.execute(
            self.conn,
            _INSERT_PROMPT,
            {
                "tenant_id": self.tenant_id,
                "prompt_record_id": record_id,
                "thread_id": thread_id,
                "created_at_us": created_at_us,
                "token_budget": token_budget,
                "tokens_used": tokens_used,
                "query_sha256": query_sha256,
            },
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

"""Where an erased source's bytes stand in the database's files, by backend.

An erasure deletes the bytes and every derived record in its transaction; copies of the
old pages can outlive it in the storage engine's files. SQLite: in the write-ahead log
and in pages of the database file a checkpoint has not yet rewritten, until a WAL
checkpoint that truncates the log succeeds (a reader holding an old snapshot delays it):
the erasure is PENDING until then, COMPLETE after. PostgreSQL: dead row versions until
the VACUUM the erasure starts, and after it copies in the data files' free space, in WAL
segments, archives and replicas, which only an operator can remove: RESIDUE_POSSIBLE
(see docs/erasure.md for the operator's steps).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Physical(StrEnum):
    NOT_ERASED = "not_erased"
    PENDING = "pending"
    COMPLETE = "complete"
    RESIDUE_POSSIBLE = "residue_possible"


class Backend(StrEnum):
    SQLITE = "sqlite"
    POSTGRESQL = "postgresql"


# Residue notes: stable names of the places copies may be (documented in docs/erasure.md).
SQLITE_PENDING = ("database_file", "wal")
POSTGRESQL_AFTER_VACUUM = ("data_file_free_space", "wal", "wal_archive_and_replicas")
POSTGRESQL_BEFORE_VACUUM = ("dead_row_versions", *POSTGRESQL_AFTER_VACUUM)


@dataclass(frozen=True)
class PhysicalErasure:
    state: Physical
    residue: tuple[str, ...] = ()
    scrubbed_at_us: int = 0  # when the runtime finished its part (0: not yet)

    @property
    def pending(self) -> bool:
        return self.state is Physical.PENDING


def physical_erasure(backend: Backend, erased: bool, scrubbed_at_us: int) -> PhysicalErasure:
    """`scrubbed_at_us`: when the runtime's checkpoint or VACUUM covering the erasure
    finished, 0 while it has not."""
    if not erased:
        return PhysicalErasure(Physical.NOT_ERASED)
    if backend is Backend.SQLITE:
        if scrubbed_at_us:
            return PhysicalErasure(Physical.COMPLETE, (), scrubbed_at_us)
        return PhysicalErasure(Physical.PENDING, SQLITE_PENDING)
    residue = POSTGRESQL_AFTER_VACUUM if scrubbed_at_us else POSTGRESQL_BEFORE_VACUUM
    return PhysicalErasure(Physical.RESIDUE_POSSIBLE, residue, scrubbed_at_us)

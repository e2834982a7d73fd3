"""Use cases: read and compare-and-swap a thread's memory mode."""

from __future__ import annotations

from dataclasses import dataclass

from runtime_svc.domain import thread_mode
from runtime_svc.domain.audit import Action, Receipt
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.events import ThreadMemoryModeUpdated
from runtime_svc.domain.thread_mode import Mode, ThreadMode
from runtime_svc.services.clock import Clock
from runtime_svc.services.journal import Journal, Target
from runtime_svc.storage.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class ModeChange:
    previous: ThreadMode
    current: ThreadMode
    receipt: Receipt


class ThreadModes:
    def __init__(self, uow: UnitOfWork, journal: Journal, clock: Clock, default_mode: Mode) -> None:
        self._uow, self._journal, self._clock = uow, journal, clock
        self._default = default_mode

    def read(self, caller: Caller, thread_id: str) -> ThreadMode:
        thread_mode.check_thread_id(thread_id)
        with self._uow.read(caller.tenant_id) as tx:
            return tx.thread_modes.get(thread_id) or thread_mode.default(thread_id, self._default)

    def set(self, caller: Caller, thread_id: str, expected_revision: int, mode: Mode) -> ModeChange:
        thread_mode.check_thread_id(thread_id)
        with self._uow.write(caller.tenant_id) as tx:
            current = tx.thread_modes.get(thread_id) or thread_mode.default(
                thread_id, self._default
            )
            updated = thread_mode.set_mode(
                current, expected_revision=expected_revision, mode=mode, now_us=self._clock()
            )
            tx.thread_modes.save(updated)
            receipt = self._journal.record(
                tx,
                caller,
                action=Action.THREAD_MEMORY_MODE_SET,
                target=Target("thread", thread_id, updated.revision),
                event=ThreadMemoryModeUpdated(
                    thread_id=thread_id,
                    previous_mode=current.mode.value,
                    mode=updated.mode.value,
                    revision=updated.revision,
                    effective_at_us=updated.effective_at_us,
                ),
                at_us=updated.effective_at_us,
            )
        return ModeChange(previous=current, current=updated, receipt=receipt)

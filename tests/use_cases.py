"""The runtime's insert use case wired as the runtime wires it (rules extractor, permissive
policy), for tests that call it without the gRPC hops."""

from __future__ import annotations

from runtime_svc.domain.extraction import RuleExtractor
from runtime_svc.domain.insert_policy import InsertPolicy
from runtime_svc.domain.thread_mode import Mode
from runtime_svc.services.clock import system_clock
from runtime_svc.services.facts import FactExtraction
from runtime_svc.services.inserts import Inserts
from runtime_svc.services.journal import EventRetention, Journal
from runtime_svc.services.source_changes import SourceChanges
from runtime_svc.storage.unit_of_work import UnitOfWork


def permissive_inserts(uow: UnitOfWork) -> Inserts:
    journal = Journal(EventRetention(1000), lambda _tenant: None)
    extraction = FactExtraction(RuleExtractor())
    return Inserts(
        uow,
        journal,
        system_clock,
        SourceChanges(uow, journal, extraction),
        policy=InsertPolicy.PERMISSIVE,
        default_mode=Mode.ENABLED,
        extraction=extraction,
    )

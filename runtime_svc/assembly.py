"""The runtime's use cases wired to its storage, and the servicer over them."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from agentmem_kernel.config import Settings
from runtime_svc.adapters import tokenizers
from runtime_svc.domain.extraction import RuleExtractor
from runtime_svc.domain.facts import Extractor
from runtime_svc.domain.insert_policy import InsertPolicy
from runtime_svc.domain.review import Settings as ReviewSettings
from runtime_svc.domain.sources import BodyLimits
from runtime_svc.domain.thread_mode import Mode
from runtime_svc.grpc.servicer import RuntimeServicer
from runtime_svc.grpc.wakeups import TenantWakeups
from runtime_svc.search.mirrors import Mirrors
from runtime_svc.services.audit import Audit
from runtime_svc.services.clock import system_clock
from runtime_svc.services.erasure_finisher import ErasureFinisher
from runtime_svc.services.event_feed import EventFeed
from runtime_svc.services.fact_retraction import FactRetraction
from runtime_svc.services.facts import FactExtraction, Facts
from runtime_svc.services.foreign import ForeignSources
from runtime_svc.services.inserts import Inserts
from runtime_svc.services.journal import EventRetention, Journal
from runtime_svc.services.quotas import StoredQuotas
from runtime_svc.services.retrieval import Retrieval
from runtime_svc.services.semantic import Semantic
from runtime_svc.services.source_changes import SourceChanges
from runtime_svc.services.source_lifecycle import SourceLifecycle
from runtime_svc.services.source_reads import SourceReads
from runtime_svc.services.thread_modes import ThreadModes
from runtime_svc.storage.group_commit import GroupCommitter
from runtime_svc.storage.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class Storage:
    """What the use cases read and write through."""

    uow: UnitOfWork
    writer: GroupCommitter
    pool: ThreadPoolExecutor
    mirrors: Mirrors


@dataclass(frozen=True)
class Assembled:
    servicer: RuntimeServicer
    feed: EventFeed
    finisher: ErasureFinisher  # started once the server is up


def assemble(
    settings: Settings,
    storage: Storage,
    *,
    semantic: Semantic | None,
    lexical_only_reason: str,
    counter: tokenizers.Counter,
    wakeups: TenantWakeups,
    alone: Callable[[], bool],
) -> Assembled:
    """`alone`: whether the call asking is the only one in flight (the servicer's reads)."""
    uow = storage.uow
    journal = Journal(EventRetention(settings.events.max_events_per_tenant), wakeups.notify)
    feed = EventFeed(uow, system_clock, settings.events.retention)
    default_mode = Mode(settings.memory.default_thread_mode)
    retrieval = Retrieval(
        uow,
        system_clock,
        default_mode=default_mode,
        posting_budget=settings.search.posting_budget,
        semantic=semantic,
        lexical_only_reason=lexical_only_reason,
        mirrors=storage.mirrors,
        count_tokens=counter.count,
        tokenizer=counter.name,
    )
    extraction = FactExtraction(_extractor(settings))
    finisher = ErasureFinisher(uow, journal, system_clock)
    changes = SourceChanges(uow, journal, extraction, finisher.after_erasure)
    servicer = RuntimeServicer(
        thread_modes=ThreadModes(uow, journal, system_clock, default_mode),
        inserts=Inserts(
            uow,
            journal,
            system_clock,
            changes,
            default_mode=default_mode,
            policy=InsertPolicy(settings.memory.insert_policy),
            extraction=extraction,
            quotas=StoredQuotas(settings.limits),
            limits=body_limits(settings),
        ),
        reads=SourceReads(uow, system_clock),
        lifecycle=SourceLifecycle(
            uow,
            journal,
            system_clock,
            changes,
            extraction,
            review_settings=ReviewSettings(
                allow_self_approval=settings.memory.allow_self_approval,
                allow_service_review=settings.memory.allow_service_review,
            ),
        ),
        retrieval=retrieval,
        facts=Facts(uow, system_clock, retrieval),
        retraction=FactRetraction(uow, journal, system_clock),
        foreign=ForeignSources(uow, journal, system_clock, changes),
        audit=Audit(uow),
        feed=feed,
        wakeups=wakeups,
        pool=storage.pool,
        writer=storage.writer,
        poll_interval=settings.events.poll_interval,
        alone=alone,
    )
    return Assembled(servicer, feed, finisher)


def body_limits(settings: Settings) -> BodyLimits:
    limits = settings.limits
    return BodyLimits(
        limits.max_messages_per_insert, limits.max_message_chars, limits.max_conversation_chars
    )


def _extractor(settings: Settings) -> Extractor:
    f = settings.facts
    if f.extractor == "openai_compatible":
        from runtime_svc.adapters.llm_extractor import OpenAICompatibleExtractor

        return OpenAICompatibleExtractor(
            endpoint=f.endpoint,
            model=f.model,
            api_key=os.environ.get(f.api_key_env, ""),
            timeout=f.timeout,
        )
    return RuleExtractor()

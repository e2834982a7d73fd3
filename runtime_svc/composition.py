"""The runtime's composition root: its use cases wired to its storage (`use_cases`, which the
service tests call too), and the servicer over them (`assemble`)."""

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
from runtime_svc.domain.passages import Window
from runtime_svc.domain.review import Settings as ReviewSettings
from runtime_svc.domain.sources import BodyLimits
from runtime_svc.domain.thread_mode import Mode
from runtime_svc.grpc.servicer import RuntimeServicer
from runtime_svc.grpc.wakeups import TenantWakeups
from runtime_svc.retrieval import Mirrors, Semantic
from runtime_svc.services.appends import Appends
from runtime_svc.services.audit import Audit
from runtime_svc.services.clock import Clock, system_clock
from runtime_svc.services.erasure_finisher import ErasureFinisher
from runtime_svc.services.event_feed import EventFeed
from runtime_svc.services.fact_retraction import FactRetraction
from runtime_svc.services.facts import FactExtraction, Facts
from runtime_svc.services.foreign import ForeignSources
from runtime_svc.services.inserts import Inserts
from runtime_svc.services.journal import EventRetention, Journal
from runtime_svc.services.quotas import StoredQuotas
from runtime_svc.services.retrieval import Retrieval
from runtime_svc.services.source_changes import SourceChanges
from runtime_svc.services.source_lifecycle import SourceLifecycle
from runtime_svc.services.source_reads import SourceReads
from runtime_svc.services.thread_modes import ThreadModes
from runtime_svc.storage.db import Database
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
class UseCases:
    """The runtime's use cases, wired to one another and to storage."""

    thread_modes: ThreadModes
    inserts: Inserts
    reads: SourceReads
    lifecycle: SourceLifecycle
    retrieval: Retrieval
    facts: Facts
    retraction: FactRetraction
    foreign: ForeignSources
    audit: Audit
    feed: EventFeed
    appends: Appends
    finisher: ErasureFinisher  # its background thread is started by whoever runs it


@dataclass(frozen=True)
class Assembled:
    servicer: RuntimeServicer
    feed: EventFeed
    finisher: ErasureFinisher  # started once the server is up


def unit_of_work(
    settings: Settings,
    db: Database,
    mirrors: Mirrors,
    vectors_queued: Callable[[], None] | None = None,
    committed: Callable[[], None] | None = None,
) -> UnitOfWork:
    """The unit of work over the database as the runtime configures it (passages' window,
    held postings told of removed words; `committed`: told of each commit)."""
    passages = settings.retrieval.passages
    return UnitOfWork(
        db,
        vectors_queued=vectors_queued,
        window=Window(passages.before, passages.date, passages.reply),
        words_removed=mirrors.forget_words,
        index_changed=mirrors.apply,
        busy_timeout_ms=settings.storage.busy_timeout_ms,
        committed=committed,
    )


def use_cases(
    settings: Settings,
    uow: UnitOfWork,
    mirrors: Mirrors,
    *,
    semantic: Semantic | None,
    lexical_only_reason: str,
    counter: tokenizers.Counter,
    notify: Callable[[str], None],
    clock: Clock = system_clock,
) -> UseCases:
    """The use cases as the runtime runs them (the runtime's servicer, and the service
    tests, call this). `notify`: told the tenant of each committed event."""
    journal = Journal(EventRetention(settings.events.max_events_per_tenant), notify)
    feed = EventFeed(uow, clock, settings.events.retention)
    default_mode = Mode(settings.memory.default_thread_mode)
    retrieval = Retrieval(
        uow,
        clock,
        default_mode=default_mode,
        posting_budget=settings.search.posting_budget,
        semantic=semantic,
        lexical_only_reason=lexical_only_reason,
        mirrors=mirrors,
        count_tokens=counter.count,
        tokenizer=counter.name,
    )
    extraction = FactExtraction(_extractor(settings))
    finisher = ErasureFinisher(uow, journal, clock)
    changes = SourceChanges(uow, journal, extraction, finisher.after_erasure)
    return UseCases(
        thread_modes=ThreadModes(uow, journal, clock, default_mode),
        inserts=Inserts(
            uow,
            journal,
            clock,
            changes,
            default_mode=default_mode,
            policy=InsertPolicy(settings.memory.insert_policy),
            extraction=extraction,
            quotas=StoredQuotas(settings.limits),
            limits=body_limits(settings),
        ),
        reads=SourceReads(uow, clock),
        lifecycle=SourceLifecycle(
            uow,
            journal,
            clock,
            changes,
            extraction,
            review_settings=ReviewSettings(
                allow_self_approval=settings.memory.allow_self_approval,
                allow_service_review=settings.memory.allow_service_review,
            ),
        ),
        retrieval=retrieval,
        facts=Facts(uow, clock, retrieval),
        retraction=FactRetraction(uow, journal, clock),
        foreign=ForeignSources(uow, journal, clock, changes),
        audit=Audit(uow),
        feed=feed,
        appends=Appends(
            uow,
            clock,
            changes,
            extraction,
            policy=InsertPolicy(settings.memory.insert_policy),
            default_mode=default_mode,
            quotas=StoredQuotas(settings.limits),
            limits=body_limits(settings),
        ),
        finisher=finisher,
    )


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
    """The use cases and the servicer over them. `alone`: whether the call asking is the
    only one in flight (the servicer's reads)."""
    cases = use_cases(
        settings,
        storage.uow,
        storage.mirrors,
        semantic=semantic,
        lexical_only_reason=lexical_only_reason,
        counter=counter,
        notify=wakeups.notify,
    )
    servicer = RuntimeServicer(
        thread_modes=cases.thread_modes,
        inserts=cases.inserts,
        reads=cases.reads,
        lifecycle=cases.lifecycle,
        retrieval=cases.retrieval,
        facts=cases.facts,
        retraction=cases.retraction,
        foreign=cases.foreign,
        audit=cases.audit,
        feed=cases.feed,
        wakeups=wakeups,
        pool=storage.pool,
        writer=storage.writer,
        poll_interval=settings.events.poll_interval,
        alone=alone,
        appends=cases.appends,
    )
    return Assembled(servicer, cases.feed, cases.finisher)


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

"""The runtime's gRPC servicer: maps requests to use cases, runs them off the event loop."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from agentmem.core import internal_call, metrics, save_intents
from agentmem.core.errors import invalid_field
from agentmem.core.scopes import Scope
from agentmem.runtime.v1 import runtime_service_pb2_grpc
from agentmem.v1 import (
    audit_pb2,
    capabilities_pb2,
    events_pb2,
    facts_pb2,
    foreign_pb2,
    retrieval_pb2,
    review_pb2,
    sources_pb2,
    thread_mode_pb2,
)
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.fact_chains import Period
from runtime_svc.domain.foreign import Pointer
from runtime_svc.domain.insert_policy import InsertPolicy
from runtime_svc.domain.review import Decision
from runtime_svc.domain.sources import Classification, SaveIntent, Status
from runtime_svc.domain.thread_mode import Mode
from runtime_svc.grpc import mapping
from runtime_svc.grpc.mapping import (
    CLASSIFICATIONS,
    KINDS,
    MATCHED_BY,
    MODES,
    REASONS,
    STATES,
    STATUSES,
)
from runtime_svc.grpc.wakeups import TenantWakeups
from runtime_svc.services.audit import Audit
from runtime_svc.services.event_feed import EventFeed
from runtime_svc.services.fact_retraction import FactRetraction, RetractCommand
from runtime_svc.services.facts import FactQuery, Facts
from runtime_svc.services.foreign import AdmitCommand, ForeignSources
from runtime_svc.services.inserts import InsertCommand, Inserted, Inserts
from runtime_svc.services.retrieval import Retrieval
from runtime_svc.services.source_lifecycle import (
    ClassifyCommand,
    EraseCommand,
    ReviewCommand,
    RevokeAssentCommand,
    SourceLifecycle,
)
from runtime_svc.services.source_reads import SourceReads
from runtime_svc.services.thread_modes import ThreadModes
from runtime_svc.storage.group_commit import GroupCommitter
from runtime_svc.storage.sources import SourceFilter

T = TypeVar("T")
FACT_STATES = {
    facts_pb2.FACT_STATUS_UNSPECIFIED: "eligible",
    facts_pb2.FACT_STATUS_ELIGIBLE: "eligible",
    facts_pb2.FACT_STATUS_INELIGIBLE: "ineligible",
    facts_pb2.FACT_STATUS_ALL: "all",
}
MEMORY_FILTERS = {
    review_pb2.MEMORY_STATUS_FILTER_UNSPECIFIED: (Status.ACTIVE.value,),
    review_pb2.MEMORY_STATUS_FILTER_ACTIVE: (Status.ACTIVE.value,),
    review_pb2.MEMORY_STATUS_FILTER_PENDING_REVIEW: (Status.PENDING_REVIEW.value,),
    review_pb2.MEMORY_STATUS_FILTER_REJECTED: (Status.REJECTED.value,),
    review_pb2.MEMORY_STATUS_FILTER_ALL: tuple(s.value for s in Status),
}
CALLER: contextvars.ContextVar[Caller] = contextvars.ContextVar("caller")


class RuntimeServicer(runtime_service_pb2_grpc.RuntimeServiceServicer):
    def __init__(
        self,
        *,
        thread_modes: ThreadModes,
        inserts: Inserts,
        reads: SourceReads,
        lifecycle: SourceLifecycle,
        retrieval: Retrieval,
        facts: Facts,
        retraction: FactRetraction,
        foreign: ForeignSources,
        audit: Audit,
        feed: EventFeed,
        wakeups: TenantWakeups,
        pool: ThreadPoolExecutor,
        writer: GroupCommitter,
        poll_interval: float,
        alone: Callable[[], bool],
    ) -> None:
        """`alone`: whether the call asking is the only one in flight (see `_read`)."""
        self._thread_modes, self._retrieval = thread_modes, retrieval
        self._inserts, self._reads, self._lifecycle = inserts, reads, lifecycle
        self._audit, self._feed, self._facts = audit, feed, facts
        self._foreign, self._retraction = foreign, retraction
        self._wakeups, self._pool, self._poll = wakeups, pool, poll_interval
        self._writer = writer
        self._alone = alone

    async def _run(self, fn: Callable[..., T], *args: object) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    async def _read(self, fn: Callable[..., T], *args: object) -> T:
        """A short read: on the event loop's own thread when no other call is in flight,
        where the hand-off to the pool and back costs much of what the read does (Search
        p50 3.8 ms against 4.4 through the pool, 20k passages, 2-core VM; a call arriving
        meanwhile starts when it ends); beside other calls, on the pool."""
        if self._alone():
            return fn(*args)
        return await self._run(fn, *args)

    async def _write(self, fn: Callable[..., T], *args: object) -> T:
        """Mutations go through group commit (one writer, one commit per batch)."""
        return await self._writer.run(fn, *args)

    # Thread memory mode

    async def ReadThreadMemoryMode(self, request, context):  # type: ignore[no-untyped-def]
        state = await self._run(self._thread_modes.read, CALLER.get(), request.thread_id)
        return thread_mode_pb2.ReadThreadMemoryModeResponse(
            thread_id=state.thread_id,
            mode=MODES.to_proto(state.mode),
            revision=state.revision,
            effective_at=mapping.timestamp(state.effective_at_us),
        )

    async def SetThreadMemoryMode(self, request, context):  # type: ignore[no-untyped-def]
        mode = Mode(MODES.from_proto("mode", request.mode))
        change = await self._write(
            self._thread_modes.set, CALLER.get(), request.thread_id, request.expected_revision, mode
        )
        return thread_mode_pb2.SetThreadMemoryModeResponse(
            thread_id=change.current.thread_id,
            previous_mode=MODES.to_proto(change.previous.mode),
            mode=MODES.to_proto(change.current.mode),
            revision=change.current.revision,
            effective_at=mapping.timestamp(change.current.effective_at_us),
            receipt=mapping.receipt(change.receipt),
        )

    # Memories and sources

    async def InsertMemory(self, request, context):  # type: ignore[no-untyped-def]
        md = request.metadata
        cmd = InsertCommand(
            content=request.content,
            messages=[mapping.message(m) for m in request.messages],
            thread_id=request.thread_id,
            kind=KINDS.from_proto("source_kind", request.source_kind, optional=True),
            intent=SaveIntent(md.save_intent, md.save_intent_source, md.save_intent_evidence),
            labels=dict(md.labels),
            validate_only=request.validate_only,
            observed_at_us=mapping.time_us("observed_at", request),
        )
        caller = CALLER.get()
        if self._inserts.prepare_blocks(cmd):
            prepared = await self._run(self._inserts.prepare, caller, cmd)
        else:  # checks and rule-based extraction only: cheaper than a hop to a thread
            prepared = self._inserts.prepare(caller, cmd)
        if isinstance(prepared, Inserted):  # validate_only
            result = prepared
        else:
            result = await self._write(self._inserts.commit_insert, caller, cmd, prepared)
        return sources_pb2.InsertMemoryResponse(
            source_id=result.source_id,
            revision=result.revision,
            status=STATUSES.to_proto(result.status),
            receipt=mapping.receipt(result.receipt),
            deduplicated=result.deduplicated,
            save_intent_held=bool(result.held_reason),
            save_intent_held_reason=result.held_reason,
        )

    async def ListSources(self, request, context):  # type: ignore[no-untyped-def]
        f = request.filter
        flt = SourceFilter(
            classification=CLASSIFICATIONS.from_proto(
                "filter.classification", f.classification, optional=True
            ),
            status=STATUSES.from_proto("filter.status", f.status, optional=True),
            effective_state=STATES.from_proto(
                "filter.effective_state", f.effective_state, optional=True
            ),
            kind=KINDS.from_proto("filter.source_kind", f.source_kind, optional=True),
            thread_id=f.thread_id,
        )
        rows, token = await self._run(
            self._reads.list_sources, CALLER.get(), flt, request.page_size, request.page_token
        )
        return sources_pb2.ListSourcesResponse(
            sources=[
                sources_pb2.SourceSummary(
                    source_id=r.source_id,
                    revision=r.revision,
                    source_kind=KINDS.to_proto(r.kind),
                    classification=CLASSIFICATIONS.to_proto(r.classification),
                    status=STATUSES.to_proto(r.status),
                    effective_retrieval_state=STATES.to_proto(r.state),
                )
                for r in rows
            ],
            next_page_token=token,
        )

    async def GetSource(self, request, context):  # type: ignore[no-untyped-def]
        source, state = await self._run(
            self._reads.get, CALLER.get(), request.source_id, request.include_content
        )
        return mapping.source(source, state, include_content=request.include_content)

    async def SetSourceClassification(self, request, context):  # type: ignore[no-untyped-def]
        classification = Classification(
            CLASSIFICATIONS.from_proto("classification", request.classification)
        )
        cmd = ClassifyCommand(request.source_id, request.expected_revision, classification)
        change = await self._write(self._lifecycle.classify, CALLER.get(), cmd)
        return sources_pb2.SetSourceClassificationResponse(
            source_id=change.source.source_id,
            previous_classification=CLASSIFICATIONS.to_proto(change.previous.classification.value),
            classification=CLASSIFICATIONS.to_proto(change.source.classification.value),
            revision=change.source.revision,
            effective_at=mapping.timestamp(change.source.updated_at_us),
            receipt=mapping.receipt(change.receipt),
        )

    # Review and insert policy

    async def ListMemories(self, request, context):  # type: ignore[no-untyped-def]
        caller = CALLER.get()
        statuses = MEMORY_FILTERS.get(request.status_filter)
        if statuses is None:
            raise invalid_field("status_filter", "must be one of the defined values")
        found, token = await self._run(
            self._reads.list_memories, caller, statuses, request.page_size, request.page_token
        )
        text = Scope.CONTENT_READ in caller.scopes
        return review_pb2.ListMemoriesResponse(
            memories=[mapping.memory(s, include_content=text) for s in found], next_page_token=token
        )

    async def ReviewMemory(self, request, context):  # type: ignore[no-untyped-def]
        decision = Decision(mapping.DECISIONS.from_proto("decision", request.decision))
        caller = CALLER.get()
        triples = []
        if decision is Decision.APPROVE:
            triples = await self._run(self._lifecycle.triples_of, caller, request.source_id)
        cmd = ReviewCommand(
            request.source_id, request.expected_revision, decision, request.note, tuple(triples)
        )
        result = await self._write(self._lifecycle.review, caller, cmd)
        return review_pb2.ReviewMemoryResponse(
            source_id=result.source.source_id,
            status=STATUSES.to_proto(result.source.status.value),
            revision=result.source.revision,
            receipt=mapping.receipt(result.receipt),
        )

    async def GetInsertPolicy(self, request, context):  # type: ignore[no-untyped-def]
        policy, revision = await self._run(self._inserts.current_policy, CALLER.get())
        return review_pb2.GetInsertPolicyResponse(
            insert_policy=mapping.POLICIES.to_proto(policy),
            overridden=revision > 0,
            revision=revision,
        )

    async def SetInsertPolicy(self, request, context):  # type: ignore[no-untyped-def]
        policy = InsertPolicy(mapping.POLICIES.from_proto("insert_policy", request.insert_policy))
        change = await self._write(
            self._inserts.set_policy, CALLER.get(), request.expected_revision, policy
        )
        return review_pb2.SetInsertPolicyResponse(
            previous_insert_policy=mapping.POLICIES.to_proto(change.previous),
            insert_policy=mapping.POLICIES.to_proto(change.policy),
            revision=change.revision,
            receipt=mapping.receipt(change.receipt),
        )

    # Facts, profile, ask

    async def SearchFacts(self, request, context):  # type: ignore[no-untyped-def]
        state = FACT_STATES.get(request.status)
        if state is None:
            raise invalid_field("status", "must be one of the defined values")
        q = FactQuery(
            query=request.query,
            save_intent=request.save_intent,
            save_intent_source=request.save_intent_source,
            state=state,
            limit=request.limit or 20,
            period=Period(mapping.time_us("as_of", request), request.include_superseded),
        )
        found = await self._run(self._facts.search, CALLER.get(), q)
        return facts_pb2.SearchFactsResponse(facts=[mapping.fact(f) for f in found])

    async def GetProfile(self, request, context):  # type: ignore[no-untyped-def]
        entries = await self._run(
            self._facts.profile,
            CALLER.get(),
            request.save_intent_source,
            mapping.time_us("as_of", request),
        )
        return facts_pb2.GetProfileResponse(
            entries=[
                facts_pb2.ProfileEntry(
                    key=e.key,
                    value=e.value,
                    confidence=e.confidence,
                    fact_ids=list(e.fact_ids),
                    since=mapping.timestamp(e.since_us),
                )
                for e in entries
            ]
        )

    async def RetractFact(self, request, context):  # type: ignore[no-untyped-def]
        cmd = RetractCommand(request.fact_id, request.reason)
        done = await self._write(self._retraction.retract, CALLER.get(), cmd)
        return facts_pb2.RetractFactResponse(
            fact_id=done.fact_id, receipt=mapping.receipt(done.receipt)
        )

    async def Ask(self, request, context):  # type: ignore[no-untyped-def]
        a = await self._run(
            self._facts.ask,
            CALLER.get(),
            request.question,
            request.token_budget,
            mapping.time_us("as_of", request),
        )
        citations, seen = [], set()
        for p in a.pieces:
            if (p.source_id, p.source_revision, p.passage) not in seen:
                seen.add((p.source_id, p.source_revision, p.passage))
                citations.append(mapping.citation(p.source_id, p.source_revision, p.passage))
        return facts_pb2.AskResponse(
            answer=a.text,
            answer_basis=a.basis,
            confidence=a.confidence,
            citations=citations,
            provenance=[
                facts_pb2.AskProvenance(
                    source_id=p.source_id,
                    source_revision=p.source_revision,
                    fact_id=p.fact_id,
                    save_intent=p.save_intent,
                    passage=mapping.passage(p.passage),
                    valid_from=mapping.timestamp(p.valid_from_us),
                    valid_to=mapping.timestamp(p.valid_to_us),
                )
                for p in a.pieces
            ],
            changed_at=mapping.timestamp(a.changed_at_us),
        )

    # Foreign sources, revocation, readback, erasure

    async def RegisterOwnerKey(self, request, context):  # type: ignore[no-untyped-def]
        receipt = await self._write(
            self._foreign.register_key,
            CALLER.get(),
            request.owner_id,
            request.key_id,
            request.public_key_pem,
        )
        return foreign_pb2.RegisterOwnerKeyResponse(
            owner_id=request.owner_id, key_id=request.key_id, receipt=mapping.receipt(receipt)
        )

    async def RevokeOwnerKey(self, request, context):  # type: ignore[no-untyped-def]
        retired = await self._write(
            self._foreign.revoke_key, CALLER.get(), request.owner_id, request.key_id
        )
        return foreign_pb2.RevokeOwnerKeyResponse(
            owner_id=request.owner_id,
            key_id=request.key_id,
            sources_affected=retired.sources_affected,
            receipt=mapping.receipt(retired.receipt),
        )

    async def PrepareForeignSource(self, request, context):  # type: ignore[no-untyped-def]
        pointer = _pointer(request.pointer)
        source_id, audience = self._foreign.prepare(CALLER.get(), request.canonical_owner, pointer)
        return foreign_pb2.PrepareForeignSourceResponse(
            source_id=source_id, audience=audience, content_digest=pointer.content_digest
        )

    async def AdmitForeignSource(self, request, context):  # type: ignore[no-untyped-def]
        cmd = AdmitCommand(
            request.canonical_owner, _pointer(request.pointer), request.assent, request.body
        )
        o = await self._write(self._foreign.admit, CALLER.get(), cmd)
        return foreign_pb2.AdmitForeignSourceResponse(
            source_id=o.source_id,
            revision=o.revision,
            effective_retrieval_state=STATES.to_proto(o.state),
            receipt=mapping.receipt(o.receipt),
        )

    async def RevokeSource(self, request, context):  # type: ignore[no-untyped-def]
        o = await self._write(
            self._lifecycle.revoke, CALLER.get(), request.source_id, request.reason
        )
        return foreign_pb2.RevokeSourceResponse(
            source_id=o.source.source_id,
            effective_retrieval_state=STATES.to_proto(o.state),
            receipt=mapping.receipt(o.receipt),
        )

    async def RevokeAssent(self, request, context):  # type: ignore[no-untyped-def]
        cmd = RevokeAssentCommand(request.source_id, request.assent_id, request.revocation)
        o = await self._write(self._lifecycle.revoke_assent, CALLER.get(), cmd)
        return foreign_pb2.RevokeAssentResponse(
            source_id=o.source.source_id,
            effective_retrieval_state=STATES.to_proto(o.state),
            receipt=mapping.receipt(o.receipt),
        )

    async def ReadbackSource(self, request, context):  # type: ignore[no-untyped-def]
        r = await self._run(self._lifecycle.readback, CALLER.get(), request.source_id)
        return foreign_pb2.ReadbackSourceResponse(
            source_id=r.source_id,
            clean=r.clean,
            effective_retrieval_state=STATES.to_proto(r.state),
            derivatives=[
                foreign_pb2.Derivative(
                    kind=d.kind, derivative_id=d.derivative_id, eligible=d.eligible, state=d.state
                )
                for d in r.derivatives
            ],
            retrievable_by=r.retrievable_by,
            physical_erasure=mapping.physical_erasure(r.physical.state),
            residue=r.physical.residue,
            scrubbed_at=mapping.timestamp(r.physical.scrubbed_at_us)
            if r.physical.scrubbed_at_us
            else None,
        )

    async def EraseSource(self, request, context):  # type: ignore[no-untyped-def]
        cmd = EraseCommand(request.source_id, request.expected_revision, request.reason)
        erased = await self._write(self._lifecycle.erase, CALLER.get(), cmd)
        return foreign_pb2.EraseSourceResponse(
            source_id=request.source_id, receipt=mapping.receipt(erased.receipt)
        )

    # Retrieval

    async def SearchMemories(self, request, context):  # type: ignore[no-untyped-def]
        with metrics.RETRIEVAL.labels("search").time():
            hits = await self._read(
                self._retrieval.search,
                CALLER.get(),
                request.query,
                request.thread_id,
                request.limit,
                request.group_by_source if request.HasField("group_by_source") else True,
            )
        return retrieval_pb2.SearchMemoriesResponse(
            hits=[
                retrieval_pb2.SearchHit(
                    source_id=h.source_id,
                    revision=h.revision,
                    score=h.score,
                    snippet=h.snippet,
                    citation=mapping.citation(h.source_id, h.revision, h.passage),
                    passage=mapping.passage(h.passage),
                )
                for h in hits
            ]
        )

    async def AssemblePrompt(self, request, context):  # type: ignore[no-untyped-def]
        with metrics.RETRIEVAL.labels("prompt").time():
            result = await self._run(
                self._retrieval.assemble,
                CALLER.get(),
                request.query,
                request.thread_id,
                request.token_budget,
            )
        return retrieval_pb2.AssemblePromptResponse(
            context=result.block.context,
            citations=[
                mapping.citation(c.source_id, c.revision, c.passage) for c in result.block.cited
            ],
            prompt_record_id=result.prompt_record_id,
            tokens_used=result.block.tokens,
        )

    async def ExplainRetrieval(self, request, context):  # type: ignore[no-untyped-def]
        with metrics.RETRIEVAL.labels("explain").time():
            result = await self._run(
                self._retrieval.explain,
                CALLER.get(),
                request.query,
                request.thread_id,
                request.limit,
            )
        return retrieval_pb2.ExplainRetrievalResponse(
            entries=[
                retrieval_pb2.ExplanationEntry(
                    source_id=e.source_id,
                    revision=e.revision,
                    classification=CLASSIFICATIONS.to_proto(e.classification),
                    included=e.included,
                    reason=REASONS.to_proto(e.reason),
                    rank=e.rank,
                    score=e.score,
                    matched_by=MATCHED_BY.to_proto(e.matched_by) if e.matched_by else 0,
                    lexical_score=e.lexical_score,
                    semantic_score=e.semantic_score,
                )
                for e in result.entries
            ],
            total_matches=result.total_matches,
            truncated=result.truncated,
        )

    async def GetRetrievalStatus(self, request, context):  # type: ignore[no-untyped-def]
        st = await self._run(self._retrieval.status, CALLER.get())
        return capabilities_pb2.RetrievalStatus(
            mode=st.mode,
            lexical_only_reason=st.lexical_only_reason,
            embedding_model=st.model_id,
            embedding_dimension=st.dimension,
            embeddings_pending=st.pending,
        )

    # Audit and events

    async def ListAuditReceipts(self, request, context):  # type: ignore[no-untyped-def]
        rows, token = await self._run(
            self._audit.list,
            CALLER.get(),
            request.target_id,
            request.page_size,
            request.page_token,
            request.newest_first,
        )
        return audit_pb2.ListAuditReceiptsResponse(
            receipts=[mapping.receipt(r) for r in rows], next_page_token=token
        )

    async def VerifyAuditChain(self, request, context):  # type: ignore[no-untyped-def]
        result = await self._run(self._audit.verify, CALLER.get())
        return audit_pb2.VerifyAuditChainResponse(
            ok=result.ok,
            length=result.length,
            head_hash=result.head_hash,
            first_invalid_sequence=result.first_invalid_sequence,
        )

    async def StreamEvents(  # type: ignore[no-untyped-def]
        self, request: events_pb2.WatchEventsRequest, context
    ) -> AsyncIterator[events_pb2.Event]:
        caller = CALLER.get()
        kinds = sorted({mapping.EVENT_KINDS.from_proto("kinds", k) for k in request.kinds})
        position = request.after_sequence
        await context.send_initial_metadata(())  # tells the gateway the stream is open
        waiter = self._wakeups.waiter(caller.tenant_id)
        try:
            while True:
                waiter.clear()  # before reading: a commit after this read wakes us
                batch = await self._run(self._feed.after, caller, position, kinds)
                for logged in batch:
                    yield mapping.event(logged)
                if batch:
                    position = batch[-1].sequence
                    continue
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter.wait(), timeout=self._poll)
        finally:
            self._wakeups.release(caller.tenant_id, waiter)


def _pointer(p) -> Pointer:  # type: ignore[no-untyped-def]
    return Pointer(p.uri, p.content_digest, p.media_type, p.title, p.descriptor)


def caller_from(ctx) -> Caller:  # type: ignore[no-untyped-def]
    kinds = {v: k for k, v in internal_call.PRINCIPAL_KINDS.items()}
    return Caller(
        tenant_id=ctx.tenant_id,
        principal_id=ctx.principal_id,
        principal_kind=kinds.get(ctx.principal_kind, "service"),
        scopes=frozenset(ctx.scopes),
        request_id=ctx.request_id,
        surface=ctx.surface or "grpc",
        # An older gateway sends no trust list: its callers keep every intent (the default).
        trusted_save_intents=frozenset(ctx.save_intent_trust.intents)
        if ctx.HasField("save_intent_trust")
        else save_intents.ALL,
    )

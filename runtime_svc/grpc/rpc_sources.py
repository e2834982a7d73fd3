"""The runtime's RPCs of thread memory modes, memories and sources, review and insert policy."""

from __future__ import annotations

from agentmem.contract.errors import invalid_field
from agentmem.contract.scopes import Scope
from agentmem.v1 import (
    review_pb2,
    sources_pb2,
    thread_mode_pb2,
)
from runtime_svc.domain.insert_policy import InsertPolicy
from runtime_svc.domain.review import Decision
from runtime_svc.domain.sources import Classification, SaveIntent, Status
from runtime_svc.domain.thread_mode import Mode
from runtime_svc.grpc import enums, mapping
from runtime_svc.grpc.enums import (
    CLASSIFICATIONS,
    KINDS,
    MODES,
    STATES,
    STATUSES,
)
from runtime_svc.grpc.servicer_base import CALLER, Context, ServicerBase
from runtime_svc.services.inserts import InsertCommand, Inserted
from runtime_svc.services.source_lifecycle import (
    ClassifyCommand,
    ReviewCommand,
)
from runtime_svc.storage.source_pages import SourceFilter

MEMORY_FILTERS = {
    review_pb2.MEMORY_STATUS_FILTER_UNSPECIFIED: (Status.ACTIVE.value,),
    review_pb2.MEMORY_STATUS_FILTER_ACTIVE: (Status.ACTIVE.value,),
    review_pb2.MEMORY_STATUS_FILTER_PENDING_REVIEW: (Status.PENDING_REVIEW.value,),
    review_pb2.MEMORY_STATUS_FILTER_REJECTED: (Status.REJECTED.value,),
    review_pb2.MEMORY_STATUS_FILTER_ALL: tuple(s.value for s in Status),
}


class SourceRpcs(ServicerBase):
    # Thread memory mode

    async def ReadThreadMemoryMode(
        self, request: thread_mode_pb2.ReadThreadMemoryModeRequest, context: Context
    ) -> thread_mode_pb2.ReadThreadMemoryModeResponse:
        state = await self._run(self._thread_modes.read, CALLER.get(), request.thread_id)
        return thread_mode_pb2.ReadThreadMemoryModeResponse(
            thread_id=state.thread_id,
            mode=MODES.to_proto(state.mode),
            revision=state.revision,
            effective_at=mapping.timestamp(state.effective_at_us),
        )

    async def SetThreadMemoryMode(
        self, request: thread_mode_pb2.SetThreadMemoryModeRequest, context: Context
    ) -> thread_mode_pb2.SetThreadMemoryModeResponse:
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

    async def InsertMemory(
        self, request: sources_pb2.InsertMemoryRequest, context: Context
    ) -> sources_pb2.InsertMemoryResponse:
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
            hold_reason=result.hold_reason,
        )

    async def ListSources(
        self, request: sources_pb2.ListSourcesRequest, context: Context
    ) -> sources_pb2.ListSourcesResponse:
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

    async def GetSource(
        self, request: sources_pb2.GetSourceRequest, context: Context
    ) -> sources_pb2.Source:
        found, state = await self._run(
            self._reads.get_attributed, CALLER.get(), request.source_id, request.include_content
        )
        return mapping.source(
            found.source, state, include_content=request.include_content, turns=found.turns
        )

    async def SetSourceClassification(
        self, request: sources_pb2.SetSourceClassificationRequest, context: Context
    ) -> sources_pb2.SetSourceClassificationResponse:
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

    async def ListMemories(
        self, request: review_pb2.ListMemoriesRequest, context: Context
    ) -> review_pb2.ListMemoriesResponse:
        caller = CALLER.get()
        statuses = MEMORY_FILTERS.get(request.status_filter)
        if statuses is None:
            raise invalid_field("status_filter", "must be one of the defined values")
        found, token = await self._run(
            self._reads.list_attributed, caller, statuses, request.page_size, request.page_token
        )
        text = Scope.CONTENT_READ in caller.scopes
        return review_pb2.ListMemoriesResponse(
            memories=[mapping.memory(m.source, include_content=text, turns=m.turns) for m in found],
            next_page_token=token,
        )

    async def ReviewMemory(
        self, request: review_pb2.ReviewMemoryRequest, context: Context
    ) -> review_pb2.ReviewMemoryResponse:
        decision = Decision(enums.DECISIONS.from_proto("decision", request.decision))
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

    async def GetInsertPolicy(
        self, request: review_pb2.GetInsertPolicyRequest, context: Context
    ) -> review_pb2.GetInsertPolicyResponse:
        policy, revision = await self._run(self._inserts.current_policy, CALLER.get())
        return review_pb2.GetInsertPolicyResponse(
            insert_policy=enums.POLICIES.to_proto(policy),
            overridden=revision > 0,
            revision=revision,
        )

    async def SetInsertPolicy(
        self, request: review_pb2.SetInsertPolicyRequest, context: Context
    ) -> review_pb2.SetInsertPolicyResponse:
        policy = InsertPolicy(enums.POLICIES.from_proto("insert_policy", request.insert_policy))
        change = await self._write(
            self._inserts.set_policy, CALLER.get(), request.expected_revision, policy
        )
        return review_pb2.SetInsertPolicyResponse(
            previous_insert_policy=enums.POLICIES.to_proto(change.previous),
            insert_policy=enums.POLICIES.to_proto(change.policy),
            revision=change.revision,
            receipt=mapping.receipt(change.receipt),
        )

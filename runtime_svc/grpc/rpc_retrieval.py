"""The runtime's RPCs of retrieval (search, prompt assembly, explanation, status)."""

from __future__ import annotations

from agentmem.v1 import capabilities_pb2, retrieval_pb2
from agentmem_kernel import metrics
from runtime_svc.grpc import mapping
from runtime_svc.grpc.enums import CLASSIFICATIONS, MATCHED_BY, POLICIES, REASONS
from runtime_svc.grpc.servicer_base import CALLER, Context, ServicerBase


class RetrievalRpcs(ServicerBase):
    async def SearchMemories(
        self, request: retrieval_pb2.SearchMemoriesRequest, context: Context
    ) -> retrieval_pb2.SearchMemoriesResponse:
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

    async def AssemblePrompt(
        self, request: retrieval_pb2.AssemblePromptRequest, context: Context
    ) -> retrieval_pb2.AssemblePromptResponse:
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
                mapping.citation(c.source_id, c.revision, c.passage, c.chars)
                for c in result.block.cited
            ],
            prompt_record_id=result.prompt_record_id,
            tokens_used=result.block.tokens,
        )

    async def ExplainRetrieval(
        self, request: retrieval_pb2.ExplainRetrievalRequest, context: Context
    ) -> retrieval_pb2.ExplainRetrievalResponse:
        with metrics.RETRIEVAL.labels("explain").time():
            result = await self._run(
                self._retrieval.explain,
                CALLER.get(),
                request.query,
                request.thread_id,
                request.limit,
                request.token_budget,
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
                    matched_by=MATCHED_BY.to_proto(e.matched_by) if e.matched_by else None,
                    lexical_score=e.lexical_score,
                    semantic_score=e.semantic_score,
                    hold_reason=e.hold_reason,
                    passage=mapping.passage(e.passage, e.part),
                )
                for e in result.entries
            ],
            total_matches=result.total_matches,
            truncated=result.truncated,
        )

    async def GetCapabilities(
        self, request: capabilities_pb2.GetCapabilitiesRequest, context: Context
    ) -> capabilities_pb2.GetCapabilitiesResponse:
        """What the runtime knows of the caller's capabilities: the tenant's insert policy
        and the state of retrieval (the gateway adds what it decides: the API version, the
        capabilities it gates, the caller)."""
        caller = CALLER.get()
        policy, _ = await self._run(self._inserts.current_policy, caller)
        st = await self._run(self._retrieval.status, caller)
        return capabilities_pb2.GetCapabilitiesResponse(
            insert_policy=POLICIES.to_proto(policy),
            retrieval=capabilities_pb2.RetrievalStatus(
                mode=st.mode,
                lexical_only_reason=st.lexical_only_reason,
                embedding_model=st.model_id,
                embedding_dimension=st.dimension,
                embeddings_pending=st.pending,
                prompt_tokenizer=st.tokenizer,
                embeddings_lag_seconds=round(st.lag_s, 3),
                embeddings_set_aside=st.set_aside,
                embeddings_last_error=st.last_error,
                embeddings_last_error_at=mapping.timestamp(st.last_error_at_us),
            ),
        )

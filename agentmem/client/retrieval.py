"""The client's retrieval methods: searching memories, assembling a prompt's memory block and
explaining a retrieval (see `agentmem.client.memory` for how methods call)."""

from __future__ import annotations

from agentmem.client.memory import Caller
from agentmem.v1 import retrieval_pb2


class RetrievalMethods(Caller):
    def search_memories(
        self,
        *,
        query: str,
        thread_id: str = "",
        limit: int = 10,
        group_by_source: bool | None = None,
        timeout: float | None = None,
    ) -> retrieval_pb2.SearchMemoriesResponse:
        """The eligible memories best matching `query` (by words and, when on, by meaning),
        with snippets and citations; none when the thread's memory is disabled.
        `group_by_source`: at most one hit per source, its best passage (the default); False
        lets several passages of one conversation appear."""
        return self._call(
            "SearchMemories",
            retrieval_pb2.SearchMemoriesRequest(
                query=query, thread_id=thread_id, limit=limit, group_by_source=group_by_source
            ),
            retrieval_pb2.SearchMemoriesResponse,
            timeout,
        )

    def assemble_prompt(
        self,
        *,
        query: str,
        thread_id: str = "",
        token_budget: int = 500,
        timeout: float | None = None,
    ) -> retrieval_pb2.AssemblePromptResponse:
        """The memory block to put in a model's prompt for `query`, within `token_budget`,
        with its citations (empty when the thread's memory is disabled)."""
        return self._call(
            "AssemblePrompt",
            retrieval_pb2.AssemblePromptRequest(
                query=query, thread_id=thread_id, token_budget=token_budget
            ),
            retrieval_pb2.AssemblePromptResponse,
            timeout,
        )

    def explain_retrieval(
        self,
        *,
        query: str,
        thread_id: str = "",
        limit: int = 10,
        token_budget: int = 0,
        timeout: float | None = None,
    ) -> retrieval_pb2.ExplainRetrievalResponse:
        """Every source `query` matches, with the reason (ids only); with `token_budget`, the
        sources selected are exactly those the block at that budget cites."""
        return self._call(
            "ExplainRetrieval",
            retrieval_pb2.ExplainRetrievalRequest(
                query=query, thread_id=thread_id, limit=limit, token_budget=token_budget
            ),
            retrieval_pb2.ExplainRetrievalResponse,
            timeout,
        )

"""The MCP server's tools, each a thin call of one public RPC with the caller's credential
(`agentmem.mcp.server` builds the server and says who the caller is)."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp_types import InputRequiredResult
from pydantic import Field

from agentmem.client import person_decisions
from agentmem.mcp import confirm as mcp_confirm
from agentmem.mcp.arguments import (
    AsOf,
    ClassificationName,
    Limit,
    Mode,
    PageSize,
    RequiredThreadId,
    Revision,
    SaveIntent,
    SourceId,
    StateName,
    ThreadId,
    TokenBudget,
    tool_annotations,
)
from agentmem.mcp.toolbox import Toolbox
from agentmem.v1 import (
    facts_pb2,
    retrieval_pb2,
    review_pb2,
    sources_pb2,
    thread_mode_pb2,
)


def register(t: Toolbox) -> None:
    """Adds every tool to `t`'s server."""

    @t.tool(
        "Save a memory about the user. Call ONLY when the user explicitly asks you to remember "
        "something (save_intent='explicit_user_request'), confirms when you ask "
        "('user_confirmed'), or has turned on auto-save ('client_auto_save'). Do NOT call for "
        "ordinary statements made in conversation. save_intent_source names your client; "
        "save_intent_evidence is a short non-sensitive note, never prompt history. "
        "Where your host can ask the user, the user is asked to confirm before anything is "
        "stored. A result with save_intent_held or status pending_review is saved and waits "
        "for the user's review (the agentmem console's inbox, or `agentmem memories review "
        "SOURCE_ID approve`): tell the user so; approving it is theirs to do, not yours.",
        tool_annotations("InsertMemory", "Save a memory"),
        sources_pb2.InsertMemoryResponse,
    )
    async def memory_insert(
        ctx: Context,
        content: Annotated[str, Field(description="what to remember")],
        save_intent: SaveIntent | None = None,
        save_intent_source: str = "",
        save_intent_evidence: str = "",
        thread_id: ThreadId = "",
        request_id: Annotated[str, Field(description="makes a retry return the first result")] = "",
    ) -> dict[str, Any] | InputRequiredResult:
        gateway = t.caller(ctx)
        given = mcp_confirm.Intent(save_intent or "", save_intent_source, save_intent_evidence)
        try:
            await t.vouched()
            intent = await mcp_confirm.settle(ctx, gateway, content, given, t.confirm_timeout)
        except mcp_confirm.Unanswered as question:  # the host asks its user, then calls again
            return question.result
        return await t.call(
            gateway.insert_memory(
                content=content,
                save_intent=intent.save_intent,
                save_intent_source=intent.source,
                save_intent_evidence=intent.evidence,
                thread_id=thread_id,
                request_id=request_id,
            )
        )

    @t.tool(
        "Search the user's memories (only those allowed for retrieval).",
        tool_annotations("SearchMemories", "Search memories"),
        retrieval_pb2.SearchMemoriesResponse,
    )
    async def memory_search(
        ctx: Context, query: str, limit: Limit = 5, thread_id: ThreadId = ""
    ) -> dict[str, Any]:
        return await t.call(
            t.caller(ctx).search_memories(query=query, limit=limit, thread_id=thread_id)
        )

    @t.tool(
        "Answer a question about the user from remembered facts and memories, with provenance.",
        tool_annotations("Ask", "Ask memory"),
        facts_pb2.AskResponse,
    )
    async def memory_ask(
        ctx: Context, question: str, token_budget: TokenBudget = 300, as_of: AsOf = None
    ) -> dict[str, Any]:
        return await t.call(
            t.caller(ctx).ask(question=question, token_budget=token_budget, as_of=as_of)
        )

    @t.tool(
        "Explain which memories a query selects and why others are filtered "
        "(ids and reasons only, no text).",
        tool_annotations("ExplainRetrieval", "Explain retrieval"),
        retrieval_pb2.ExplainRetrievalResponse,
    )
    async def memory_explain(
        ctx: Context, query: str, limit: Limit = 5, thread_id: ThreadId = ""
    ) -> dict[str, Any]:
        return await t.call(
            t.caller(ctx).explain_retrieval(query=query, limit=limit, thread_id=thread_id)
        )

    @t.tool(
        "List memory sources (metadata only).",
        tool_annotations("ListSources", "List sources"),
        sources_pb2.ListSourcesResponse,
    )
    async def memory_sources_list(
        ctx: Context,
        page_size: PageSize = 50,
        page_token: str = "",
        classification: ClassificationName | None = None,
        effective_state: StateName | None = None,
    ) -> dict[str, Any]:
        return await t.call(
            t.caller(ctx).list_sources(
                page_size=page_size,
                page_token=page_token,
                classification=classification,
                effective_state=effective_state,
            )
        )

    @t.tool(
        "List memories waiting for the user's review (ids and states; their text only with "
        "a credential that may read it). Approving or rejecting them is the user's decision.",
        tool_annotations("ListMemories", "List pending memories"),
        review_pb2.ListMemoriesResponse,
    )
    async def memory_pending_list(
        ctx: Context, page_size: PageSize = 50, page_token: str = ""
    ) -> dict[str, Any]:
        return await t.call(
            t.caller(ctx).list_memories(
                status_filter="pending_review", page_size=page_size, page_token=page_token
            )
        )

    @t.tool(
        "Approve a memory that waits for review: it becomes retrievable."
        + person_decisions.APPROVE.described(),
        tool_annotations("ReviewMemory", "Approve a pending memory"),
        review_pb2.ReviewMemoryResponse,
    )
    async def memory_pending_approve(
        ctx: Context, source_id: SourceId, expected_revision: Revision
    ) -> dict[str, Any]:
        return await t.call(
            t.caller(ctx).review_memory(
                source_id=source_id, decision="approve", expected_revision=expected_revision
            ),
            person_decisions.APPROVE,
        )

    @t.tool(
        "Reject a memory that waits for review: it is never retrieved."
        + person_decisions.REJECT.described(),
        tool_annotations("ReviewMemory", "Reject a pending memory", destructive=True),
        review_pb2.ReviewMemoryResponse,
    )
    async def memory_pending_reject(
        ctx: Context, source_id: SourceId, expected_revision: Revision
    ) -> dict[str, Any]:
        return await t.call(
            t.caller(ctx).review_memory(
                source_id=source_id, decision="reject", expected_revision=expected_revision
            ),
            person_decisions.REJECT,
        )

    @t.tool(
        "Search facts extracted from the user's memories: the current ones; as_of gives those "
        "current at that time, include_superseded every value with its dates.",
        tool_annotations("SearchFacts", "Search facts"),
        facts_pb2.SearchFactsResponse,
    )
    async def memory_fact_search(
        ctx: Context,
        query: str = "",
        save_intent_source: str = "",
        save_intent: SaveIntent | None = None,
        as_of: AsOf = None,
        include_superseded: bool = False,
    ) -> dict[str, Any]:
        return await t.call(
            t.caller(ctx).search_facts(
                query=query,
                save_intent_source=save_intent_source,
                save_intent=save_intent or "",
                as_of=as_of,
                include_superseded=include_superseded,
            )
        )

    @t.tool(
        "The user's profile, consolidated from remembered facts (as it is now, or as_of).",
        tool_annotations("GetProfile", "Profile"),
        facts_pb2.GetProfileResponse,
    )
    async def memory_profile_get(
        ctx: Context, save_intent_source: str = "", as_of: AsOf = None
    ) -> dict[str, Any]:
        return await t.call(
            t.caller(ctx).get_profile(save_intent_source=save_intent_source, as_of=as_of)
        )

    @t.tool(
        "Retract a remembered fact the user says is wrong: the value before it becomes "
        "current again; the memory stays." + person_decisions.RETRACT.described(),
        tool_annotations("RetractFact", "Retract a fact", destructive=True),
        facts_pb2.RetractFactResponse,
    )
    async def memory_fact_retract(
        ctx: Context,
        fact_id: Annotated[str, Field(description="the fact id (fact_…)")],
        reason: Annotated[str, Field(description="why (optional, not stored)")] = "",
    ) -> dict[str, Any]:
        return await t.call(
            t.caller(ctx).retract_fact(fact_id=fact_id, reason=reason), person_decisions.RETRACT
        )

    @t.tool(
        "Read a thread's memory mode (enabled or disabled).",
        tool_annotations("ReadThreadMemoryMode", "Thread memory mode"),
        thread_mode_pb2.ReadThreadMemoryModeResponse,
    )
    async def memory_thread_mode_get(ctx: Context, thread_id: RequiredThreadId) -> dict[str, Any]:
        return await t.call(t.caller(ctx).read_thread_memory_mode(thread_id=thread_id))

    @t.tool(
        "Enable or disable memory for a thread (compare-and-swap on expected_revision; "
        "0 for a thread never set)." + person_decisions.THREAD_MODE.described(),
        tool_annotations("SetThreadMemoryMode", "Set thread memory mode"),
        thread_mode_pb2.SetThreadMemoryModeResponse,
    )
    async def memory_thread_mode_set(
        ctx: Context, thread_id: RequiredThreadId, mode: Mode, expected_revision: Revision
    ) -> dict[str, Any]:
        return await t.call(
            t.caller(ctx).set_thread_memory_mode(
                thread_id=thread_id, mode=mode, expected_revision=expected_revision
            ),
            person_decisions.THREAD_MODE,
        )

    @t.tool(
        "Mark a source active or cold (cold: kept but never retrieved)."
        + person_decisions.CLASSIFY.described(),
        tool_annotations("SetSourceClassification", "Classify a source"),
        sources_pb2.SetSourceClassificationResponse,
    )
    async def memory_source_classify(
        ctx: Context,
        source_id: SourceId,
        classification: ClassificationName,
        expected_revision: Revision,
    ) -> dict[str, Any]:
        return await t.call(
            t.caller(ctx).set_source_classification(
                source_id=source_id,
                classification=classification,
                expected_revision=expected_revision,
            ),
            person_decisions.CLASSIFY,
        )

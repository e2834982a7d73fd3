"""`agentmem mcp`: memory tools for MCP clients, each a thin call of one public RPC.

Every call goes through the gateway with the user's credential, so the insert policy,
scopes, classification, assent and audit are exactly those of the gRPC API: this server
holds no policy and no state of its own. gRPC errors become tool errors with the same
reason and the same no-echo guarantee.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
from google.protobuf import json_format
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from agentmem.client import MemoryClient, connect
from agentmem.core.grpc_errors import error_info, status_of_call
from agentmem.v1 import (
    common_pb2,
    facts_pb2,
    retrieval_pb2,
    review_pb2,
    sources_pb2,
    thread_mode_pb2,
)

INSTRUCTIONS = (
    "agentmem stores what the user wants remembered. Only save a memory when the user asks "
    "you to remember something, or confirms when you ask; never save ordinary statements on "
    "your own. Search or ask before answering questions about the user."
)


def _call(method: Callable[..., Any], request: Any) -> dict[str, Any]:
    try:
        response = method(request, timeout=30)
    except grpc.RpcError as e:
        info = error_info(status_of_call(e))
        raise ToolError(f"{info.reason if info else e.code().name}: {e.details()}") from None
    return json_format.MessageToDict(response, preserving_proto_field_name=True)


def build(client: MemoryClient) -> MCPServer:
    server = MCPServer("agentmem", instructions=INSTRUCTIONS)

    @server.tool(
        description=(
            "Save a memory about the user. Call ONLY when the user explicitly asks you to remember "
            "something (save_intent='explicit_user_request'), confirms when you ask "
            "('user_confirmed'), or has turned on auto-save ('client_auto_save'). Do NOT call for "
            "ordinary statements made in conversation. save_intent_source names your client; "
            "save_intent_evidence is a short non-sensitive note, never prompt history."
        )
    )
    def memory_insert(
        content: str,
        save_intent: str = "",
        save_intent_source: str = "",
        save_intent_evidence: str = "",
        thread_id: str = "",
        request_id: str = "",
    ) -> dict[str, Any]:
        return _call(
            client.InsertMemory,
            sources_pb2.InsertMemoryRequest(
                content=content,
                thread_id=thread_id,
                request_id=request_id,
                metadata=sources_pb2.InsertMetadata(
                    save_intent=save_intent,
                    save_intent_source=save_intent_source,
                    save_intent_evidence=save_intent_evidence,
                ),
            ),
        )

    @server.tool(description="Search the user's memories (only those allowed for retrieval).")
    def memory_search(query: str, limit: int = 5, thread_id: str = "") -> dict[str, Any]:
        return _call(
            client.SearchMemories,
            retrieval_pb2.SearchMemoriesRequest(query=query, limit=limit, thread_id=thread_id),
        )

    @server.tool(
        description="Answer a question about the user from remembered facts and "
        "memories, with provenance."
    )
    def memory_ask(question: str, token_budget: int = 300) -> dict[str, Any]:
        return _call(client.Ask, facts_pb2.AskRequest(question=question, token_budget=token_budget))

    @server.tool(
        description="Explain which memories a query selects and why others are "
        "filtered (ids and reasons only, no text)."
    )
    def memory_explain(query: str, limit: int = 5, thread_id: str = "") -> dict[str, Any]:
        return _call(
            client.ExplainRetrieval,
            retrieval_pb2.ExplainRetrievalRequest(query=query, limit=limit, thread_id=thread_id),
        )

    @server.tool(description="List memory sources (metadata only).")
    def memory_sources_list(page_size: int = 50, page_token: str = "") -> dict[str, Any]:
        return _call(
            client.ListSources,
            sources_pb2.ListSourcesRequest(page_size=page_size, page_token=page_token),
        )

    @server.tool(description="List memories waiting for review.")
    def memory_pending_list(page_size: int = 50, page_token: str = "") -> dict[str, Any]:
        return _call(
            client.ListMemories,
            review_pb2.ListMemoriesRequest(
                status_filter=review_pb2.MEMORY_STATUS_FILTER_PENDING_REVIEW,
                page_size=page_size,
                page_token=page_token,
            ),
        )

    @server.tool(description="Approve a pending memory. Only on the user's own decision.")
    def memory_pending_approve(source_id: str, expected_revision: int) -> dict[str, Any]:
        return _call(
            client.ReviewMemory,
            review_pb2.ReviewMemoryRequest(
                source_id=source_id,
                expected_revision=expected_revision,
                decision=review_pb2.DECISION_APPROVE,
            ),
        )

    @server.tool(description="Reject a pending memory.")
    def memory_pending_reject(source_id: str, expected_revision: int) -> dict[str, Any]:
        return _call(
            client.ReviewMemory,
            review_pb2.ReviewMemoryRequest(
                source_id=source_id,
                expected_revision=expected_revision,
                decision=review_pb2.DECISION_REJECT,
            ),
        )

    @server.tool(description="Search facts extracted from the user's memories.")
    def memory_fact_search(
        query: str = "", save_intent_source: str = "", save_intent: str = ""
    ) -> dict[str, Any]:
        return _call(
            client.SearchFacts,
            facts_pb2.SearchFactsRequest(
                query=query, save_intent_source=save_intent_source, save_intent=save_intent
            ),
        )

    @server.tool(description="The user's profile, consolidated from remembered facts.")
    def memory_profile_get(save_intent_source: str = "") -> dict[str, Any]:
        return _call(
            client.GetProfile, facts_pb2.GetProfileRequest(save_intent_source=save_intent_source)
        )

    @server.tool(description="Read a thread's memory mode (enabled or disabled).")
    def memory_thread_mode_get(thread_id: str) -> dict[str, Any]:
        return _call(
            client.ReadThreadMemoryMode,
            thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id=thread_id),
        )

    @server.tool(
        description="Enable or disable memory for a thread (compare-and-swap on "
        "expected_revision; 0 for a thread never set)."
    )
    def memory_thread_mode_set(thread_id: str, mode: str, expected_revision: int) -> dict[str, Any]:
        modes = {
            "enabled": common_pb2.MEMORY_MODE_ENABLED,
            "disabled": common_pb2.MEMORY_MODE_DISABLED,
        }
        if mode not in modes:
            raise ToolError("INVALID_FIELD: mode must be enabled or disabled")
        return _call(
            client.SetThreadMemoryMode,
            thread_mode_pb2.SetThreadMemoryModeRequest(
                thread_id=thread_id, mode=modes[mode], expected_revision=expected_revision
            ),
        )

    @server.tool(description="Mark a source active or cold (cold: kept but never retrieved).")
    def memory_source_classify(
        source_id: str, classification: str, expected_revision: int
    ) -> dict[str, Any]:
        values = {
            "active": sources_pb2.CLASSIFICATION_ACTIVE,
            "cold": sources_pb2.CLASSIFICATION_COLD,
        }
        if classification not in values:
            raise ToolError("INVALID_FIELD: classification must be active or cold")
        return _call(
            client.SetSourceClassification,
            sources_pb2.SetSourceClassificationRequest(
                source_id=source_id,
                classification=values[classification],
                expected_revision=expected_revision,
            ),
        )

    return server


def run(address: str, token: str, transport: str, host: str, port: int) -> None:
    client = connect(address, token)
    server = build(client)
    if transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=port)

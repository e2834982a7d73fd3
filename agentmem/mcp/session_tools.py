"""The MCP tool for sessions: `memory_append` adds a session's next turns to its stored
conversation (registered beside `agentmem.mcp.tools`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from agentmem.mcp import confirm as mcp_confirm
from agentmem.mcp.arguments import Revision, SaveIntent, SourceId, tool_annotations
from agentmem.mcp.toolbox import Toolbox
from agentmem.v1 import sources_pb2


class Turn(BaseModel):
    role: Literal["user", "assistant", "system", "tool"]
    content: str
    name: str = ""


Turns = Annotated[list[Turn], Field(min_length=1, description="the turns to append, oldest first")]


def register(t: Toolbox) -> None:
    @t.tool(
        "Append the next turns of a session to its stored conversation (one that "
        "memory_insert's host stored with messages), as its next revision: pass the revision "
        "the last call returned. The conversation keeps its classification; what would hold "
        "an insert for review holds it. save_intent as for memory_insert: where your host can "
        "ask the user, the user is asked to confirm before anything is appended.",
        tool_annotations("AppendMessages", "Append to a session"),
        sources_pb2.AppendMessagesResponse,
    )
    async def memory_append(
        ctx: Context,
        source_id: SourceId,
        expected_revision: Revision,
        messages: Turns,
        save_intent: SaveIntent | None = None,
        save_intent_source: str = "",
    ) -> dict[str, Any]:
        gateway = t.caller(ctx)
        given = mcp_confirm.Intent(save_intent or "", save_intent_source, "")
        said = "\n".join(m.content for m in messages)
        intent = await mcp_confirm.settle(ctx, gateway, said, given, t.confirm_timeout)
        return await t.call(
            gateway.append_messages(
                source_id=source_id,
                expected_revision=expected_revision,
                messages=[m.model_dump() for m in messages],
                save_intent=intent.save_intent,
                save_intent_source=intent.source,
                save_intent_evidence=intent.evidence,
            )
        )

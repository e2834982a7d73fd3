"""Asking the user through the MCP host before a memory is saved (elicitation).

What a model writes in a tool's arguments is the model's word, not the user's. A client
that declared the elicitation capability can show the user a question in its own interface
and return the user's answer by protocol, which the model cannot answer for. For such a
client `memory_insert` therefore never forwards `explicit_user_request` or `user_confirmed`
from the arguments: it asks ("Save this memory? …", with the text), and only an accepted
answer stores the memory, as `user_confirmed` from the client's name. It also asks when the
call has no intent the gateway would accept (no marker under `require_save_intent` or
`review_pending`, or a marker the server's credential is not trusted for). A client without
elicitation keeps the plain behaviour: the arguments are forwarded as they are.

How the question travels depends on the protocol revision the host negotiated. Up to
2025-11-25 the server sends `elicitation/create` during the call and waits for the answer
(`timeout`). From 2026-07-28 the tool's result is the question (`input_required`):
the host asks its user and calls the tool again with the answer in `inputResponses`, and the
`requestState` this server minted (sealed by the SDK, bound to the same tool and arguments,
so the text saved is the text the user saw). An answer that comes without that state, the
server never asked for: it asks.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from enum import Enum
from typing import Any

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult
from mcp_types.version import is_version_at_least

from agentmem.client import AsyncClient
from agentmem.client.errors import ApiError
from agentmem.contract import save_intents
from agentmem.contract.errors import AgentmemError, Reason
from agentmem.contract.save_intents import SaveIntentName
from agentmem.v1 import common_pb2

DEFAULT_TIMEOUT = 120.0  # seconds the user has to answer
EVIDENCE = "confirmed through the host's prompt"
UNNAMED_HOST = "mcp-host"
MAX_SOURCE = 64  # metadata.save_intent_source's limit


class Step(Enum):
    FORWARD = "forward"  # send the call as it is
    ASK = "ask"  # ask the user through the host first


def plan(claimed: str, policy: str, trusted: Collection[str]) -> Step:
    """What to do with an insert from a client that can ask its user.

    `policy` is the tenant's insert policy (permissive, require_save_intent,
    review_pending); `trusted` the save intents the server's credential is believed for.
    """
    if claimed in save_intents.USER_ASSERTED:
        return Step.ASK  # the model may not say on the user's behalf what the user decided
    if claimed:
        return Step.FORWARD if claimed in trusted else Step.ASK
    return Step.FORWARD if policy == "permissive" else Step.ASK


SAVE = "save"
# The form the host shows: exactly the keys the MCP specification allows in a
# `requestedSchema` (a flat object of primitive properties), so every host can parse it.
# No default of yes: consent is an explicit `true` from the user.
REQUESTED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        SAVE: {
            "type": "boolean",
            "title": "Save this memory",
            "description": "Yes keeps this text in your memory; no stores nothing.",
            "default": False,
        }
    },
    "required": [SAVE],
}


@dataclass(frozen=True)
class Answer:
    confirmed: bool
    outcome: str  # what happened, in words, for the tool result


def can_ask(ctx: Context) -> bool:
    """Whether the client declared form elicitation (a bare `elicitation: {}` is form)."""
    declared = ctx.request_context.session.client_capabilities
    elicitation = declared.elicitation if declared is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def host_name(ctx: Context) -> str:
    """The client's own name (`clientInfo.name`), as the save intent's source."""
    params = ctx.request_context.session.client_params
    name = params.client_info.name if params is not None else ""
    name = "".join(c for c in name if c.isprintable())[:MAX_SOURCE].strip()
    return name or UNNAMED_HOST


def question(content: str) -> str:
    return f"Save this memory?\n\n{content}"


# From this revision on, a question rides the tool's result (`input_required`).
QUESTION_IN_RESULT = "2026-07-28"
ASKED = "agentmem/save-asked"  # the request state of a call whose question was sent


class Unanswered(Exception):
    """The question is the tool's result (2026-07-28 on): the host asks its user, then calls
    the tool again with the answer."""

    def __init__(self, result: InputRequiredResult) -> None:
        super().__init__("the user's answer is needed")
        self.result = result


def _in_result(ctx: Context) -> bool:
    version = ctx.protocol_version
    return version is not None and is_version_at_least(version, QUESTION_IN_RESULT)


def _judged(action: str, content: dict[str, Any] | None) -> Answer:
    """Yes only for an accepted form whose `save` is `true`."""
    if action == "accept":
        if (content or {}).get(SAVE) is True:
            return Answer(True, "the user confirmed")
        if (content or {}).get(SAVE) is False:
            return Answer(False, "the user declined")
        return Answer(False, "the answer did not say yes")
    return Answer(False, "the user declined" if action == "decline" else "the user cancelled")


def _answered_in_retry(ctx: Context, content: str) -> Answer:
    """The answer the host sent with the call again; Unanswered (the question) before."""
    answers = (ctx.input_responses or {}) if ctx.request_state == ASKED else {}
    answered = answers.get(SAVE)
    if answered is None:
        form = ElicitRequestFormParams(message=question(content), requested_schema=REQUESTED_SCHEMA)
        ask_user = ElicitRequest(params=form)
        raise Unanswered(InputRequiredResult(input_requests={SAVE: ask_user}, request_state=ASKED))
    if not isinstance(answered, ElicitResult):
        return Answer(False, "the host could not ask the user")
    return _judged(answered.action, answered.content)


async def ask(ctx: Context, content: str, timeout: float) -> Answer:
    """The user's answer through the host; no answer within `timeout` seconds is a no, and
    so is anything but an accepted form whose `save` is `true`. Unanswered when the
    question goes back in the tool's result (2026-07-28 on)."""
    if _in_result(ctx):
        return _answered_in_retry(ctx, content)
    session = ctx.request_context.session
    try:
        with anyio.fail_after(timeout):
            result = await session.elicit_form(
                question(content), REQUESTED_SCHEMA, related_request_id=ctx.request_id
            )
    except TimeoutError:
        return Answer(False, f"no answer within {timeout:g} seconds")
    except (MCPError, ValueError):  # the host refused, could not be reached, or answered junk
        return Answer(False, "the host could not ask the user")
    return _judged(result.action, result.content)


def not_saved(answer: Answer) -> str:
    """The tool result of an unconfirmed save: the catalog's words, then what happened."""
    return f"{AgentmemError(Reason.SAVE_NOT_CONFIRMED)} ({answer.outcome})"


@dataclass(frozen=True)
class Intent:
    save_intent: str
    source: str
    evidence: str


async def settle(
    ctx: Context, gateway: AsyncClient, content: str, given: Intent, timeout: float
) -> Intent:
    """The save intent to send with an insert: `given` as the model wrote it, or, where the
    host can ask its user and should, the user's confirmation. ToolError when the user gave
    no yes (nothing is stored) or the gateway refused to say what it accepts; Unanswered
    when the question goes back to the host in the tool's result."""
    if not can_ask(ctx):
        return given
    try:
        caps = await gateway.get_capabilities()
    except ApiError as e:
        raise ToolError(e.explain()) from None
    policy = common_pb2.InsertPolicy.Name(caps.insert_policy)
    policy = policy.removeprefix("INSERT_POLICY_").lower()
    if plan(given.save_intent, policy, caps.caller.trusted_save_intents) is Step.FORWARD:
        return given
    answer = await ask(ctx, content, timeout)
    if not answer.confirmed:
        raise ToolError(not_saved(answer))
    return Intent(SaveIntentName.USER_CONFIRMED.value, host_name(ctx), EVIDENCE)

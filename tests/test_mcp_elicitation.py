"""Asking the user through the MCP host before a memory is saved: the official MCP client
library plays the host (in process, and over stdio with `agentmem mcp`), its elicitation
callback plays the user."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from agentmem.client import AsyncClient
from agentmem.mcp import confirm as mcp_confirm
from agentmem.mcp import server as mcp_server
from agentmem.v1 import sources_pb2
from tests.harness import ADMIN_A, KEYS, ROOT, Key, free_port, wait_until
from tests.memory_helpers import get_source, search_ids
from tests.test_mcp import payload, stored, text

SQUIER = "I have a yellow Squier Tele with a black pickguard and Nocaster pickups"
HOST = types.Implementation(name="test-host", version="1.0")
# The MCP server's own credential trusted for what it can vouch for: a user's answer to the
# host's prompt, and auto-save.
SERVER_KEY = Key(
    "tok-mcp-server",
    "mcp-server",
    "tenant-a",
    ("memory.read", "memory.write"),
    kind="agent",
)
Callback = Callable[[Any, types.ElicitRequestParams], Awaitable[types.ElicitResult]]


@pytest.fixture
def mcp_stack(make_stack):
    def make(policy: str, trusted: tuple[str, ...] = ("user_confirmed", "client_auto_save")):
        server = {**SERVER_KEY.config(), "trusted_save_intents": list(trusted)}
        return make_stack(
            memory__insert_policy=policy, auth__api_keys=[*(k.config() for k in KEYS), server]
        )

    return make


class User:
    """Answers the host's prompts; records what it was asked and the form it was shown.
    `content` is the accepted form as sent (default `{"save": save}`)."""

    def __init__(
        self, action: str = "accept", save: bool = True, content: dict | None = None
    ) -> None:
        self.action, self.save, self.content = action, save, content
        self.asked: list[str] = []
        self.forms: list[dict[str, Any]] = []
        self.never = anyio.Event()  # set by nobody: a user who never answers

    async def answer(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.message)
        self.forms.append(params.model_dump(by_alias=True)["requestedSchema"])
        if self.action == "wait":
            await self.never.wait()
        content = None
        if self.action == "accept":
            content = {"save": self.save} if self.content is None else self.content
        return types.ElicitResult(action=self.action, content=content)


def call(
    stack,
    args: dict,
    user: User | None,
    *,
    timeout: float = 30.0,
    tool: str = "memory_insert",
) -> types.CallToolResult:
    """`tool` (memory_insert) from an in-process host (with elicitation when `user` is
    given)."""

    async def main() -> types.CallToolResult:
        gateway = AsyncClient(stack.address, SERVER_KEY.token)
        server = mcp_server.build(gateway, confirm_timeout=timeout)
        try:
            async with Client(
                server,
                mode="legacy",
                client_info=HOST,
                elicitation_callback=user.answer if user else None,
            ) as host:
                return await host.call_tool(tool, args)
        finally:
            await gateway.close()

    return asyncio.run(asyncio.wait_for(main(), 60))


@pytest.mark.parametrize("policy", ["permissive", "require_save_intent", "review_pending"])
def test_an_accepted_prompt_stores_an_active_user_confirmed_memory(mcp_stack, policy):
    stack = mcp_stack(policy)
    user = User("accept")
    # what the model claims is not forwarded: the user is asked instead
    saved = payload(call(stack, {"content": SQUIER, "save_intent": "explicit_user_request"}, user))
    assert saved["status"] == "active"
    assert user.asked == [f"Save this memory?\n\n{SQUIER}"]
    source = get_source(stack.client(), saved["source_id"])
    assert (source.save_intent, source.save_intent_source) == ("user_confirmed", "test-host")
    assert search_ids(stack.client(), "Squier") == [saved["source_id"]]
    evidence = stack.sql(
        "SELECT save_intent_evidence FROM sources WHERE source_id = :s", s=saved["source_id"]
    )
    assert evidence == [("confirmed through the host's prompt",)]


def test_no_marker_under_review_pending_asks_the_user(mcp_stack):
    stack = mcp_stack("review_pending")
    user = User("accept")
    saved = payload(call(stack, {"content": SQUIER}, user))
    assert saved["status"] == "active" and len(user.asked) == 1


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (User("decline"), "the user declined"),
        (User("cancel"), "the user cancelled"),
        (User("accept", save=False), "the user declined"),
    ],
)
def test_a_declined_or_cancelled_prompt_stores_nothing(mcp_stack, answer, said):
    stack = mcp_stack("review_pending")
    result = call(stack, {"content": SQUIER, "save_intent": "user_confirmed"}, answer)
    assert result.is_error
    assert text(result).startswith("SAVE_NOT_CONFIRMED: ") and said in text(result)
    assert "Squier" not in text(result)
    assert stored(stack) == 0


# What the MCP specification allows in a form's `requestedSchema`, and in each of its
# primitive properties (the boolean kind: the one the form uses).
FORM_KEYS = {"$schema", "type", "properties", "required"}
BOOLEAN_KEYS = {"type", "title", "description", "default"}


def spec_form(form: dict[str, Any]) -> None:
    """`form` is a flat object of primitive properties with only the spec's keys, worded for
    a person (no class docstring, no default of yes)."""
    assert set(form) <= FORM_KEYS and form["type"] == "object", form
    assert set(form.get("required", [])) <= set(form["properties"])
    for prop in form["properties"].values():
        assert prop["type"] == "boolean" and set(prop) <= BOOLEAN_KEYS, prop
        assert prop.get("default", False) is False
    assert form["properties"]["save"]["title"] == "Save this memory"
    assert "field" not in json.dumps(form)


def test_the_form_has_only_the_keys_the_mcp_specification_allows(mcp_stack):
    stack = mcp_stack("require_save_intent")
    user = User("accept")
    payload(call(stack, {"content": SQUIER}, user))
    (form,) = user.forms
    spec_form(form)
    assert user.asked == [f"Save this memory?\n\n{SQUIER}"]


@pytest.mark.parametrize("content", [{}, {"save": "yes"}, {"save": 1}, {"other": True}])
def test_accepting_without_an_explicit_yes_stores_nothing(mcp_stack, content):
    stack = mcp_stack("require_save_intent")
    result = call(stack, {"content": SQUIER}, User("accept", content=content))
    assert result.is_error and text(result).startswith("SAVE_NOT_CONFIRMED"), text(result)
    assert stored(stack) == 0


def test_no_answer_before_the_timeout_stores_nothing(mcp_stack):
    stack = mcp_stack("require_save_intent")
    user = User("wait")
    result = call(stack, {"content": SQUIER}, user, timeout=0.5)
    assert result.is_error and "no answer within 0.5 seconds" in text(result)
    assert len(user.asked) == 1
    assert stored(stack) == 0


def test_a_trusted_auto_save_is_not_asked_about(mcp_stack):
    stack = mcp_stack("require_save_intent")
    user = User("decline")
    saved = payload(call(stack, {"content": SQUIER, "save_intent": "client_auto_save"}, user))
    assert saved["status"] == "active" and user.asked == []


def test_permissive_without_a_marker_is_not_asked_about(mcp_stack):
    stack = mcp_stack("permissive")
    user = User("decline")
    saved = payload(call(stack, {"content": SQUIER}, user))
    assert saved["status"] == "active" and user.asked == []


def test_a_server_key_not_trusted_for_confirmations_holds_the_answer_for_review(mcp_stack):
    stack = mcp_stack("permissive", trusted=("client_auto_save",))
    user = User("accept")
    saved = payload(call(stack, {"content": SQUIER, "save_intent": "user_confirmed"}, user))
    assert (saved["status"], saved["save_intent_held"]) == ("pending_review", True)
    assert len(user.asked) == 1


@pytest.mark.parametrize(
    ("policy", "args", "status"),
    [
        ("permissive", {"save_intent": "explicit_user_request"}, "active"),
        ("review_pending", {}, "pending_review"),
    ],
)
def test_a_client_without_elicitation_keeps_the_plain_behaviour(mcp_stack, policy, args, status):
    stack = mcp_stack(policy, trusted=("explicit_user_request", "user_confirmed"))
    saved = payload(call(stack, {"content": SQUIER, **args}, None))
    assert saved["status"] == status
    source = get_source(stack.client(), saved["source_id"])
    assert source.save_intent == args.get("save_intent", "")


def test_required_marker_without_elicitation_is_still_refused(mcp_stack):
    stack = mcp_stack("require_save_intent")
    result = call(stack, {"content": SQUIER}, None)
    assert result.is_error and text(result).startswith("SAVE_INTENT_REQUIRED")
    assert stored(stack) == 0


# From MCP 2026-07-28 the question is the tool's result (`input_required`), and the host
# calls the tool again with the user's answer (Claude Code negotiates this revision).
MODERN = "2026-07-28"


def modern(stack, act: Callable[[Client], Awaitable[Any]], user: User | None = None) -> Any:
    """`act` with an in-process host that negotiated MCP 2026-07-28 (and asks `user`)."""

    async def main() -> Any:
        gateway = AsyncClient(stack.address, SERVER_KEY.token)
        server = mcp_server.build(gateway)
        callback = {"elicitation_callback": user.answer} if user else {}
        try:
            async with Client(server, mode=MODERN, client_info=HOST, **callback) as host:
                return await act(host)
        finally:
            await gateway.close()

    return asyncio.run(asyncio.wait_for(main(), 60))


@pytest.mark.parametrize(("answer", "status"), [("accept", "active"), ("decline", None)])
def test_the_question_in_the_tools_result_is_asked_once_and_answered(mcp_stack, answer, status):
    stack = mcp_stack("require_save_intent")
    user = User(answer)

    async def act(host: Client) -> Any:
        return await host.call_tool("memory_insert", {"content": SQUIER})

    result = modern(stack, act, user)
    assert user.asked == [f"Save this memory?\n\n{SQUIER}"]
    spec_form(user.forms[0])
    if status:
        saved = payload(result)
        assert saved["status"] == status
        source = get_source(stack.client(), saved["source_id"])
        assert (source.save_intent, source.save_intent_source) == ("user_confirmed", "test-host")
    else:
        assert result.is_error and "the user declined" in text(result)
        assert stored(stack) == 0


def test_an_answer_the_server_never_asked_for_is_not_taken(mcp_stack):
    """A yes sent with the first call (no request state of the server's) is not the user's
    answer to this text: the server asks; a request state not its own is refused."""
    stack = mcp_stack("require_save_intent")
    yes = {"save": types.ElicitResult(action="accept", content={"save": True})}

    async def act(host: Client) -> Any:
        first = await host.session.call_tool(
            "memory_insert", {"content": SQUIER}, input_responses=yes, allow_input_required=True
        )
        with pytest.raises(Exception, match="requestState"):
            await host.session.call_tool(
                "memory_insert",
                {"content": SQUIER},
                input_responses=yes,
                request_state=mcp_confirm.ASKED,
                allow_input_required=True,
            )
        return first

    first = modern(stack, act, User("accept"))
    assert isinstance(first, types.InputRequiredResult)
    assert list(first.input_requests or {}) == ["save"]
    assert stored(stack) == 0


def test_the_prompt_over_stdio_with_agentmem_mcp(mcp_stack):
    stack = mcp_stack("review_pending")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentmem.cli.main", "mcp", "--confirm-timeout", "30"],
        cwd=str(ROOT),
        env={**os.environ, "AGENTMEM_ADDR": stack.address, "AGENTMEM_TOKEN": SERVER_KEY.token},
    )
    yes, no = User("accept"), User("decline")

    async def main() -> tuple[types.CallToolResult, types.CallToolResult]:
        results = []
        for user in (yes, no):
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write, elicitation_callback=user.answer, client_info=HOST) as s,
            ):
                await s.initialize()
                results.append(await s.call_tool("memory_insert", {"content": SQUIER}))
        return results[0], results[1]

    accepted, declined = asyncio.run(asyncio.wait_for(main(), 120))
    saved = payload(accepted)
    assert saved["status"] == "active" and len(yes.asked) == 1
    assert declined.is_error and text(declined).startswith("SAVE_NOT_CONFIRMED")
    assert stored(stack) == 1
    assert get_source(stack.client(ADMIN_A), saved["source_id"]).status == (
        sources_pb2.STATUS_ACTIVE
    )


def test_the_plan_for_a_client_that_can_ask():
    trusted = {"user_confirmed", "client_auto_save"}
    for policy in ("permissive", "require_save_intent", "review_pending"):
        for claimed in ("explicit_user_request", "user_confirmed"):
            assert mcp_confirm.plan(claimed, policy, trusted) is mcp_confirm.Step.ASK
        assert mcp_confirm.plan("client_auto_save", policy, trusted) is mcp_confirm.Step.FORWARD
        assert mcp_confirm.plan("client_auto_save", policy, set()) is mcp_confirm.Step.ASK
    assert mcp_confirm.plan("", "permissive", trusted) is mcp_confirm.Step.FORWARD
    assert mcp_confirm.plan("", "require_save_intent", trusted) is mcp_confirm.Step.ASK
    assert mcp_confirm.plan("", "review_pending", trusted) is mcp_confirm.Step.ASK


def test_the_prompt_over_streamable_http_is_the_same_form(mcp_stack):
    stack = mcp_stack("require_save_intent")
    port = free_port()
    env = {**os.environ, "AGENTMEM_ADDR": stack.address}
    env.pop("AGENTMEM_TOKEN", None)
    command = [sys.executable, "-m", "agentmem.cli.main", "mcp", "--transport", "http"]
    proc = subprocess.Popen(
        [*command, "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )

    def accepting() -> bool:
        assert proc.poll() is None
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return False
        return True

    users = [User("accept"), User("accept", content={}), User("decline")]

    async def main() -> list[types.CallToolResult]:
        results = []
        headers = {"Authorization": f"Bearer {SERVER_KEY.token}"}
        for user in users:
            async with (
                httpx2.AsyncClient(headers=headers, timeout=60) as http,
                streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http) as io,
                ClientSession(io[0], io[1], elicitation_callback=user.answer) as session,
            ):
                await session.initialize()
                results.append(await session.call_tool("memory_insert", {"content": SQUIER}))
        return results

    try:
        wait_until(accepting, 30, "the MCP server accepting connections")
        accepted, empty, declined = asyncio.run(asyncio.wait_for(main(), 120))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert payload(accepted)["status"] == "active"
    assert empty.is_error and declined.is_error
    assert stored(stack) == 1
    for user in users:
        (form,) = user.forms
        spec_form(form)


@pytest.mark.parametrize(
    ("answer", "status"), [(User("accept"), "active"), (User("decline"), None)]
)
def test_an_append_claiming_the_users_word_asks_the_user_as_an_insert_does(
    mcp_stack, answer, status
):
    """A model-written user_confirmed on memory_append is not forwarded: the user is asked,
    as memory_insert asks, and a declined prompt appends nothing."""
    stack = mcp_stack("review_pending")
    alice = stack.client()
    session = alice.insert_memory(
        messages=[{"role": "user", "content": "Let us plan the garden."}],
        save_intent="explicit_user_request",
    )
    turn = "I keep the spare key under the blue flowerpot"
    args = {
        "source_id": session.source_id,
        "expected_revision": session.revision,
        "messages": [{"role": "user", "content": turn}],
        "save_intent": "user_confirmed",
    }
    result = call(stack, args, answer, tool="memory_append")
    assert answer.asked == [f"Save this memory?\n\n{turn}"]
    source = get_source(alice, session.source_id, include_content=True)
    if status is None:
        assert result.is_error and text(result).startswith("SAVE_NOT_CONFIRMED: ")
        assert source.revision == session.revision and len(source.messages) == 1
    else:
        assert payload(result)["status"] == status and len(source.messages) == 2

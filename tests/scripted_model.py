"""A scripted model for real hosts: a local HTTP endpoint that speaks a model provider's API
and answers with the tool calls a model would make, step by step from a script.

It speaks the three APIs the hosts call, each streamed (server-sent events) or not, in the
providers' published formats: OpenAI Chat Completions (`POST /v1/chat/completions`:
opencode through an OpenAI-compatible provider), OpenAI Responses (`POST /v1/responses`:
Codex) and Anthropic Messages (`POST /v1/messages`: Claude Code). Every request is recorded,
so a test asserts on what the host sent the model: the tool results it saw.

A script maps a phrase of the user's message to the steps of that turn: `Call` a tool (by
the end of its name, since hosts prefix MCP tools with the server's name), then `Say` the
final words. The step to take is the number of tool results the conversation holds after
the user's message, so a host's retries and side requests (a title, a quota check: requests
without the phrase or without the tool) never move the script on; they get plain words.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Arguments = dict[str, Any] | Callable[[list[str]], dict[str, Any]]


@dataclass(frozen=True)
class Call:
    """Call the tool whose name ends with `tool`; `arguments` may be made from the tool
    results the turn has seen so far (their texts, oldest first)."""

    tool: str
    arguments: Arguments = field(default_factory=dict)


@dataclass(frozen=True)
class Say:
    text: str


Step = Call | Say
SIDE_ANSWER = "OK."  # to a request that is not a scripted turn (titles, checks)
# Tools a model calls when a host offers them and the tool it wants is not listed yet:
# Claude Code's, while MCP servers still connect. They do not move the script on.
HELPERS = ("WaitForMcpServers",)


@dataclass(frozen=True)
class Reply:
    """What the model answers to one request: words, or one tool call."""

    text: str = ""
    tool: str = ""  # the tool's full name, as the host listed it
    arguments: str = ""  # JSON
    call_id: str = ""


@dataclass(frozen=True)
class Result:
    tool: str  # the name of the tool called, as the host listed it
    text: str


@dataclass
class Conversation:
    """What one request says, in terms common to the three APIs."""

    user_texts: list[str]  # every user message's text, in order
    results_after: list[list[Result]]  # per user message: the tool results that follow it
    tools: list[str]  # names of the tools offered


def _text(content: Any) -> str:
    """The text of a message's content: a string, or a list of parts with text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") in TEXT_PARTS:
                parts.append(str(part.get("text", "")))
        return "\n".join(parts)
    return ""


TEXT_PARTS = ("text", "input_text", "output_text")


def _result_text(content: Any) -> str:
    """A tool result's text: a string, or parts."""
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return content if isinstance(content, str) else json.dumps(content)


class _Builder:
    def __init__(self) -> None:
        self.user_texts: list[str] = []
        self.results_after: list[list[Result]] = []
        self.called: dict[str, str] = {}  # call id -> tool name

    def user(self, text: str) -> None:
        self.user_texts.append(text)
        self.results_after.append([])

    def call(self, call_id: Any, name: Any) -> None:
        self.called[str(call_id)] = str(name)

    def result(self, call_id: Any, text: str) -> None:
        if self.results_after:
            self.results_after[-1].append(Result(self.called.get(str(call_id), ""), text))

    def done(self, tools: list[str]) -> Conversation:
        return Conversation(self.user_texts, self.results_after, tools)


def read_chat(body: dict[str, Any]) -> Conversation:
    b = _Builder()
    for m in body.get("messages", []):
        if m.get("role") == "user":
            b.user(_text(m.get("content")))
        for call in m.get("tool_calls") or []:
            b.call(call.get("id"), call.get("function", {}).get("name"))
        if m.get("role") == "tool":
            b.result(m.get("tool_call_id"), _result_text(m.get("content")))
    tools = [t.get("function", {}).get("name", "") for t in body.get("tools") or []]
    return b.done(tools)


def read_responses(body: dict[str, Any]) -> Conversation:
    b = _Builder()
    items = body.get("input")
    for item in [{"role": "user", "content": items}] if isinstance(items, str) else items or []:
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") == "user":
            b.user(_text(item.get("content")))
        elif kind in ("function_call", "custom_tool_call"):
            space, name = item.get("namespace"), item.get("name")
            b.call(item.get("call_id"), f"{space}.{name}" if space else name)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            b.result(item.get("call_id"), _result_text(item.get("output")))
    tools = []
    for t in body.get("tools") or []:  # a namespace's tools (Codex's MCP servers) as SPACE.NAME
        tools.append(t.get("name", ""))
        tools += [f"{t.get('name', '')}.{n.get('name', '')}" for n in t.get("tools") or []]
    return b.done(tools)


def read_messages(body: dict[str, Any]) -> Conversation:
    b = _Builder()
    for m in body.get("messages", []):
        content = m.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if m.get("role") == "assistant":
            for block in blocks:
                if block.get("type") == "tool_use":
                    b.call(block.get("id"), block.get("name"))
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                b.result(block.get("tool_use_id"), _result_text(block.get("content")))
        said = _text([x for x in blocks if x.get("type") == "text"])
        if said and not any(x.get("type") == "tool_result" for x in blocks):
            b.user(said)
    tools = [t.get("name", "") for t in body.get("tools") or []]
    return b.done(tools)


class ScriptedModel:
    """The endpoint: `script` maps a phrase of the user's message to that turn's steps."""

    def __init__(self, script: Mapping[str, Sequence[Step]]) -> None:
        self.script = dict(script)
        self.requests: list[tuple[str, dict[str, Any]]] = []  # (path, body)
        self.calls: list[tuple[str, dict[str, Any]]] = []  # (tool, arguments) answered
        self.errors: list[str] = []  # what went wrong answering (the test fails on any)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    listed = {"object": "list", "data": [{"id": "scripted", "object": "model"}]}
                    self._send(200, "application/json", json.dumps(listed))
                else:
                    self._send(404, "application/json", '{"error": "not found"}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._send(400, "application/json", '{"error": "not JSON"}')
                    return
                path = self.path.split("?", 1)[0].rstrip("/")
                with model._lock:
                    model.requests.append((path, body))
                try:
                    answered = model.answer(path, body)
                except Exception as e:  # a script that went wrong: said to the test, not retried
                    with model._lock:
                        model.errors.append(f"{path}: {e!r}")
                    self._send(400, "application/json", json.dumps({"error": repr(e)}))
                    return
                if answered is None:
                    self._send(404, "application/json", '{"error": "not found"}')
                else:
                    self._send(200, *answered)

            def _send(self, status: int, content_type: str, text: str) -> None:
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ScriptedModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- what to say -------------------------------------------------------------------

    def decide(self, conversation: Conversation) -> Reply:
        for phrase, steps in self.script.items():
            where = [i for i, t in enumerate(conversation.user_texts) if phrase in t]
            if not where:
                continue
            after = [r for rs in conversation.results_after[where[-1] :] for r in rs]
            results = [r.text for r in after if r.tool not in HELPERS]
            if len(results) >= len(steps):
                return Reply(text=SIDE_ANSWER)
            step = steps[len(results)]
            if isinstance(step, Say):
                return Reply(text=step.text)
            offered = [t for t in conversation.tools if t.endswith(step.tool)]
            if offered:
                made = step.arguments(results) if callable(step.arguments) else step.arguments
                return self._call(step.tool, offered[0], made)
            helpers = [t for t in conversation.tools if t in HELPERS]
            if helpers:  # the tool is not there yet: wait for it, as a model would
                return self._call(helpers[0], helpers[0], {})
            return Reply(text=SIDE_ANSWER)  # a side request with the user's words, no tools
        return Reply(text=SIDE_ANSWER)

    def _call(self, step: str, tool: str, arguments: dict[str, Any]) -> Reply:
        with self._lock:
            self.calls.append((step, arguments))
        call_id = f"call_{next(self._ids)}"
        return Reply(tool=tool, arguments=json.dumps(arguments), call_id=call_id)

    def answer(self, path: str, body: dict[str, Any]) -> tuple[str, str] | None:
        """(content type, body) for a request, or None for a path it does not serve."""
        stream = bool(body.get("stream"))
        if path.endswith("/chat/completions"):
            reply = self.decide(read_chat(body))
            return chat_completion(reply, body, stream)
        if path.endswith("/responses"):
            reply = self.decide(read_responses(body))
            return responses(reply, body, stream)
        if path.endswith("/messages/count_tokens"):
            return "application/json", json.dumps({"input_tokens": 100})
        if path.endswith("/messages"):
            reply = self.decide(read_messages(body))
            return messages(reply, body, stream)
        return None

    # --- what the host sent -------------------------------------------------------------

    def tool_results(self) -> list[str]:
        """Every tool result the host sent, each once, in the order first sent."""
        seen: dict[str, None] = {}
        for path, body in self.requests:
            reader = (
                read_chat
                if path.endswith("/chat/completions")
                else read_responses
                if path.endswith("/responses")
                else read_messages
            )
            for after in reader(body).results_after:
                for r in after:
                    seen.setdefault(r.text)
        return list(seen)


# --- the wire formats --------------------------------------------------------------------


def _sse(events: list[tuple[str | None, dict[str, Any] | str]]) -> str:
    out = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(out)


def chat_completion(reply: Reply, body: dict[str, Any], stream: bool) -> tuple[str, str]:
    """OpenAI Chat Completions: a `chat.completion`, or its `chat.completion.chunk`s."""
    base = {"id": f"chatcmpl-{time.monotonic_ns()}", "created": int(time.time())}
    base["model"] = body.get("model", "scripted")
    usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    call = {
        "id": reply.call_id,
        "type": "function",
        "function": {"name": reply.tool, "arguments": reply.arguments},
    }
    finish = "tool_calls" if reply.tool else "stop"
    if not stream:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tool:
            message["tool_calls"] = [call]
        choice = {"index": 0, "message": message, "finish_reason": finish}
        done = {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
        return "application/json", json.dumps(done)
    chunk = {**base, "object": "chat.completion.chunk"}
    delta: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool:
        delta["tool_calls"] = [{"index": 0, **call}]
    events: list[tuple[str | None, dict[str, Any] | str]] = [
        (None, {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
        (None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
    ]
    if (body.get("stream_options") or {}).get("include_usage"):
        events.append((None, {**chunk, "choices": [], "usage": usage}))
    events.append((None, "[DONE]"))
    return "text/event-stream", _sse(events)


def responses(reply: Reply, body: dict[str, Any], stream: bool) -> tuple[str, str]:
    """OpenAI Responses: a `response`, or its semantic events (`response.created` …
    `response.completed`)."""
    response_id = f"resp_{time.monotonic_ns()}"
    if reply.tool:
        space, _, name = reply.tool.rpartition(".")
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{reply.call_id}",
            "call_id": reply.call_id,
            **({"namespace": space} if space else {}),
            "name": name,
            "arguments": reply.arguments,
            "status": "completed",
        }
    else:
        part = {"type": "output_text", "text": reply.text, "annotations": []}
        item = {
            "type": "message",
            "id": f"msg_{response_id}",
            "role": "assistant",
            "status": "completed",
            "content": [part],
        }
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 110,
    }
    shell = {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "model": body.get("model", "scripted"),
        "status": "in_progress",
        "output": [],
    }
    done = {**shell, "status": "completed", "output": [item], "usage": usage}
    if not stream:
        return "application/json", json.dumps(done)
    seq = itertools.count()
    events: list[tuple[str | None, dict[str, Any] | str]] = []

    def event(name: str, **data: Any) -> None:
        events.append((name, {"type": name, "sequence_number": next(seq), **data}))

    event("response.created", response=shell)
    event("response.in_progress", response=shell)
    if reply.tool:
        event("response.output_item.added", output_index=0, item={**item, "arguments": ""})
        event(
            "response.function_call_arguments.delta",
            output_index=0,
            item_id=item["id"],
            delta=reply.arguments,
        )
        event(
            "response.function_call_arguments.done",
            output_index=0,
            item_id=item["id"],
            arguments=reply.arguments,
        )
    else:
        event("response.output_item.added", output_index=0, item={**item, "content": []})
        empty = {"type": "output_text", "text": "", "annotations": []}
        where = {"output_index": 0, "item_id": item["id"], "content_index": 0}
        event("response.content_part.added", **where, part=empty)
        event("response.output_text.delta", **where, delta=reply.text)
        event("response.output_text.done", **where, text=reply.text)
        event("response.content_part.done", **where, part=item["content"][0])
    event("response.output_item.done", output_index=0, item=item)
    event("response.completed", response=done)
    return "text/event-stream", _sse(events)


def messages(reply: Reply, body: dict[str, Any], stream: bool) -> tuple[str, str]:
    """Anthropic Messages: a `message`, or its events (`message_start` … `message_stop`)."""
    if reply.tool:
        block: dict[str, Any] = {
            "type": "tool_use",
            "id": f"toolu_{reply.call_id}",
            "name": reply.tool,
            "input": json.loads(reply.arguments),
        }
    else:
        block = {"type": "text", "text": reply.text}
    stop = "tool_use" if reply.tool else "end_turn"
    message = {
        "id": f"msg_{time.monotonic_ns()}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "scripted"),
        "content": [block],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 10},
    }
    if not stream:
        return "application/json", json.dumps(message)
    start = {**message, "content": [], "stop_reason": None}
    start["usage"] = {"input_tokens": 100, "output_tokens": 1}
    if reply.tool:
        opened = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": reply.arguments}
    else:
        opened = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": reply.text}
    events: list[tuple[str | None, dict[str, Any] | str]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": opened}),
        ("ping", {"type": "ping"}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 10}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return "text/event-stream", _sse(events)


SOURCE_ID = re.compile(r"src_[0-9a-f]+")
REVISION = re.compile(r'"revision"\s*:\s*"?(\d+)')


def inserted(results: list[str]) -> dict[str, Any]:
    """Arguments naming the source a turn's last tool result stored, at its revision (what
    a model reads off `memory_insert`'s result to approve it)."""
    last = results[-1]
    found = SOURCE_ID.search(last)
    revision = REVISION.search(last)
    assert found and revision, "the insert's result names no source"
    return {"source_id": found.group(0), "expected_revision": int(revision.group(1))}

"""Every field of every public request is reachable from the `agentmem` command, or listed in
`NOT_IN_CLI` with the reason. Nothing is read from the help text: each subcommand is run with
every option it has given a value (then with each option alone, for options that exclude
each other), against a client whose stub records the requests it is handed, and a field
counts as reached when some command line sets it. A field holding a message (a request's
`metadata`, a listing's `filter`) counts by its own fields, as in `test_client_parity`; other
message fields (a pointer, a time, messages) count when set at all. A new request field
fails this test until a command sets it or the table says why not."""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from agentmem.cli import client as cli_client
from agentmem.cli.main import parser
from agentmem.client import Client
from agentmem.contract.rpcs import SERVICE

# Fields reached through a message field's own fields (as the client's keywords flatten them).
FLATTENED = {"metadata", "filter"}
# Commands that make no RPC of their own (or only through a file's lines): not run here.
# (`mcp`, `app-server` and `console` join the command through entry points: they serve, they
# call through the client like any host, and are not among the commands read here.)
NOT_RUN = {
    ("import",): "inserts what a file's lines hold (InsertMemory is reached by `insert`)",
    ("export",): "reads every memory (ListSources, GetSource are reached by `sources`)",
    ("doctor",): "reads capabilities and status (reached by `capabilities`)",
    ("hash-token",): "computes a hash, no call",
}
# Request fields no command sets, each with the reason.
NOT_IN_CLI = {
    ("AppendMessages", "metadata.labels"): "labels are given at insert, not appended",
    ("AdmitForeignSource", "body"): "a body beyond the thin pointer is refused",
}
# Options whose value names a file, and what the file holds.
FILES = {
    "file": "some text\n",
    "pem_file": "some text\n",
    "messages": '[{"role": "user", '
    '"content": "hi", "name": "Ann", "sent_at": "2024-01-01T00:00:00Z"}]',
}


def _leaves(p: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> Iterator[Any]:
    subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield words, p
    for action in subs:
        for name, child in action.choices.items():
            yield from _leaves(child, (*words, name))


COMMON = {"help", "addr", "json", "receipt", "experimental"}
CANDIDATES = ("1", "2024-01-01", "key=value")


def _value(action: argparse.Action, files: Path) -> str:
    if action.choices:
        return str(next(iter(action.choices)))
    if action.dest in FILES:
        return str(files / action.dest)
    if action.type is None:
        return f"v-{action.dest}"
    for candidate in CANDIDATES:
        with contextlib.suppress(Exception):
            action.type(candidate)  # type: ignore[misc]
            return candidate
    raise AssertionError(f"no value fits {action.dest}")


def _argv(words: tuple[str, ...], actions: list[argparse.Action], files: Path) -> list[str]:
    """The command line giving each of `actions` a value; an optional positional (a text)
    is left out when a file gives what it would."""
    from_file = any(a.dest in FILES for a in actions if a.option_strings)
    positional: list[str] = []
    options: list[str] = []
    for a in actions:
        if not a.option_strings:
            if a.nargs != "?" or not from_file:
                positional.append(_value(a, files))
        elif a.nargs == 0:
            options.append(a.option_strings[-1])
        else:
            options += [a.option_strings[-1], _value(a, files)]
    return [*words, *options, *positional]


class _Recorder:
    """The generated stub's place: each call recorded, answered with an empty response."""

    def __init__(self, seen: list[tuple[str, Message]]) -> None:
        self.seen = seen

    def __getattr__(self, rpc: str) -> Any:
        reply = message_factory.GetMessageClass(SERVICE.methods_by_name[rpc].output_type)

        def call(request: Message, metadata: Any = None, timeout: Any = None) -> Any:
            self.seen.append((rpc, request))
            if rpc == "WatchEvents":
                return _Stream()
            return reply()

        return call


class _Stream:
    def __iter__(self) -> Iterator[Any]:
        raise KeyboardInterrupt  # the command stops as at Ctrl-C

    def cancel(self) -> None:
        pass


def _reached(request: Message, prefix: str = "") -> set[str]:
    out = set()
    for field, value in request.ListFields():
        name = prefix + field.name
        if field.type == FieldDescriptor.TYPE_MESSAGE and field.name in FLATTENED:
            out |= _reached(value, f"{name}.")
        elif field.type == FieldDescriptor.TYPE_MESSAGE and field.name == "messages":
            out.add(name)
            for m in value:
                out |= _reached(m, f"{name}.")
        else:
            out.add(name)
    return out


def _fields(message: Descriptor, prefix: str = "") -> list[str]:
    out = []
    for f in message.fields:
        if f.name in FLATTENED and f.type == FieldDescriptor.TYPE_MESSAGE:
            out += _fields(f.message_type, f"{prefix}{f.name}.")
        elif f.name == "messages" and f.type == FieldDescriptor.TYPE_MESSAGE:
            out += [f"{prefix}messages", *_fields(f.message_type, f"{prefix}messages.")]
        else:
            out.append(prefix + f.name)
    return out


@pytest.fixture(scope="module")
def reached(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    """What the command line reaches, by RPC."""
    files = tmp_path_factory.mktemp("cli-parity")
    for name, text in FILES.items():
        (files / name).write_text(text)
    seen: list[tuple[str, Message]] = []

    def client_for(args: argparse.Namespace) -> Client:
        client = Client("127.0.0.1:1", "token")
        client._stub = _Recorder(seen)
        return client

    mp = pytest.MonkeyPatch()
    mp.setattr(cli_client, "client_for", client_for)
    mp.setenv("AGENTMEM_TOKEN", "token")
    try:
        whole = parser(installed=False)  # the commands that call the gateway
        for words, p in _leaves(whole):
            if words in NOT_RUN:
                continue
            actions = [a for a in p._actions if a.dest not in COMMON]
            optional = [a for a in actions if a.option_strings and not a.required]
            required = [a for a in actions if a not in optional]
            for chosen in [optional, *([a] for a in optional)]:
                argv = _argv(words, required + chosen, files)
                with (
                    contextlib.suppress(SystemExit, Exception),
                    contextlib.redirect_stdout(io.StringIO()),
                    contextlib.redirect_stderr(io.StringIO()),
                ):
                    args = whole.parse_args(argv)
                    args.func(args)
    finally:
        mp.undo()
    out: dict[str, set[str]] = {}
    for rpc, request in seen:
        out.setdefault(rpc, set()).update(_reached(request))
    return out


@pytest.mark.parametrize("rpc", [m.name for m in SERVICE.methods])
def test_every_request_field_is_reachable_from_the_command_line(rpc, reached):
    request = SERVICE.methods_by_name[rpc].input_type
    got = reached.get(rpc, set())
    missing = [f for f in _fields(request) if f not in got and (rpc, f) not in NOT_IN_CLI]
    assert missing == [], f"{rpc}: no command sets {missing}; add an option or a reason"


def test_every_listed_exception_is_still_one(reached) -> None:
    """A field that a command now sets, or that no longer exists, leaves the table."""
    for rpc, field in NOT_IN_CLI:
        assert rpc in SERVICE.methods_by_name, rpc
        assert field in _fields(SERVICE.methods_by_name[rpc].input_type), (rpc, field)
        assert field not in reached.get(rpc, set()), f"{rpc}.{field} is reached now"


def test_the_command_line_is_run_for_real(reached) -> None:
    """The harness itself: commands ran and their requests carry what was given."""
    assert {"InsertMemory", "SearchMemories", "WatchEvents", "ExplainRetrieval"} <= set(reached)
    assert {"messages.sent_at", "metadata.labels", "source_kind"} <= reached["InsertMemory"]


def test_every_command_makes_its_client_through_one_seam() -> None:
    """Commands reach the gateway through `agentmem.cli.client.client_for`, looked up when
    they run: a module that imported the function by name would keep whatever it was when
    first imported (a replaced one, here, answering every call with an empty message)."""
    root = Path(cli_client.__file__).resolve().parents[1]
    bound = [
        str(path.relative_to(root))
        for path in sorted(root.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom)
        and node.module == "agentmem.cli.client"
        and any(alias.name == "client_for" for alias in node.names)
    ]
    assert bound == []

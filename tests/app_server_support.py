"""Hosts of `agentmem app-server` for tests: the bridge as a subprocess on stdio, or a
WebSocket connection to it, both read into one queue so a test can wait on a response or
a notification (a condition with a deadline, never a sleep)."""

from __future__ import annotations

import functools
import itertools
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema

from agentmem.client import person_credential
from tests.harness import ROOT

SCHEMAS = ROOT / "schemas" / "app-server" / "json"
CLIENT_INFO = {"name": "tests", "title": "agentmem tests", "version": "1.0"}


@functools.cache
def bundle() -> dict[str, Any]:
    return json.loads((SCHEMAS / "agentmem_app_server_protocol.schemas.json").read_text())


def conforms(value: Any, type_name: str) -> None:
    """`value` validates against the checked-in schema of `type_name`, and carries every
    property that schema names (results are always complete)."""
    definitions = bundle()["definitions"]
    schema = {**definitions[type_name], "definitions": definitions}
    jsonschema.Draft7Validator(schema).validate(value)
    if isinstance(value, dict) and "properties" in definitions[type_name]:
        assert set(value) == set(definitions[type_name]["properties"]), type_name


class Host:
    """One connection to the bridge, speaking its JSON-RPC."""

    def __init__(self) -> None:
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.notifications: list[dict[str, Any]] = []
        self._answers: dict[Any, dict[str, Any]] = {}
        self._ids = itertools.count(1)
        self.called: set[str] = set()  # methods answered with a result
        self.opened: dict[str, Any] = {}  # the initialize result

    # transport
    def write(self, text: str | bytes) -> None:
        raise NotImplementedError

    def send(self, message: dict[str, Any]) -> None:
        self.write(json.dumps(message))

    # reading
    def _take(self, timeout: float) -> dict[str, Any]:
        try:
            message = self.inbox.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("the bridge sent nothing in time") from None
        if message is None:
            raise EOFError("the bridge closed the connection")
        if "method" in message and "id" not in message:
            self.notifications.append(message)
        return message

    def answer(self, request_id: Any, timeout: float = 30) -> dict[str, Any]:
        while request_id not in self._answers:
            message = self._take(timeout)
            if "id" in message and "method" not in message:
                self._answers[message["id"]] = message
        return self._answers.pop(request_id)

    def next_message(self, timeout: float = 30) -> dict[str, Any]:
        """The next message that is not a notification (an answer to a raw write)."""
        while "method" in (message := self._take(timeout)):
            pass
        return message

    def notification(
        self, method: str, where: Callable[[dict[str, Any]], bool] = lambda p: True, timeout=30
    ) -> dict[str, Any]:
        """The first notification `method` whose params satisfy `where` (seen or to come);
        it and the ones before it are consumed."""
        while True:
            for i, n in enumerate(self.notifications):
                if n["method"] == method and where(n["params"]):
                    del self.notifications[: i + 1]
                    return n["params"]
            self._take(timeout)

    # requests
    def call(self, method: str, params: Any = None, request_id: Any = None) -> dict[str, Any]:
        """The whole response message to one request."""
        request_id = next(self._ids) if request_id is None else request_id
        message: dict[str, Any] = {"id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.answer(request_id)

    def result(self, method: str, params: Any = None) -> Any:
        response = self.call(method, params)
        assert "result" in response, (method, response)
        self.called.add(method)
        return response["result"]

    def error(self, method: str, params: Any = None) -> dict[str, Any]:
        response = self.call(method, params)
        assert "error" in response, (method, response)
        return response["error"]

    def initialize(self, experimental: bool = True, **extra: Any) -> dict[str, Any]:
        capabilities = {"experimentalApi": experimental, **extra.pop("capabilities", {})}
        result = self.result(
            "initialize", {"clientInfo": CLIENT_INFO, "capabilities": capabilities, **extra}
        )
        self.send({"method": "initialized"})
        self.opened = result
        return result


class StdioHost(Host):
    """`agentmem app-server` started as a subprocess, speaking JSON Lines on its stdio.
    Tests act as the person on purpose (the whole API), as the bridge allows when told
    (`allow_person`, AGENTMEM_ALLOW_PERSON_CREDENTIAL); a host acts with an agent's key."""

    def __init__(
        self, address: str, token: str | None, tmp: Path, *args: str, allow_person: bool = True
    ) -> None:
        super().__init__()
        self.stderr_path = tmp / f"app-server-{id(self)}.log"
        self._stderr = self.stderr_path.open("wb")
        env = {k: v for k, v in os.environ.items() if k != "AGENTMEM_TOKEN"}
        env.pop(person_credential.ENV, None)
        if allow_person:
            env[person_credential.ENV] = "1"
        if token is not None:
            env["AGENTMEM_TOKEN"] = token
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agentmem.cli.main", "app-server", "--addr", address, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            cwd=ROOT,
        )
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.inbox.put(json.loads(line))
        self.inbox.put(None)

    def write(self, text: str | bytes) -> None:
        data = text.encode() if isinstance(text, str) else text
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    @property
    def stderr(self) -> str:
        if not self._stderr.closed:
            self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")

    def close(self) -> int:
        """Closes its input: it answers what is in flight and exits."""
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        self._stderr.close()
        return code


class WebSocketHost(Host):
    """A WebSocket connection to `agentmem app-server --listen ws://...`."""

    def __init__(self, url: str, token: str | None, **kwargs: Any) -> None:
        from websockets.sync.client import connect

        super().__init__()
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.ws = connect(url, additional_headers=headers, **kwargs).__enter__()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            while True:
                self.inbox.put(json.loads(self.ws.recv()))
        except ConnectionClosed:
            pass
        self.inbox.put(None)

    def write(self, text: str | bytes) -> None:
        self.ws.send(text if isinstance(text, str) else text.decode())

    def close(self) -> None:
        self.ws.close()

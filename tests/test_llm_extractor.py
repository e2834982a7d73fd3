"""The optional language-model extractor, against a local OpenAI-compatible endpoint."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentmem_kernel import config
from tests.fact_time_helpers import history, say
from tests.memory_helpers import insert
from tests.test_facts import SQUIER, ask, facts, insert_six, span


class FakeModel(BaseHTTPRequestHandler):
    """Answers /v1/chat/completions like an OpenAI-compatible server (or fails on demand)."""

    fail = False
    requests: list[dict] = []
    facts: list[dict] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeModel.requests.append(body)
        if FakeModel.fail or self.path != "/v1/chat/completions":
            self.send_response(500)
            self.end_headers()
            return
        content = json.dumps({"facts": FakeModel.facts})
        payload = json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content},
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def model_endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    FakeModel.fail, FakeModel.requests = False, []
    FakeModel.facts = [
        {
            "subject": "user",
            "predicate": "owns",
            "object": "a Squier Telecaster",
            "statement": "The user owns a Squier Telecaster",
        }
    ]
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()


def model_stack(make_stack, endpoint):
    """A stack whose facts come from the fake model at `endpoint`."""
    return make_stack(
        facts__extractor="openai_compatible", facts__endpoint=endpoint, facts__model="local-model"
    )


def test_facts_come_from_the_model_when_configured(make_stack, model_endpoint):
    stack = model_stack(make_stack, model_endpoint)
    client = stack.client()
    insert(client, SQUIER, save_intent="explicit_user_request")
    assert [f.statement for f in facts(client, "Telecaster")] == [
        "The user owns a Squier Telecaster"
    ]
    sent = FakeModel.requests[0]
    assert sent["model"] == "local-model" and SQUIER in sent["messages"][-1]["content"]
    assert not facts(client, "Telecaster")[0].HasField("passage")  # a plain-text memory


def test_the_model_names_the_message_and_only_a_sent_one_gives_a_passage(
    make_stack, model_endpoint
):
    def fact(obj, message):
        return {
            "subject": "user",
            "predicate": "plays",
            "object": obj,
            "statement": f"The user plays {obj}",
            "message": message,
        }

    FakeModel.facts = [
        fact("the zqviola", 3),  # the user's message that says it
        fact("the zqharp", 9),  # no such message
        fact("the zqlute", 2),  # the assistant's, not sent to the model
        fact("the zqfife", "3"),  # not a number
    ]
    stack = model_stack(make_stack, model_endpoint)
    client = stack.client()
    s = insert_six(client)
    sent = FakeModel.requests[0]["messages"][-1]["content"]
    assert "[3] I play the zqviola" in sent and "[2]" not in sent  # the user's messages only
    by_object = {f.object: f for f in facts(client, "plays")}
    assert span(by_object["the zqviola"].passage) == (2, 3)
    for unset in ("the zqharp", "the zqlute", "the zqfife"):
        assert not by_object[unset].HasField("passage"), unset
    a = ask(client, "Does the user play the zqviola?")
    assert (s.source_id, (2, 3)) in {(p.source_id, span(p.passage)) for p in a.provenance}


def test_a_failing_model_falls_back_to_the_rules(make_stack, model_endpoint):
    FakeModel.fail = True
    stack = model_stack(make_stack, model_endpoint)
    client = stack.client()
    s = insert(client, SQUIER)
    assert [f.source_id for f in facts(client, "Squier")] == [s.source_id]


def test_the_model_extractor_needs_an_endpoint():
    with pytest.raises(config.ConfigError) as e:
        config.load(overrides={"facts.extractor": "openai_compatible"})
    assert "facts" in str(e.value)


def test_the_models_facts_take_the_rules_structure_and_time(make_stack, model_endpoint):
    stack = model_stack(make_stack, model_endpoint)
    client = stack.client()
    FakeModel.facts = [
        {"subject": "The user", "predicate": "moved to", "object": "Berlin", "quote": "I moved"},
        {"subject": "user", "predicate": "works for", "object": "Google", "ends": False},
        {"subject": "Bob", "predicate": "lives in", "object": "Paris"},  # not the user's
    ]
    text = "Last spring I moved to Berlin. I work for Google."
    say(client, text, 0)
    by_object = {f.object: f for f in facts(client)}
    assert {(f.subject, f.predicate) for f in by_object.values()} == {
        ("user", "lives in"),
        ("user", "works at"),
    }
    berlin = by_object["Berlin"]
    assert berlin.statement == "The user lives in Berlin"
    assert text[berlin.sentence_start : berlin.sentence_end] == "I moved"
    assert "read by a language model" in berlin.confidence_reason
    system = FakeModel.requests[-1]["messages"][0]["content"]
    assert '"ends"' in system and "lives in" in system and "works at" in system
    # An end of a value, read by the model, closes the interval like the rules' would.
    FakeModel.facts = [
        {"subject": "user", "predicate": "works at", "object": "Google", "ends": True},
        {"subject": "user", "predicate": "lives in", "object": "Lisbon"},
    ]
    say(client, "I left Google and moved to Lisbon.", 10)
    assert [(f.predicate, f.object) for f in facts(client)] == [("lives in", "Lisbon")]
    assert history(client, "user", "works at") == [("Google", 0, 10)]

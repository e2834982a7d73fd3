"""A fact extractor backed by a language model behind an OpenAI-compatible endpoint
(`facts.extractor: openai_compatible`; off by default). Uses the official `openai` client,
installed with the `llm` extra. Its answers are validated and cut to the same limits as the
rule-based extractor's; anything malformed yields no fact.

The user's messages of a conversation are sent numbered ("[3] …", the message's index in the
conversation) and the model names the message each fact was stated in; an index that is not
one of those sent leaves the fact without a passage."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence

from runtime_svc.domain.facts import MAX_OBJECT, Said, Triple

PROMPT = (
    "Extract the facts the user states about themselves in the text. Answer with a JSON "
    'object {"facts": [{"subject": "user" or "user\'s <thing>", "predicate": "<verb>", '
    '"object": "<what>", "statement": "<one sentence about the user>"}]}. '
    'Only facts the user asserts in the first person; none is {"facts": []}.'
)
NUMBERED = (
    ' The text is the user\'s messages, each after its number in brackets ("[3] ..."); give '
    'each fact also "message": the number of the message that states it.'
)


class OpenAICompatibleExtractor:
    def __init__(self, *, endpoint: str, model: str, api_key: str, timeout: float) -> None:
        from openai import OpenAI  # optional dependency: `pip install agentmem-service[llm]`

        self._client = OpenAI(
            base_url=endpoint, api_key=api_key or "unused", timeout=timeout, max_retries=1
        )
        self._model = model

    def extract(self, said: Sequence[Said]) -> list[Triple]:
        numbered = [s.message for s in said if s.message is not None]
        if numbered:
            prompt = PROMPT + NUMBERED
            text = "\n".join(f"[{s.message}] {s.text}" for s in said)
        else:
            prompt, text = PROMPT, "\n".join(s.text for s in said)
        response = self._client.chat.completions.create(
            model=self._model,
            temperature=0,
            response_format={"type": "json_object"},
            messages=[
                {"role": "system", "content": prompt},
                {"role": "user", "content": text},
            ],
        )
        return parse(response.choices[0].message.content or "", messages=numbered)


def parse(content: str, messages: Collection[int] = ()) -> list[Triple]:
    """The facts of the model's answer; a fact's `message` is kept only when it is one of
    `messages` (the indices sent)."""
    try:
        items = json.loads(content).get("facts", [])
    except (ValueError, AttributeError):
        return []
    out = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        fields = [
            str(item.get(k, "")).strip()[:MAX_OBJECT]
            for k in ("subject", "predicate", "object", "statement")
        ]
        if all(fields):
            index = item.get("message")
            valid = type(index) is int and index in messages
            out.append(Triple(*fields, message=index if valid else None))
    return out

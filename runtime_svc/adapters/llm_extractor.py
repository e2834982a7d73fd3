"""A fact extractor backed by a language model behind an OpenAI-compatible endpoint
(`facts.extractor: openai_compatible`; off by default). Uses the official `openai` client,
installed with the `llm` extra. Its answers are validated and cut to the same limits as the
rule-based extractor's; anything malformed yields no fact."""

from __future__ import annotations

import json
from collections.abc import Sequence

from runtime_svc.domain.facts import MAX_OBJECT, Triple

PROMPT = (
    "Extract the facts the user states about themselves in the text. Answer with a JSON "
    'object {"facts": [{"subject": "user" or "user\'s <thing>", "predicate": "<verb>", '
    '"object": "<what>", "statement": "<one sentence about the user>"}]}. '
    'Only facts the user asserts in the first person; none is {"facts": []}.'
)


class OpenAICompatibleExtractor:
    def __init__(self, *, endpoint: str, model: str, api_key: str, timeout: float) -> None:
        from openai import OpenAI  # optional dependency: `pip install agentmem[llm]`

        self._client = OpenAI(
            base_url=endpoint, api_key=api_key or "unused", timeout=timeout, max_retries=1
        )
        self._model = model

    def extract(self, texts: Sequence[str]) -> list[Triple]:
        response = self._client.chat.completions.create(
            model=self._model,
            temperature=0,
            response_format={"type": "json_object"},
            messages=[
                {"role": "system", "content": PROMPT},
                {"role": "user", "content": "\n".join(texts)},
            ],
        )
        return parse(response.choices[0].message.content or "")


def parse(content: str) -> list[Triple]:
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
            out.append(Triple(*fields))
    return out

"""A fact extractor backed by a language model behind an OpenAI-compatible endpoint
(`facts.extractor: openai_compatible`; off by default). Uses the official `openai` client,
installed with the `llm` extra. Its answers are validated and brought to the rule-based
extractor's structure: the same subjects ("user", "user's <person or thing>"), the same
predicates (`extraction_words`: "lives in" for moved to, "works at" for work for, …),
`ends` for a value that ended, the sentence each fact was read from, and the statement
agentmem writes itself. Anything malformed yields no fact.

The user's messages of a conversation are sent numbered ("[3] …", the message's index in the
conversation) and the model names the message each fact was stated in; an index that is not
one of those sent leaves the fact without a passage."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

from runtime_svc.domain import extraction_words as words
from runtime_svc.domain.facts import MAX_OBJECT, How, Said, Span, Triple, statement

PREDICATES = sorted(set(words.THIRD_PERSON.values()))
PROMPT = (
    "Extract the facts the user states about themselves and about the people and things "
    "they name, one fact per clause. Answer with a JSON object "
    '{"facts": [{"subject": "user" or "user\'s <person or thing>" (e.g. "user\'s sister", '
    '"user\'s phone"), "predicate": "<verb phrase in the third person>", "object": "<value>", '
    '"ends": true when the user says the value no longer holds ("I no longer live in '
    'Lisbon", "I don\'t work at X anymore", "I used to …"), else false, "quote": "<the '
    'sentence it was stated in, copied exactly>"}]}. Use these predicates where they fit: '
    + ", ".join(PREDICATES)
    + '; a move is "lives in", a job is "works at". Only what the user asserts as true; '
    'questions, wishes and plans are no facts; none is {"facts": []}.'
)
NUMBERED = (
    ' The text is the user\'s messages, each after its number in brackets ("[3] ..."); give '
    'each fact also "message": the number of the message that states it.'
)
_CANONICAL = {**words.THIRD_PERSON, **words.CHANGES}


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
        return parse(response.choices[0].message.content or "", said=said)


def parse(content: str, said: Sequence[Said] = ()) -> list[Triple]:
    """The facts of the model's answer; a fact's `message` is kept only when it is one of
    the messages sent, its sentence only when the quote is found in what was said."""
    try:
        items = json.loads(content).get("facts", [])
    except (ValueError, AttributeError):
        return []
    messages: Collection[int] = [s.message for s in said if s.message is not None]
    out = []
    for item in items if isinstance(items, list) else []:
        triple = _triple(item, messages, said) if isinstance(item, dict) else None
        if triple is not None:
            out.append(triple)
    return out


def _triple(item: dict[str, Any], messages: Collection[int], said: Sequence[Said]) -> Triple | None:
    subject, predicate, obj = (
        " ".join(str(item.get(k, "")).split())[:MAX_OBJECT]
        for k in ("subject", "predicate", "object")
    )
    subject = _subject(subject)
    if not (subject and predicate and obj):
        return None
    ends = item.get("ends") is True
    lowered = predicate.lower()
    if lowered in words.ENDINGS:
        predicate, ends = words.ENDINGS[lowered], True
    else:
        predicate = _CANONICAL.get(lowered, lowered)
    index = item.get("message")
    message = index if type(index) is int and index in messages else None
    return Triple(
        subject,
        predicate,
        obj,
        statement(subject, predicate, obj, ends),
        message,
        ends,
        How.MODEL,
        _span(str(item.get("quote", "")), message, said),
    )


def _subject(subject: str) -> str:
    """ "The user", "User's Sister" → "user", "user's sister"."""
    lowered = subject.lower().removeprefix("the ")
    if lowered == "user" or lowered.startswith("user's "):
        return lowered
    return ""


def _span(quote: str, message: int | None, said: Sequence[Said]) -> Span | None:
    texts = [s.text for s in said if s.message == message]
    start = texts[0].find(quote) if quote and texts else -1
    return Span(start, start + len(quote)) if start >= 0 else None

"""Answers read from passages when no fact answers: the sentence of the retrieved passages
that answers the question best, the user's own where one does.

Each candidate sentence (`sentences`) is scored against the question by the words it shares
with it (`questions.coverage`: the question's content words, through the same-attribute
table) and, with hybrid retrieval on, by meaning (the cosine of the two embeddings). Below a
threshold a sentence answers nothing; a question nothing answers is told so. The weights
and thresholds were chosen on tests/data/ask_session.yaml (tests/test_ask_session.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from runtime_svc.domain import questions, sentences

# Words only: the share of the question's content words a sentence must say.
LEXICAL_THRESHOLD = 0.4
# Words and meaning: the weight of the words, and the score a sentence must reach.
LEXICAL_WEIGHT = 0.5
HYBRID_THRESHOLD = 0.45
# The assistant's sentences answer only when none of the user's does, and must score this
# much more (an assistant restates and advises; the user states).
ASSISTANT_MARGIN = 0.1
MAX_SENTENCE_CHARS = 600


@dataclass(frozen=True)
class Said:
    """One message (or a plain-text memory) a candidate sentence may come from."""

    hit: int  # which retrieved passage
    message: int  # its index in the conversation (-1: a plain-text memory)
    by_user: bool
    text: str
    # The message it replies to when that one asks something: "She left me her old
    # zqcello" answers "zqcello grandmother" read with "Which instrument did your
    # grandmother leave you?".
    asked: str = ""


@dataclass(frozen=True)
class Sentence:
    said: Said
    start: int  # [start, end) in said.text
    end: int

    @property
    def text(self) -> str:
        return self.said.text[self.start : self.end]


@dataclass(frozen=True)
class Scored:
    sentence: Sentence
    score: float
    coverage: float = 0.0  # the share of the question's words it says (unweighted)


def candidates(said: Sequence[Said]) -> list[Sentence]:
    """The sentences of the messages given, each once (a message in several passages is
    read once), questions left out (they ask; they do not answer)."""
    seen: set[tuple[int, int]] = set()
    out = []
    for s in said:
        key = (s.message, hash(s.text)) if s.message >= 0 else (-1 - s.hit, 0)
        if key in seen:
            continue
        seen.add(key)
        for start, end in sentences.spans(s.text):
            if end - start <= MAX_SENTENCE_CHARS and not s.text[start:end].endswith("?"):
                out.append(Sentence(s, start, end))
    return out


def _weights(asked: Sequence[str], said: Sequence[frozenset[str]]) -> dict[str, float]:
    """Each question word by how rare it is among the candidates (inverse document
    frequency): "ship" of "when must the project ship" counts more than "project", which
    half the session says; a word none of them says counts most."""
    n = len(said)
    return {s: math.log((n + 1) / (sum(s in t for t in said) + 0.5)) for s in asked}


def best(
    question: str, found: Sequence[Sentence], similarity: Sequence[float] | None = None
) -> Scored | None:
    """The sentence that answers `question`, or None. `similarity`: each sentence's cosine
    with the question (hybrid retrieval on), else words only."""
    asked = questions.question_stems(question)
    said = [_stems(s) for s in found]
    weight = _weights(asked, said)
    scored = []
    for i, s in enumerate(found):
        lexical = questions.coverage(asked, said[i], weight)
        if similarity is None:
            score, threshold = lexical, LEXICAL_THRESHOLD
        else:
            score = LEXICAL_WEIGHT * lexical + (1 - LEXICAL_WEIGHT) * similarity[i]
            threshold = HYBRID_THRESHOLD
        if not s.said.by_user:
            threshold += ASSISTANT_MARGIN
        if score >= threshold:
            scored.append(Scored(s, score))
    if not scored:
        return None
    users = [s for s in scored if s.sentence.said.by_user]
    top = max(users or scored, key=lambda s: s.score)
    words = questions.coverage(asked, said[found.index(top.sentence)])
    return Scored(top.sentence, top.score, words)


def _stems(s: Sentence) -> frozenset[str]:
    return questions.text_stems(s.text) | questions.text_stems(s.said.asked)


def coverage(question: str, text: str) -> float:
    """The share of the question's content words a text says (`questions.coverage`)."""
    return questions.coverage(questions.question_stems(question), questions.text_stems(text))


def passage_first(question: str, passage: Scored, statements: Sequence[str]) -> bool:
    """Whether a passage's sentence answers before the facts that answer: when it says more
    of what was asked than their statements together ("what do we write tests with" is
    answered by "We write tests with pytest", not by a fact that mentions tests)."""
    return passage.coverage > coverage(question, "\n".join(statements))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Of two unit-length vectors (an `Embedder`'s)."""
    return sum(x * y for x, y in zip(a, b, strict=True))

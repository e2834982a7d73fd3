"""The rule-based fact extractor: deterministic, microseconds per memory.

It reads what the user says about themselves ("I live in Lisbon") and about the people and
things they name ("My sister lives in Lisbon", "My phone is a Pixel 8"), one sentence at a
time, one clause at a time: "I live in Lisbon and I'm allergic to peanuts" states two facts,
and so does "I live in Lisbon and work at Google" (the second clause's subject left out).
It reads changes ("I moved to Berlin", "My new job is at Spotify") as the value they make
current, and ends ("I no longer live in Lisbon", "I don't work at Google anymore", "I used
to …") as statements that the value ended. Questions, wishes, plans and hypotheticals
("Maybe I'll move to Berlin") state nothing.

Each fact names the message and the sentence it was read from, and how it was read (a whole
sentence, a clause, a clause without its subject, a change): its confidence says so. The
words are data (`extraction_words`); `tests/data/fact_sentences.yaml` measures them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from runtime_svc.domain import attributes, fragments, sentences
from runtime_svc.domain import extraction_words as w
from runtime_svc.domain.facts import MAX_OBJECT, How, Said, Span, Triple, statement


def _alternation(phrases: Sequence[str]) -> str:
    return "|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True))


_CONTRACTIONS = [
    (re.compile(r"\b(i|we|you|they)'m\b", re.I), r"\1 am"),
    (re.compile(r"\b(i|we|you|they)'ve\b", re.I), r"\1 have"),
    (re.compile(r"\b(i|we|you|they)'d\b", re.I), r"\1 would"),
    (re.compile(r"\b(i|we|you|they)'ll\b", re.I), r"\1 will"),
    (re.compile(r"\b(i|we|you|they)'re\b", re.I), r"\1 are"),
    (re.compile(r"\bcan't\b", re.I), "can not"),
    (re.compile(r"\bwon't\b", re.I), "will not"),
    (re.compile(r"\b(do|does|did|is|are|was|were|have|has)n't\b", re.I), r"\1 not"),
]
_OPENING = re.compile(rf"^(?:(?:{w.OPENINGS})(?:\s+that)?[,:!]?\s+)+", re.I)
_BREAK = re.compile(
    r"\s*(?:[,;]\s*)?\b(?:and also|and|but|so|while|whereas|plus)\s+(?=(?:i|we|my|our)\s)"
    r"|\s*[,;]\s*(?=(?:i|we|my|our)\s)",
    re.I,
)
# "do" and "does" as in "I do like jazz" ("do not" is read as a negation).
_ADVERBS = re.compile(rf"^(?:(?:{w.ADVERBS})\s+|(?:do|does)\s+(?!not\b))+", re.I)
_AUXILIARY = re.compile(rf"^(am|is|are|have|has)\s+(?=(?:{w.ADVERBS})\s)", re.I)
_NOT_STATED = re.compile(rf"^(?:{w.NOT_STATED})\b", re.I)
_NOT_STATED_BY_THE_USER = re.compile(rf"^(?:{w.NOT_STATED_BY_THE_USER})\b", re.I)
_PLURAL = [v for v in w.FIRST_PERSON if not v.startswith("am")]  # "my parents live in"
_FIRST = re.compile(rf"^({_alternation(list(w.FIRST_PERSON))})\s+(.+)$", re.I)
_THIRD = re.compile(rf"^({_alternation(list(w.THIRD_PERSON) + _PLURAL)})\s+(.+)$", re.I)
_CHANGE = re.compile(rf"^({_alternation(list(w.CHANGES))})\s+(.+)$", re.I)
_ENDING = re.compile(rf"^({_alternation(list(w.ENDINGS))})\s+(.+)$", re.I)
_MOVED_FROM = re.compile(r"^moved from\s+.+?\s+to\s+(.+)$", re.I)
_NEW = re.compile(r"^(?:new|current)\s+(?=\S)")
_THIRD_START = re.compile(
    rf"^(?:(?:{w.ADVERBS})\s+)*(?:no longer|does not|do not|used to|"
    rf"{_alternation(list(w.THIRD_PERSON) + _PLURAL + list(w.CHANGES) + list(w.ENDINGS))})\s",
    re.I,
)
_JOB = re.compile(r"^job$", re.I)
_JOB_AT = re.compile(r"^is\s+(?:at|with)\s+(.+)$", re.I)
_TRAILING = re.compile(rf"(?:,?\s+(?:{w.TRAILING}))+$", re.I)
_CUT = re.compile(rf"\s*[,(]|\s+(?:{w.CUT_AT})\s", re.I)
_PRONOUN = re.compile(r"^(?:that|this|these|those|there|him|her|so)\b|\b(?:it|them)\b", re.I)
_LIST = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", re.I)
_COUNTED = re.compile(rf"\s+and\s+(?=(?:{w.DETERMINERS})\s)", re.I)
_ANYMORE = re.compile(r"\s+(?:anymore|any more|any longer)$", re.I)
# "joined Shopify as a senior data engineer": an employer and a role at once.
_JOINED_AS = re.compile(
    r"^(?:joined|started at|started working at|started working for)\s+(.+?)\s+as\s+(.+)$", re.I
)
# Examples or a restatement after a value ("tools, e.g. ruff and mypy"): not the value.
_EXAMPLES = re.compile(r"\s*[,(]?\s*\b(?:e\.g|i\.e|for example|for instance)\b.*$", re.I)
# A phrase after a list's comma that is no item of it ("PostgreSQL, with SQLite for tests").
_ADJUNCT = re.compile(r"^(?:with|without|for|from|to|of|on|at|by|via|through)\s", re.I)
# The user's own "my" in what the user says of themselves ("I drink my coffee black").
_MY = re.compile(r"\bmy\b", re.I)


@dataclass(frozen=True)
class _Reading:
    predicate: str
    object: str
    ends: bool = False
    change: bool = False


class RuleExtractor:
    """Per message: each fact names the message it was first stated in."""

    def extract(self, said: Sequence[Said]) -> list[Triple]:
        out: dict[tuple[str, str, str, bool], Triple] = {}  # by content, the first kept
        for s in said:
            for start, end in _sentences(s.text):
                for triple in read_sentence(s.text[start:end]):
                    out.setdefault(
                        triple.content,
                        Triple(
                            triple.subject,
                            triple.predicate,
                            triple.object,
                            triple.statement,
                            s.message,
                            triple.ends,
                            triple.how,
                            Span(start, end),
                        ),
                    )
        return list(out.values())


def _sentences(text: str) -> Iterator[tuple[int, int]]:
    """Each sentence's character offsets (surrounding white space left out)."""
    return sentences.spans(text)


def read_sentence(sentence: str) -> list[Triple]:
    """The facts one sentence states (no message or span set)."""
    if sentence.rstrip().endswith("?"):
        return []
    text = sentence.replace("\u2019", "'").strip().rstrip(".!;").strip()
    for pattern, repl in _CONTRACTIONS:
        text = pattern.sub(repl, text)
    text = _OPENING.sub("", text)
    clauses = [c for c in _BREAK.split(text) if c.strip()]
    out = []
    for clause in clauses:
        out += _clause(clause.strip(), compound=len(clauses) > 1)
    return out


def _clause(clause: str, *, compound: bool) -> list[Triple]:
    m = re.match(r"^(?:i|we)\s+(.+)$", clause, re.I)
    if m:
        subject, rest, first, new = "user", m.group(1), True, False
    else:
        named = _my(clause)
        if named is None:
            return []
        subject, rest, new = named
        first = False
    out = []
    parts = _elided_split(rest, first)
    for i, part in enumerate(parts):
        how = How.ELIDED if i else (How.CLAUSE if compound or len(parts) > 1 else How.DIRECT)
        for reading in _read(part, first, subject):
            if (reading.change or new) and how is How.DIRECT:
                how = How.CHANGE
            who = "user" if reading.predicate.startswith("@") else subject
            predicate = reading.predicate.lstrip("@")
            obj = _MY.sub("their", reading.object) if first else reading.object
            out.append(
                Triple(
                    who,
                    predicate,
                    obj,
                    statement(who, predicate, obj, reading.ends),
                    ends=reading.ends,
                    how=how,
                )
            )
    return out


def _my(clause: str) -> tuple[str, str, bool] | None:
    """("user's <thing>", the rest, whether it is a new one) of "my|our [new] <thing> <verb> …":
    the shortest thing followed by a verb this extractor knows."""
    words = clause.split()
    if len(words) < 3 or words[0].lower() not in ("my", "our"):
        return None
    for n in range(1, min(6, len(words) - 1)):
        rest = " ".join(words[1 + n :])
        if _THIRD_START.match(rest + " "):
            thing = " ".join(words[1 : 1 + n]).lower()
            if thing in w.NOT_THINGS:
                return None
            new = _NEW.match(thing)
            return "user's " + (thing[new.end() :] if new else thing), rest, bool(new)
    return None


def _elided_split(rest: str, first: bool) -> list[str]:
    """ "live in Lisbon and work at Google" → two parts (the second's subject left out)."""
    return [p for p in _elided_and(first).split(rest) if p.strip()]


@lru_cache(maxsize=2)
def _elided_and(first: bool) -> re.Pattern[str]:
    """The "and" before a verb whose subject is left out (built once: its alternation of
    every verb took 0.1 ms to write out again for each clause)."""
    verbs = list(w.FIRST_PERSON) + list(w.CHANGES)
    if not first:
        verbs += list(w.THIRD_PERSON)
    verbs = [v for v in verbs if v not in ("am", "is", "are", "was")]
    return re.compile(
        rf"\s*,?\s+and\s+(?=(?:no longer\s+|do not\s+|does not\s+)?(?:{_alternation(verbs)})\s)",
        re.I,
    )


def _read(rest: str, first: bool, subject: str) -> list[_Reading]:
    rest = _ADVERBS.sub("", rest.strip())
    m = _AUXILIARY.match(rest)  # "I am currently living in", "I have just moved to"
    if m:
        rest = m.group(1) + " " + _ADVERBS.sub("", rest[m.end() :])
    if _NOT_STATED.match(rest) or (first and _NOT_STATED_BY_THE_USER.match(rest)):
        return []
    ends = False
    m = re.match(r"^(?:no longer|used to)\s+(.+)$", rest, re.I)
    if m:
        ends, rest = True, m.group(1)
        if re.match(r"^(?:am|is|are)\s", rest, re.I):
            rest = "am " + rest.split(None, 1)[1] if " " in rest else rest
    m = re.match(r"^(?:do|does) not\s+(.+)$", rest, re.I)
    if m:
        rest = m.group(1)
        if _ANYMORE.search(rest):
            ends, rest, first = True, _ANYMORE.sub("", rest), True
        elif rest.lower().startswith("like "):
            return _values("dislikes", rest[5:])
        else:
            return []
    m = re.match(r"^(?:am|is|are)\s+(no longer|not)\s+(.+)$", rest, re.I)
    if m:
        if m.group(1).lower() == "not" and not _ANYMORE.search(m.group(2)):
            return []
        ends, rest, first = True, "am " + _ANYMORE.sub("", m.group(2)), True
    rest = _ANYMORE.sub("", rest)
    if not first and _JOB.match(subject.removeprefix("user's ")):
        m = _JOB_AT.match(rest)
        if m:
            return _values("@works at", m.group(1), ends=ends, change=True)
    perfect = re.sub(r"^(?:have|has)\s+", "", rest, flags=re.I)  # "I have moved to"
    m = _JOINED_AS.match(rest) or _JOINED_AS.match(perfect)
    if m:
        employer = _values("works at", m.group(1), ends=ends, change=True)
        return employer + _values("works as", m.group(2), ends=ends, change=True)
    for pattern, table, change in (
        (_ENDING, w.ENDINGS, False),
        (_CHANGE, w.CHANGES, True),
    ):
        m = pattern.match(rest) or pattern.match(perfect)
        if m:
            is_end = ends or table is w.ENDINGS
            return _values(table[m.group(1).lower()], m.group(2), ends=is_end, change=change)
    m = _MOVED_FROM.match(rest)
    if m:
        return _values("lives in", m.group(1), ends=ends, change=True)
    m = (_FIRST if first else _THIRD).match(rest)
    if m is None:
        return []
    verb = m.group(1).lower()
    predicate = w.FIRST_PERSON.get(verb) if first else w.THIRD_PERSON.get(verb)
    predicate = predicate or w.FIRST_PERSON[verb]
    obj = m.group(2)
    if predicate in ("is", "are", "was") and re.match(r"^\w+ing\b", obj):
        return []  # "I am learning Japanese": an activity, not an attribute
    if predicate == "has" and re.match(r"^(?:been|\w+ed)\b", obj, re.I):
        return []  # "I have been …", "I have finished …": a tense, not a possession
    return _values(predicate, obj, ends=ends)


def _values(
    predicate: str, obj: str, *, ends: bool = False, change: bool = False
) -> list[_Reading]:
    """The object's values: cleaned, cut where a single value ends, split where it lists."""
    obj = _EXAMPLES.sub("", _TRAILING.sub("", " ".join(obj.split()))).strip(" ,")
    bare = predicate.lstrip("@")
    if bare in attributes.SINGLE_VALUED:
        obj = _CUT.split(obj, maxsplit=1)[0]
    if (bare in w.LISTS and "," in obj) or bare in w.PAIRS:
        parts = _LIST.split(obj)
    elif bare in w.COUNTED:
        parts = _COUNTED.split(obj)
    else:
        parts = [obj]
    out = []
    for i, part in enumerate(parts):
        part = part.strip(" ,")[:MAX_OBJECT]
        if i and _ADJUNCT.match(part):
            continue  # "…, with SQLite for tests": a phrase about the value, not a value
        if part and not _PRONOUN.search(part) and not fragments.is_fragment(part):
            out.append(_Reading(predicate, part, ends, change))
    return out

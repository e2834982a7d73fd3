"""Whether a fact or a memory answers the question asked, or is only about the same user.

Ask finds candidates by words and by meaning; a candidate found is not an answer. A fact
answers when the question names what it is about: a word of the question (its stem) is a
word of the fact's attribute (the subject after "the user's", the predicate) or of its
value, directly or through a small table of words that ask for the same attribute
("name" asks for "is called"; "live" for "address"). "where do I live?" is answered by
"The user lives in Lisbon", not by "The user is allergic to peanuts"; "what's my name?" is
not answered by "The user's dog is called Pixel"; "what is the capital of France?" is not
answered by anything about the user. A passage's sentence answers as much as it says of
the question's words (`coverage`, see `passage_answers`). A question of stop words only
("who am I?") is about every fact stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from runtime_svc.domain.facts import Fact
from runtime_svc.domain.fragments import is_fragment
from runtime_svc.domain.text import STOP_WORDS, query_terms, stem, words

# Words that ask for the same attribute, each group as its words (stemmed below).
_SAME_ATTRIBUTE: tuple[tuple[str, ...], ...] = (
    ("name", "named", "called", "call"),
    ("live", "lives", "living", "home", "address", "based", "reside", "city", "moved"),
    ("work", "works", "job", "employer", "employed", "company", "role", "occupation"),
    ("own", "owns", "owned", "has"),
    ("birthday", "born", "birth"),
    ("age", "old"),
    ("allergic", "allergy", "allergies"),
    ("like", "likes", "love", "loves", "enjoy", "enjoys", "favourite", "favorite"),
    ("study", "studies", "studying", "school", "university"),
    ("married", "wife", "husband", "spouse", "partner"),
)
_GROUP: dict[str, frozenset[str]] = {}
for _group in _SAME_ATTRIBUTE:
    _group_stems = frozenset(stem(w) for w in _group)
    for _s in _group_stems:
        _GROUP[_s] = _GROUP.get(_s, frozenset()) | _group_stems
# Words the table treats as topics although they are stop words elsewhere.
_KEPT = frozenset(w for group in _SAME_ATTRIBUTE for w in group) & STOP_WORDS


def asked(question: str) -> frozenset[str]:
    """The stems a question asks about, widened by the same-attribute table; empty for a
    question of stop words only."""
    stems = {t.stem for t in query_terms(question)}
    stems |= {stem(w) for w in words(question) if w in _KEPT}
    widened: set[str] = set()
    for s in stems:
        widened |= _GROUP.get(s, frozenset({s}))
    return frozenset(widened)


def _stems(text: str) -> set[str]:
    return {stem(w) for w in words(text) if w not in STOP_WORDS or w in _KEPT}


def _about(asked_stems: frozenset[str], texts: Iterable[str]) -> bool:
    if not asked_stems:
        return True
    return any(asked_stems & _stems(t) for t in texts)


def fact_answers(asked_stems: frozenset[str], fact: Fact) -> bool:
    """A fact about one of the user's things ("the user's dog is called Pixel") answers
    a question that names the thing or the value; any other fact, one that names a word of
    its subject, predicate or value. A fact whose value is a fragment ("Dr", "fix:", read
    before `fragments` existed) answers nothing."""
    t = fact.triple
    if is_fragment(t.object):
        return False
    if t.subject.startswith("user's "):
        return _about(asked_stems, (t.subject.removeprefix("user's "), t.object))
    subject = "" if t.subject == "user" else t.subject
    return _about(asked_stems, (subject, t.predicate, t.object))


SAME_ATTRIBUTE_SHARE = 0.5  # a question word met only through the same-attribute table


def question_stems(question: str) -> list[str]:
    return [t.stem for t in query_terms(question)]


def text_stems(text: str) -> frozenset[str]:
    return frozenset(_stems(text))


def coverage(
    asked_stems: Sequence[str], said: frozenset[str], weight: Mapping[str, float] | None = None
) -> float:
    """How much of what a question asks (`question_stems`) a text says (`text_stems`), 0 to
    1: the share of the question's content words the text has, each by its `weight` (1
    when not given), a word the text has only through the same-attribute table counting
    half; 0 for a question of stop words only."""
    total = got = 0.0
    for s in asked_stems:
        w = weight[s] if weight is not None else 1.0
        total += w
        if s in said:
            got += w
        elif _GROUP.get(s, frozenset()) & said:
            got += w * SAME_ATTRIBUTE_SHARE
    return got / total if total else 0.0

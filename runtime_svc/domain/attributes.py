"""Attributes: what a fact says something about, and whether it holds one value at a time.

A fact `(subject, predicate, object)` is a statement about an attribute. A *single-valued*
attribute (where someone lives, where they work, their partner, their phone) holds one
value at a time: a later statement of another value supersedes the earlier one. A
*multi-valued* attribute (what someone likes, has, is allergic to) holds any number of
values: each value is an attribute of its own, which only a statement that it ended
("I no longer like sushi") closes.

The vocabulary is data: `SINGLE_VALUED` predicates, and for "<someone>'s <thing> is …"
the things that name one value (`ONE_VALUE_THINGS`, whatever the object) or one thing
(`ONE_THING_THINGS`, when the object names something: "my phone is a Pixel 8", not
"my phone is broken").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Predicates whose attribute holds one value at a time, for any subject.
SINGLE_VALUED: frozenset[str] = frozenset(
    {
        "lives in",
        "grew up in",
        "works at",
        "works as",
        "studies at",
        "is married to",
        "is engaged to",
        "is dating",
        "is called",
        "is named",
    }
)

# "<subject>'s <thing> is <object>": one value whatever the object says.
ONE_VALUE_THINGS: frozenset[str] = frozenset(
    {
        "name",
        "first name",
        "last name",
        "surname",
        "nickname",
        "birthday",
        "age",
        "email",
        "email address",
        "phone number",
        "number",
        "address",
        "home address",
        "hometown",
        "job",
        "job title",
        "employer",
        "role",
        "salary",
        "timezone",
        "time zone",
    }
)

# "<subject>'s <thing> is <object>": one value when the object names a thing (an article,
# a name or a number: "my phone is a Pixel 8"), a description otherwise ("… is broken").
ONE_THING_THINGS: frozenset[str] = frozenset(
    {"phone", "phone model", "mobile", "car", "laptop", "computer", "bank", "team"}
)

# "<subject>'s <person> is <object>": one value when the object is a name ("my partner is
# Sam"), a description otherwise ("my partner is a nurse").
ONE_PERSON_THINGS: frozenset[str] = frozenset(
    {
        "partner",
        "wife",
        "husband",
        "spouse",
        "boyfriend",
        "girlfriend",
        "fiance",
        "fiancé",
        "fiancee",
        "fiancée",
        "boss",
        "manager",
        "doctor",
        "dentist",
        "landlord",
        "editor",
    }
)

FAVOURITE = re.compile(r"^(?:favou?rite|preferred)\s")
_NAMES_A_THING = re.compile(r"^(?:a|an|the)\s|^[A-Z0-9]")
_IS_A_NAME = re.compile(r"^(?!(?:A|An|The)\s)[A-Z]")
_ARTICLES = re.compile(r"^(?:a|an|the)\s+")
_PUNCTUATION = re.compile(r"[^\w\s'-]")


@dataclass(frozen=True)
class AttributeKey:
    """What a statement is about: subject, predicate and, for a multi-valued attribute, the
    value itself (`value` empty for a single-valued one)."""

    subject: str
    predicate: str
    value: str = ""


def thing_of(subject: str) -> str:
    """The thing a possessive subject names: "user's partner's name" → "name"."""
    return subject.rsplit("'s ", 1)[-1] if "'s " in subject else ""


def single_valued(subject: str, predicate: str, obj: str) -> bool:
    """Whether the attribute the statement is about holds one value at a time."""
    if predicate in SINGLE_VALUED:
        return True
    if predicate != "is":
        return False
    thing = thing_of(subject)
    if thing in ONE_VALUE_THINGS or FAVOURITE.match(thing):
        return True
    if thing in ONE_THING_THINGS:
        return bool(_NAMES_A_THING.match(obj))
    return thing in ONE_PERSON_THINGS and bool(_IS_A_NAME.match(obj))


def value_key(obj: str) -> str:
    """A value as compared: "the Lisbon office." and "Lisbon office" are one value."""
    lowered = " ".join(_PUNCTUATION.sub(" ", obj.lower()).split())
    return _ARTICLES.sub("", lowered)


def key(subject: str, predicate: str, obj: str) -> AttributeKey:
    """The attribute of a statement."""
    if single_valued(subject, predicate, obj):
        return AttributeKey(subject, predicate)
    return AttributeKey(subject, predicate, value_key(obj))

"""The attribute vocabulary: which attributes hold one value at a time."""

from __future__ import annotations

import pytest

from runtime_svc.domain import attributes
from runtime_svc.domain.attributes import AttributeKey, key, single_valued, value_key


@pytest.mark.parametrize("predicate", sorted(attributes.SINGLE_VALUED))
def test_every_single_valued_predicate_holds_one_value_for_any_subject(predicate):
    for subject in ("user", "user's sister", "user's partner's name"):
        assert single_valued(subject, predicate, "anything")
        assert key(subject, predicate, "Lisbon") == key(subject, predicate, "Berlin")


@pytest.mark.parametrize(
    ("subject", "predicate", "obj"),
    [
        ("user", "lives in", "Lisbon"),  # where the user lives
        ("user", "works at", "Google"),  # where they work
        ("user's partner's name", "is", "Sam"),  # their partner's name
        ("user's partner", "is", "Sam"),
        ("user's phone", "is", "a Pixel 8"),  # their phone model
        ("user's favourite colour", "is", "green"),
        ("user's name", "is", "maria"),
    ],
)
def test_the_single_valued_attributes_of_the_issue(subject, predicate, obj):
    assert single_valued(subject, predicate, obj)


@pytest.mark.parametrize(
    ("subject", "predicate", "obj"),
    [
        ("user", "likes", "jazz"),
        ("user", "has", "a dog"),
        ("user", "is allergic to", "peanuts"),
        ("user", "is", "a teacher"),  # one of many things a person is
        ("user's dog", "is", "a beagle"),
        ("user's phone", "is", "broken"),  # a description of the phone, not which phone
        ("user's partner", "is", "a nurse"),  # a description of the partner, not a name
    ],
)
def test_multi_valued_attributes_are_one_attribute_per_value(subject, predicate, obj):
    assert not single_valued(subject, predicate, obj)
    assert key(subject, predicate, obj) == AttributeKey(subject, predicate, value_key(obj))
    assert key(subject, predicate, obj) != key(subject, predicate, obj + " too")


def test_values_compare_without_case_articles_or_punctuation():
    assert value_key("The Lisbon office.") == value_key("lisbon  office") == "lisbon office"
    assert value_key("a Pixel 8") == value_key("Pixel 8")
    assert value_key("Lisbon, Portugal") != value_key("Lisbon")

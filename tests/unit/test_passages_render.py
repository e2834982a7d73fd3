"""A search hit's passage rendered from the stored conversation is the passage derived from
its messages (pure domain code, no database)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from runtime_svc.domain import passages
from runtime_svc.domain.sources import Body, Message, SourceKind

messages = st.lists(
    st.builds(
        Message,
        role=st.sampled_from(["user", "assistant"]),
        content=st.text(min_size=1, max_size=30) | st.sampled_from(["Why?", "Because.", "?"]),
        name=st.sampled_from(["", "Caroline", "Mel"]),
        sent_at_us=st.sampled_from([0, 0, 1_700_000_000_000_000, 1_600_000_000_000_000]),
    ),
    min_size=1,
    max_size=8,
)


@given(messages, st.data(), st.integers(0, 3), st.booleans())
def test_a_stored_passage_renders_as_derived(conversation, data, before, date):
    window = passages.Window(before, date)
    raw = json.dumps([m.row() for m in conversation])
    i = data.draw(st.integers(0, len(conversation) - 1))
    rng = passages.range_for(i, window, conversation)
    expected = passages.render(Body.from_raw(SourceKind.CONVERSATION, raw).messages, rng, window)
    assert passages.render_stored(raw, rng, window) == expected
    assert expected in [p.text for p in passages.derive(conversation, window)]


@given(messages, st.integers(0, 3), st.booleans())
def test_each_passage_knows_its_own_message(conversation, before, reply):
    """Prompt assembly reads a passage's own message from its range: the message it was
    derived for (its question, when it holds the reply), whatever the window."""
    window = passages.Window(before, reply=reply)
    contents = [m.content for m in conversation]
    derived = passages.derive(conversation, window)
    assert len({p.range for p in derived}) == len(derived)
    for i in range(len(conversation)):
        rng = passages.range_for(i, window, conversation)
        assert rng in {p.range for p in derived}
        first = next(
            j
            for j in range(len(conversation))
            if passages.range_for(j, window, conversation) == rng
        )
        assert passages.own_message(rng, contents, window) == first
        if reply and i + 1 < len(conversation) and passages.asks(contents[i]):
            assert rng.end == i + 1


def test_an_erased_conversation_renders_nothing():
    rng = passages.Range(0, 1)
    assert passages.render_stored("", rng, passages.Window()) == ""


@given(
    st.integers(
        min_value=-62_135_596_800_000_000 + 86_400_000_000, max_value=253_402_300_799_999_999
    )
)
def test_a_passages_date_is_the_utc_day_of_its_first_time(sent_at_us):
    """Dates are cached by day: any time of a day renders as that UTC day."""
    if not sent_at_us:
        assert passages.date_of_time(0) == ""
        return
    day = datetime.fromtimestamp(sent_at_us // 1_000_000, UTC).strftime("%d %B %Y")
    assert passages.date_of_time(sent_at_us) == day

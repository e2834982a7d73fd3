"""Prompt assembly (`runtime_svc.assembly`): messages, not passages, are chosen; only
new messages cost; the block is rendered per conversation with its date; the budget holds in
the counter's unit, line by line."""

from __future__ import annotations

import re

from runtime_svc.assembly import (
    FOOTER,
    HEADER,
    Candidate,
    Conversation,
    assemble,
    candidates_for,
)
from runtime_svc.domain import text
from runtime_svc.domain.passages import Range
from runtime_svc.domain.query import Query

CONV = Conversation(
    (
        ("Ann", "I adopted a kayak last spring."),
        ("Bob", "Where do you paddle it?"),
        ("Ann", "On the lake behind the school."),
        ("Bob", "Sounds lovely."),
        ("Ann", "My sister paints the lake too."),
        ("Bob", "Does she sell the paintings?"),
        ("Ann", "Only at the summer fair."),
    ),
    "08 May 2023",
)


def passage(end: int, before: int = 1, source: str = "src_a", conv: Conversation = CONV):
    rng = Range(max(0, end - before), end)
    return Candidate(source, 3, "", rng, conv)


def lines_of(block):
    return block.context.splitlines()


def test_overlapping_passages_add_only_their_new_messages_once():
    block = assemble(
        [passage(2), passage(3), passage(2)], Query.of("lake"), 10_000, text.count_tokens
    )
    body = lines_of(block)
    assert body.count("Ann: On the lake behind the school.") == 1
    assert [(c.source_id, c.passage) for c in block.cited] == [("src_a", Range(1, 3))]
    assert block.tokens == text.count_tokens(block.context)


def test_a_question_brings_its_reply_and_runs_are_separated_by_an_ellipsis():
    # the passage of message 5 asks something: message 6 (the answer) comes with it
    block = assemble([passage(5, before=0), passage(1, before=0)], Query.of("sell"), 10_000, len)
    assert [c.passage for c in block.cited] == [Range(1, 2), Range(5, 6)]
    assert lines_of(block) == [
        *HEADER.splitlines(),
        "[1] 08 May 2023",
        "…",
        "Bob: Where do you paddle it?",
        "Ann: On the lake behind the school.",
        "…",
        "Bob: Does she sell the paintings?",
        "Ann: Only at the summer fair.",
        FOOTER,
    ]


def test_the_named_speakers_own_messages_come_first():
    other = Conversation((("Cat", "Bob likes the fair."), ("Bob", "I paint.")), "01 June 2023")
    cands = [passage(0, 0, "src_b", other), passage(4, 0), passage(1, 0, "src_b", other)]
    # room for two messages only: Bob's own message outranks the better-scored passage
    count = text.count_tokens
    room = count(HEADER) + count(FOOTER) + count("[1] 01 June 2023\n") + count("…\n")
    room += count("Bob: I paint.\n")
    block = assemble(cands, Query.of("What does Bob paint?"), room, text.count_tokens)
    assert [(c.source_id, c.passage) for c in block.cited] == [("src_b", Range(1, 1))]


def test_the_budget_holds_in_the_counters_unit_and_nothing_is_cut():
    convs = [
        Conversation(tuple(("Ann", f"message {i} about the lake " * 3) for i in range(30)), "")
        for _ in range(3)
    ]
    cands = [
        passage(i, 1, f"src_{k}", c) for i in range(30) for k, c in enumerate(convs) if i % 3 == k
    ]
    for budget in (60, 200, 700):
        for count in (text.count_tokens, len):
            block = assemble(cands, Query.of("lake"), budget, count)
            assert block.tokens <= budget
            if not block.context:
                assert block.tokens == 0 and count(HEADER + FOOTER) + 10 > budget
                continue
            assert block.tokens == sum(count(line) for line in _pieces(block.context))
            for line in lines_of(block):
                assert line in (*HEADER.splitlines(), FOOTER, "…") or re.fullmatch(
                    r"(\[\d+\]|Ann: (message \d+ about the lake ){2}message .*)", line
                )


def _pieces(context: str) -> list[str]:
    """The block as it is counted: the header whole, then every line with its newline."""
    rest = context[len(HEADER) :]
    return [HEADER, *rest.splitlines(keepends=True)]


def test_plain_memories_are_one_line_and_cited_whole():
    cands = [Candidate("m1", 1, "likes   the\\nlake"), Candidate("m1", 1, "again")]
    block = assemble(cands, Query.of("lake"), 500, text.count_tokens)
    assert "[1] likes the\\nlake\n" in block.context
    assert [(c.source_id, c.passage) for c in block.cited] == [("m1", None)]


def test_no_room_no_block():
    assert assemble([passage(2)], Query.of("lake"), 5, text.count_tokens).context == ""


def test_the_candidates_follow_the_budget():
    assert [candidates_for(b) for b in (1, 400, 1000, 2000, 100_000)] == [10, 20, 50, 100, 100]


def test_near_the_end_of_the_budget_a_long_passage_gives_its_matching_message_alone():
    reply = "Paddles: " + "the blade is carbon and light. " * 40  # a long reply (1,200+ chars)
    talk = Conversation(
        (("Bob", "Hi!"), ("Ann", "Which kayak paddle should I buy?"), ("Bob", reply)),
        "08 May 2023",
    )
    ranked = Candidate("src_b", 3, "", Range(1, 2), talk)  # the reply's passage
    both = assemble([ranked], Query.of("kayak paddle"), 10_000, len)
    assert shown(both) == {1, 2}  # the exchange, with room
    # Room for the question's line but not for the reply's part beside it.
    question = len("Ann: Which kayak paddle should I buy?\n") + len("[1] 08 May 2023\n…\n")
    tight = len(HEADER) + len(FOOTER) + question + 20
    alone = assemble([ranked], Query.of("kayak paddle"), tight, len)
    assert shown(alone) == {1}
    assert alone.tokens <= tight


def shown(block) -> set[int]:  # type: ignore[no-untyped-def]
    return {i for c in block.cited for i in range(c.passage.start, c.passage.end + 1)}


def test_a_session_read_at_two_revisions_gives_each_passage_its_own_messages():
    # On PostgreSQL a search's statements may see a session before and after an append:
    # the later hit's passage holds messages the earlier revision has not.
    from runtime_svc.domain.sources import Body, Message
    from runtime_svc.retrieval import Hit
    from runtime_svc.services.retrieval import _candidates

    said = [Message("user", "the kite by the river"), Message("assistant", "so the kite")]
    grown = [*said, Message("user", "the lantern by the meadow"), Message("assistant", "so")]
    hits = [
        Hit(1, "src_s", 2, 2.0, "", "", Range(0, 1), Body(messages=tuple(said)).raw()),
        Hit(1, "src_s", 3, 1.0, "", "", Range(2, 3), Body(messages=tuple(grown)).raw()),
    ]
    candidates = _candidates(hits, dated=False)
    assert [len(c.conversation.lines) for c in candidates if c.conversation] == [2, 4]
    block = assemble(candidates, Query.of("kite lantern"), 10_000, text.count_tokens)
    assert "user: the lantern by the meadow" in block.context
    # It cites the session at the revision read first: where the block is recorded (the
    # session now at revision 3), it is made again (`Retrieval.assemble`).
    assert {c.revision for c in block.cited} == {2}

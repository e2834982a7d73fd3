"""Prompt assembly: which messages of the ranked passages go into the block, within a budget.

Input: the eligible passages of a query (best first, `candidates_for` the budget), each
with its conversation (every message, and the session's date), or a plain-text memory.
Output: the block and its citations. The rules (measured on LoCoMo-dev,
`bench.assembly_lab`, `docs/prompt-assembly.md`):

- Messages, not passages, are what is chosen: a passage adds only its messages not already
  in the block, and only those count against the budget (overlapping windows cost nothing
  twice). No message appears twice.
- When the query names exactly one of the speakers, that speaker's own messages among the
  passages come first (the question is about what they said or did).
- Then every passage in score order, with the message after it when its own message asks
  something (the answer follows a question).
- Something that does not fit is skipped, never cut; later, smaller ones are still tried.

Rendering (the lines themselves: `prompt_render`, which escapes what memories say): per
source, in order of first selection, a numbered line: a conversation's `[n] <session date>`,
then its chosen messages in order, `speaker: text` one a line, "…" before a run that does
not start the conversation; a plain-text memory's `[n] <date said> <text>`. Current sources
come first, then plain-text memories a later one superseded (marked so). The n-th source of the
block is the n-th distinct source of its citations (source ids are not in the text: in BPE
tokens a random id costs as much as a short message, measured as 3 points of evidence at
2,000 tokens). Each run of messages is cited by its range. Tokens are counted line by line
(`count`), so the block's size is the sum of its lines' and `tokens` is exactly that sum.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

from runtime_svc.assembly.candidates import Candidate, Conversation
from runtime_svc.assembly.first_pick import first_pick
from runtime_svc.assembly.line_costs import digest, line_cost
from runtime_svc.assembly.message_parts import PART_CHARS, best_part, holds_any, shared
from runtime_svc.assembly.message_runs import cuts, gaps, runs
from runtime_svc.assembly.passage_picks import named_speaker, own_of, with_reply
from runtime_svc.assembly.prompt_render import FOOTER, GAP, HEADER, message_line, source_line
from runtime_svc.assembly.stem_places import Places
from runtime_svc.domain.passages import Part, Range, Window
from runtime_svc.domain.query import Query

DEFAULT_WINDOW = Window()

Count = Callable[[str], int]

MAX_CANDIDATES = 100
TOKENS_PER_CANDIDATE = 20


def candidates_for(token_budget: int) -> int:
    """How many ranked passages a block of this budget is chosen from: one per 20 tokens,
    10 to 100 (LoCoMo-dev: as good as 100 at 2,000 tokens and better below, where passages
    far down the ranking only displace better ones; and a smaller top k ranks faster).
    """
    return min(MAX_CANDIDATES, max(10, token_budget // TOKENS_PER_CANDIDATE))


@dataclass(frozen=True)
class Cited:
    """What a block cites: a run of a conversation's messages, or a whole memory."""

    source_id: str
    revision: int
    passage: Range | None = None
    chars: Part | None = None  # the part of the passage's one message shown (None: whole)


@dataclass(frozen=True)
class PromptBlock:
    context: str
    cited: tuple[Cited, ...]
    tokens: int


@dataclass
class _Source:
    source_id: str
    revision: int
    conversation: Conversation | None
    text: str = ""
    chosen: set[int] = field(default_factory=set)
    said: str = ""
    superseded: bool = False
    parts: dict[int, Part] = field(default_factory=dict)  # messages shown in part
    shown: dict[int, str] = field(default_factory=dict)  # each chosen message's line
    limits: dict[int, int] = field(default_factory=dict)  # the part limit each was shown at


class _Block:
    def __init__(self, count: Count, budget: int, stems: Sequence[str] = ()) -> None:
        self.count, self.budget = count, budget
        self.stems, self.distinct = tuple(stems), set(stems)
        self.matched: dict[tuple[str, int], bool] = {}
        self.used = count(HEADER) + count(FOOTER)
        self.gap = count(GAP)
        self.sources: dict[str, _Source] = {}  # in order of first selection
        # Each message's shown part and cost by (source, message, part limit): every
        # pass and every passage holding it offers it again; this is the block's main work.
        self.lines: dict[tuple[str, int, int], tuple[Part | None, int]] = {}
        self.places: dict[tuple[str, int], Places | None] = {}  # by (source, message)
        self.digests: dict[tuple[str, int], bytes] = {}  # each message's, made once

    def add(self, c: Candidate, messages: Sequence[int], limit: int = PART_CHARS) -> bool:
        """Adds the messages (or the plain-text memory) if what is new fits."""
        held = self.sources.get(c.source_id)
        if c.conversation is None or c.passage is None:
            if held is not None:
                return False
            cost = self.count(_memory_line(len(self.sources) + 1, c))
            source = _Source(c.source_id, c.revision, None, c.text, set(), c.said, c.superseded)
            return self._take(cost, source)
        size = len(c.conversation.lines)
        wanted = {i for i in messages if 0 <= i < size}
        before = held.chosen if held is not None else set()
        new = wanted - before
        if not new:
            return False
        lines = c.conversation.lines
        cost = self.gap * (gaps(before | new) - gaps(before))
        if held is None:
            cost += self.count(_session_line(len(self.sources) + 1, c))
        # Short messages first: a long one's part is worked out only if the rest still fits.
        priced: dict[int, tuple[Part | None, int]] = {}
        for i in sorted(new, key=lambda i: len(lines[i][1])):
            priced[i] = self._line(c.source_id, lines, i, limit)
            cost += priced[i][1]
            if self.used + cost > self.budget:
                return False
        if held is None:
            self._take(cost, _Source(c.source_id, c.revision, c.conversation))
            held = self.sources[c.source_id]
        else:
            self.used += cost
        held.chosen |= new
        held.parts |= {i: p for i, (p, _) in priced.items() if p is not None}
        held.shown |= {i: _message(*lines[i], p) for i, (p, _) in priced.items()}
        held.limits |= dict.fromkeys(new, limit)
        return True

    def grow(self, limit: int) -> None:
        """Messages shown by a part under `limit`, in order of selection, shown by their
        best part at `limit` instead while the budget allows."""
        for s in list(self.sources.values()):
            if s.conversation is None:
                continue
            lines = s.conversation.lines
            for i in sorted(i for i in s.parts if s.limits[i] < limit):
                _, before = self._line(s.source_id, lines, i, s.limits[i])
                part, after = self._line(s.source_id, lines, i, limit)
                if self.used + after - before > self.budget:
                    continue
                self.used += after - before
                s.limits[i], s.shown[i] = limit, _message(*lines[i], part)
                if part is None:
                    del s.parts[i]
                else:
                    s.parts[i] = part

    def _line(
        self, source_id: str, lines: Sequence[tuple[str, str]], i: int, limit: int
    ) -> tuple[Part | None, int]:
        """Message `i`'s part shown at `limit` (None: whole) and its line's cost."""
        key = (source_id, i, limit)
        found = self.lines.get(key)
        if found is None:
            content = lines[i][1]
            made = self.digests.get((source_id, i))
            if made is None:
                made = self.digests[(source_id, i)] = digest(*lines[i])
            part = None  # shown whole: no need to know where the words are
            if len(content) > limit:
                at = self._places(source_id, lines, i)
                part = best_part(content, self.stems, limit, at, made)
            cost = line_cost(self.count, made, part, lambda: _message(*lines[i], part))
            found = self.lines[key] = (part, cost)
        return found

    def _places(self, source_id: str, lines: Sequence[tuple[str, str]], i: int) -> Places | None:
        """Where the query's stems occur in message `i` (None: not ASCII)."""
        key = (source_id, i)
        if key not in self.places:
            content = lines[i][1]
            ascii_ = content.isascii()  # normalised, it is only lower-cased
            self.places[key] = Places(content.lower(), self.distinct) if ascii_ else None
        return self.places[key]

    def matches(self, source_id: str, lines: Sequence[tuple[str, str]], i: int) -> bool:
        """Whether message `i` holds one of the query's words (each message looked at once;
        where the words occur is found only for a message shown in part)."""
        key = (source_id, i)
        if key not in self.matched:
            at = self.places.get(key)
            content = lines[i][1]
            if at is not None:
                self.matched[key] = at.count(0, at.size) > 0
            elif content.isascii():  # normalised, it is only lower-cased
                self.matched[key] = holds_any(content.lower(), self.distinct)
            else:
                self.matched[key] = shared(content, self.stems) > 0
        return self.matched[key]

    def _take(self, cost: int, source: _Source) -> bool:
        if self.used + cost > self.budget:
            return False
        self.used += cost
        self.sources[source.source_id] = source
        return True

    def render(self) -> PromptBlock:
        if not self.sources:
            return PromptBlock("", (), 0)
        out, cited = [HEADER], []
        # What is current first, then what a later memory superseded (in selection order).
        ordered = sorted(self.sources.values(), key=lambda s: s.superseded)
        for n, s in enumerate(ordered, start=1):
            if s.conversation is None:
                c = Candidate(s.source_id, s.revision, s.text, None, None, s.said, s.superseded)
                out.append(_memory_line(n, c))
                cited.append(Cited(s.source_id, s.revision))
                continue
            c = Candidate(s.source_id, s.revision, "", Range(0, 0), s.conversation)
            out.append(_session_line(n, c))
            for run in runs(s.chosen):
                if run.start > 0:
                    out.append(GAP)
                out += [s.shown[i] for i in range(run.start, run.end + 1)]
                cited += [Cited(s.source_id, s.revision, r, p) for r, p in cuts(run, s.parts)]
        out.append(FOOTER)
        return PromptBlock("".join(out), tuple(cited), self.used)


def assemble(
    candidates: Sequence[Candidate],
    query: Query,
    token_budget: int,
    count: Count,
    window: Window = DEFAULT_WINDOW,
) -> PromptBlock:
    """The block for `query` from its ranked candidates (see the module doc); `window`: how
    the passages were derived (which message of a passage is its own)."""
    block = _Block(count, token_budget, query.stems)
    if not candidates or block.used >= token_budget:
        return PromptBlock("", (), 0)
    owns = [own_of(c, window) for c in candidates]
    named = named_speaker(candidates, query.text)
    if named:
        for c, own in zip(candidates, owns, strict=True):
            if own is not None and c.conversation and c.conversation.lines[own][0] == named:
                block.add(c, [own])
    for c, own in zip(candidates, owns, strict=True):
        if own is not None:
            lines = c.conversation.lines if c.conversation is not None else ()
            matches = partial(block.matches, c.source_id, lines)
            choices, limit = first_pick(lines, with_reply(c, own), own, matches)
            for chosen in choices:  # the first that fits
                if block.add(c, chosen, limit):
                    break
    for c, own in zip(candidates, owns, strict=True):
        block.add(c, with_reply(c, own))
    block.grow(PART_CHARS)
    return block.render()


def _message(speaker: str, content: str, part: Part | None = None) -> str:
    """A message's line; one shown in part says where it was cut ("…")."""
    if part is None:
        return message_line(speaker, content)
    return message_line(
        speaker,
        content[part.start : part.end],
        cut_before=part.start > 0,
        cut_after=part.end < len(content),
    )


def _session_line(n: int, c: Candidate) -> str:
    return source_line(n, c.conversation.date if c.conversation is not None else "")


def _memory_line(n: int, c: Candidate) -> str:
    return source_line(n, c.said, c.text, superseded=c.superseded)

"""What a search returns: hits (a source's best passage, or a passage, with what it shows of
its source: `storage.shown_sources`) and explanation rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from runtime_svc.domain import entry_keys, passages
from runtime_svc.domain.eligibility import State
from runtime_svc.domain.entry_keys import EntryKey
from runtime_svc.domain.passages import Range, Window
from runtime_svc.domain.sources import Body
from runtime_svc.storage.shown_sources import ShownSource


@dataclass(frozen=True)
class Hit:
    pk: int
    source_id: str
    revision: int
    score: float  # higher is better
    form: str  # a plain-text memory's generated form ("" for a passage: see `text`)
    save_intent: str
    passage: Range | None = None  # the conversation's messages this hit is (None: whole)
    raw: str = ""  # a passage's: the conversation's stored form (prompt assembly reads it)
    # A passage's: that form decoded (`Body.decoded`), shared by the transaction's searches.
    decoded: passages.Decoded | None = field(default=None, compare=False, repr=False)
    window: Window | None = field(default=None, compare=False, repr=False)  # a passage's

    @property
    def in_its_row(self) -> bool:
        """Whether the passage's messages are all in the conversation read with it. On
        PostgreSQL each of a search's statements sees what committed before it, so an entry
        of a session's next revision (appended meanwhile) can meet the source's row as an
        earlier statement read it: such a hit is left out of this search."""
        return (
            self.passage is None or self.decoded is None or self.passage.end < len(self.decoded[0])
        )

    @property
    def key(self) -> EntryKey:
        """The entry this hit is (the source's whole text, or one passage)."""
        return entry_keys.entry_key(self.pk, self.passage)

    @cached_property
    def text(self) -> str:
        """The generated form, or the passage's text, rendered when first read: a prompt
        block shows messages, not passages, and a search returns few of its candidates."""
        if self.passage is None or self.window is None:
            return self.form
        return passages.render_stored(self.raw, self.passage, self.window, self.decoded)


def make_hit(
    score: float,
    key: int,
    row: ShownSource,
    window: Window,
    decoded: dict[tuple[int, int], passages.Decoded] | None = None,
) -> Hit:
    """A hit of an entry (`key`) of the source `row` (a passage's text is rendered from the
    stored conversation when read). `decoded`: the conversations decoded for the hits of one
    search so far, by source and revision (a long session's stored form is decoded once,
    not once per passage)."""
    rng = entry_keys.range_of(key)
    if rng is None:
        return Hit(row.pk, row.source_id, row.revision, score, row.generated_form, row.save_intent)
    held = decoded if decoded is not None else {}
    at = (row.pk, row.revision)
    if at not in held:
        held[at] = Body.decoded(row.raw)
    return Hit(
        row.pk,
        row.source_id,
        row.revision,
        score,
        "",
        row.save_intent,
        rng,
        row.raw,
        held[at],
        window,
    )


@dataclass(frozen=True)
class MatchRow:
    """A source matching a query whatever its state (for explanations), with its score."""

    source_id: str
    revision: int
    classification: str
    state: str
    score: float
    hold_reason: str = ""  # why what it says held it for review (kept once reviewed)

    @property
    def pending_hold_reason(self) -> str:
        """Its hold reason while it waits for review ("" once reviewed, or never held)."""
        return self.hold_reason if self.state == State.PENDING_REVIEW.value else ""

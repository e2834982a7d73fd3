"""Prompt assembly: the block an agent injects, chosen from a query's ranked passages and
memories within a token budget, and rendered so that no memory text can pass for its
structure.

The rest of the runtime enters through this module only (`tests/unit/test_layers.py`):
`assemble` makes a `PromptBlock` from `Candidate`s (`candidates_for` says how many to rank
for a budget; `dated` adds what a plain-text memory's date and supersession say), and a block
cites `Cited` runs of messages, a long message by its `Part` (`best_part`: the part of a long
message that shares the most of a query's words).

Inside: `block.py` chooses messages within the budget, `first_pick.py` and `passage_picks.py`
say what of each passage is looked at first, `message_parts.py` cuts long messages,
`prompt_render.py` writes the block's text (its only writer). Assembly stands on storage and
the domain's rules; it never imports retrieval (the use case hands it the hits' passages).
"""

from runtime_svc.assembly.block import Cited, Count, PromptBlock, assemble, candidates_for
from runtime_svc.assembly.candidates import Candidate, Conversation
from runtime_svc.assembly.message_parts import best_part, shared
from runtime_svc.assembly.prompt_render import FOOTER, HEADER
from runtime_svc.assembly.said import dated
from runtime_svc.domain.passages import Part

__all__ = [
    "FOOTER",
    "HEADER",
    "Candidate",
    "Cited",
    "Conversation",
    "Count",
    "Part",
    "PromptBlock",
    "assemble",
    "best_part",
    "candidates_for",
    "dated",
    "shared",
]

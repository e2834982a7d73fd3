"""Audit receipts: one hash chain per tenant.

Each receipt's hash is SHA-256 over its canonical fields and its predecessor's hash, so
changing, removing or reordering any stored receipt breaks verification from there on.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from enum import StrEnum


class Action(StrEnum):
    """What a receipt records (stored as its value: the hash chain depends on it)."""

    THREAD_MEMORY_MODE_SET = "thread_memory_mode.set"
    MEMORY_INSERT = "memory.insert"
    MESSAGES_APPEND = "memory.messages.append"
    INSERT_POLICY_SET = "insert_policy.set"
    CLASSIFICATION_SET = "source.classification.set"
    REVIEW_APPROVE = "memory.review.approve"
    REVIEW_REJECT = "memory.review.reject"
    OWNER_KEY_REGISTER = "owner_key.register"
    OWNER_KEY_REVOKE = "owner_key.revoke"
    FOREIGN_SOURCE_DENY = "foreign_source.deny"
    FOREIGN_SOURCE_ADMIT = "foreign_source.admit"
    SOURCE_REVOKE = "source.revoke"
    ASSENT_REVOKE = "assent.revoke"
    ASSENT_INVALIDATE = "assent.invalidate"
    SOURCE_ERASE = "source.erase"
    FACT_RETRACT = "fact.retract"
    SOURCE_ERASE_FINISH = "source.erase.finish"  # its bytes left the database's files
    SOURCE_TURNS_ERASE = "source.turns.erase"  # one principal's appended turns erased


@dataclass(frozen=True)
class Receipt:
    receipt_id: str
    sequence: int
    at_us: int
    action: str
    target_kind: str
    target_id: str
    target_revision: int
    principal_id: str
    request_id: str
    prev_hash: str = ""
    hash: str = ""
    # An insert's save-intent claim (see `Claim`).
    save_intent: str = ""
    save_intent_held: bool = False
    # A partial erasure's counts (see `Erased`).
    turns_erased: int = 0
    messages_erased: int = 0


@dataclass(frozen=True)
class Erased:
    """What a partial erasure's receipt records: how many turns and messages it erased."""

    turns: int
    messages: int


@dataclass(frozen=True)
class Claim:
    """What an insert's receipt records of its save intent: the marker the caller claimed
    ("" for none), and whether the claim was held (not trusted for the caller)."""

    save_intent: str
    held: bool


_FIELDS = tuple(f.name for f in fields(Receipt))
# Fields added after receipts were first chained: hashed only when set, so every receipt
# stored before them keeps its hash.
_HASHED_WHEN_SET = ("save_intent", "save_intent_held", "turns_erased", "messages_erased")


def compute_hash(receipt: Receipt, tenant_id: str) -> str:
    # The receipt's fields as `asdict` gives them (all are flat values), without its hash.
    values = {name: getattr(receipt, name) for name in _FIELDS}
    for name in _HASHED_WHEN_SET:
        if not values[name]:
            del values[name]
    values["hash"] = ""
    values["tenant_id"] = tenant_id
    canonical = json.dumps(values, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def link(receipt: Receipt, tenant_id: str, prev_hash: str) -> Receipt:
    linked = replace(receipt, prev_hash=prev_hash)
    return replace(linked, hash=compute_hash(linked, tenant_id))


@dataclass(frozen=True)
class Verification:
    ok: bool
    length: int
    head_hash: str
    first_invalid_sequence: int = 0


def verify(
    receipts: Iterable[Receipt], tenant_id: str, *, head_sequence: int, head_hash: str
) -> Verification:
    """Walks the chain in sequence order and checks that it ends at the recorded head.

    Stops at the first receipt that does not verify; a chain cut short or extended behind
    the head's back fails too.
    """
    prev_hash, expected_sequence, length = "", 1, 0
    for r in receipts:
        if (
            r.sequence != expected_sequence
            or r.prev_hash != prev_hash
            or r.hash != compute_hash(r, tenant_id)
        ):
            return Verification(False, length, prev_hash, first_invalid_sequence=expected_sequence)
        prev_hash, expected_sequence, length = r.hash, expected_sequence + 1, length + 1
    if length != head_sequence or prev_hash != head_hash:
        return Verification(False, length, prev_hash, first_invalid_sequence=length + 1)
    return Verification(True, length, prev_hash)

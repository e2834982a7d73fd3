"""Audit receipts: one hash chain per tenant.

Each receipt's hash is SHA-256 over its canonical fields and its predecessor's hash, so
changing, removing or reordering any stored receipt breaks verification from there on.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace


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


def compute_hash(receipt: Receipt, tenant_id: str) -> str:
    fields = asdict(replace(receipt, hash=""))
    fields["tenant_id"] = tenant_id
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"))
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

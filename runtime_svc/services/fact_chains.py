"""The one writer of fact chains: relinks the statements of attributes whose statements
changed (a fact stored, its source's eligibility changed, a source purged, a fact
retracted), in the transaction of that change.

The links are computed by the pure `domain.fact_chains.chain` from what is stored, so a
relink after any sequence of changes gives the same chains as one from scratch; only the
links that differ are written.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection

from runtime_svc.domain import fact_chains
from runtime_svc.domain.attributes import AttributeKey
from runtime_svc.domain.fact_chains import Link
from runtime_svc.storage.fact_links import ChainRow
from runtime_svc.storage.transaction import Transaction


def relink(tx: Transaction, keys: Collection[AttributeKey], without_source: str = "") -> None:
    """Recomputes the chains of `keys`; the statements of `without_source` (a source being
    purged) take no part."""
    groups: dict[AttributeKey, list[ChainRow]] = defaultdict(list)
    for row in tx.fact_links.rows(keys, without_source):
        groups[row.key].append(row)
    changed: list[tuple[int, Link]] = []
    for rows in groups.values():
        links = fact_chains.chain(r.statement for r in rows)
        changed += [
            (r.pk, links[r.statement.fact_id]) for r in rows if links[r.statement.fact_id] != r.link
        ]
    tx.fact_links.save(changed)


def relink_source(tx: Transaction, source_id: str, *, without: bool = False) -> None:
    """Recomputes the chains the source's statements are in (`without`: leaving them out,
    before they are purged)."""
    keys = tx.fact_links.keys_for_source(source_id)
    relink(tx, keys, source_id if without else "")

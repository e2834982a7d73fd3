"""The statements that read a tenant's postings into memory (`retrieval.held.held_postings`)."""

from __future__ import annotations

from sqlalchemy import bindparam, literal_column, select
from sqlalchemy.sql.elements import ColumnClause

from runtime_svc.storage.models import SearchPosting, SearchTerm, TenantState

postings = SearchPosting.__table__
state = TenantState.__table__
terms = SearchTerm.__table__
# The row marking an entry (the empty word), as a literal: the stamp's partial index is used
# only when the statement says `term = ''` itself.
ENTRY: ColumnClause[str] = literal_column("''")

LAST_STAMP = select(state.c.index_stamp, state.c.words_removed_at).where(
    state.c.tenant_id == bindparam("tenant_id")
)
WORDS = select(terms.c.term).where(terms.c.tenant_id == bindparam("tenant_id"))
ENTRIES = select(postings.c.pk, postings.c.eligible).where(
    postings.c.tenant_id == bindparam("tenant_id"), postings.c.term == ENTRY
)
CHANGED = select(postings.c.pk, postings.c.eligible).where(
    postings.c.tenant_id == bindparam("tenant_id"),
    postings.c.term == ENTRY,
    postings.c.stamp > bindparam("after"),
)
ALL_WORDS = (
    select(postings.c.term, postings.c.pk, postings.c.impact)
    .where(postings.c.tenant_id == bindparam("tenant_id"), postings.c.term != ENTRY)
    .order_by(postings.c.term)
)
WORDS_BY_DOCS = (
    select(terms.c.term)
    .where(terms.c.tenant_id == bindparam("tenant_id"), terms.c.term != ENTRY)
    .order_by(terms.c.docs.desc())
)
WORD = select(postings.c.pk, postings.c.impact).where(
    postings.c.tenant_id == bindparam("tenant_id"), postings.c.term == bindparam("term")
)
POSTINGS_OF = select(postings.c.pk, postings.c.term, postings.c.impact).where(
    postings.c.pk.in_(bindparam("keys", expanding=True)),
    # Through the primary key (entry, word), not the tenant's index.
    postings.c.tenant_id.concat("") == bindparam("tenant_id"),
)

"""The semantic side: a tenant's vectors ranked by cosine similarity (in memory, in SQL,
through a coarse pass over held signatures or int8 codes, or pgvector's HNSW index)."""

"""The embedding models (`retrieval.embeddings` names which), and the cache of query
vectors."""

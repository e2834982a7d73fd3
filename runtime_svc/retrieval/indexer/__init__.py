"""The background indexer: the queued sources embedded off the write path and their
vectors stored."""

"""The lexical side: BM25 over the search index's postings in its tables, the query's
statistics, and every match of a query for an explanation."""

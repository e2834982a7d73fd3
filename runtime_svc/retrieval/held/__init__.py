"""Large tenants' postings held in memory (`Mirrors`), kept up to date with every writer
through the index stamps, and the rankers over them."""

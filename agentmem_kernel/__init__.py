"""Pieces both services share: the error catalog, field validation, configuration."""

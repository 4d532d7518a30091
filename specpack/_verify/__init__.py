"""Proving a rebuild is identical: traces, their comparison, and ``verify``."""

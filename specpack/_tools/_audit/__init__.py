"""``specpack audit``: find every env and wrapper of a registry that does not survive a process
(docs/audit.md). This package imports none of its modules: the CLI parsers import :mod:`.options`
alone."""

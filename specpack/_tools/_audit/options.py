"""The audit's option values that the command line shows before any audit runs: apart from
:mod:`.api` so that building ``specpack``'s parsers imports no audit machinery."""

from __future__ import annotations

__all__ = ["DEFAULT_TIMEOUT", "REFERENCES"]

#: Seconds one task may take before its worker is killed: the reference side builds an env
#: three times and rolls it out twice (the repeat control), so this is twice the old 60 s.
DEFAULT_TIMEOUT = 120.0
#: Where the reference side runs (forks of this process, or this process itself).
REFERENCES = ("fork", "here")

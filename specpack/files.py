"""Pack files on disk: :func:`dump`, :func:`load`, :func:`describe`, :func:`read_key` and
:func:`key_id` (their text form is :mod:`specpack._core._fileformat`'s)."""

from __future__ import annotations

from ._core._fileformat.signed import key_id
from ._core._files import describe, dump, load, read_key
from ._core._restorer import claim

__all__ = ["describe", "dump", "key_id", "load", "read_key"]

claim(__name__, globals())  # users import these from here (see specpack._core._restorer)

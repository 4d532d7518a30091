"""Pack files on disk: :func:`dump`, :func:`load`, :func:`describe`, :func:`read_key` and
:func:`key_id` (see :mod:`.io`).

The text form these files hold (manifest schema, signatures, trust policy) is
:mod:`specpack._fileformat`, below the pack module; this package sits above it.
"""

from __future__ import annotations

from .._fileformat.signed import key_id
from .._restorer import claim
from ._io import describe, dump, load, read_key

__all__ = ["describe", "dump", "key_id", "load", "read_key"]

claim(__name__, globals())  # users import these from here (see specpack._restorer)

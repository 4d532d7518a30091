"""Pack files on disk: :func:`dump`, :func:`load`, :func:`describe`, :func:`read_key` and
:func:`key_id` (see :mod:`specpack._core._files`).

The text form these files hold (manifest schema, signatures, trust policy) is
:mod:`specpack._core._fileformat`, below the pack module; this module sits above it.
"""

from __future__ import annotations

from ._core._fileformat.signed import key_id
from ._core._files import describe, dump, load, read_key
from ._core._restorer import claim

__all__ = ["describe", "dump", "key_id", "load", "read_key"]

claim(__name__, globals())  # users import these from here (see specpack._core._restorer)

"""Names that pickles made by specpack 0.1.0 refer to (``specpack._values.Blob``, ...).

Kept so that packs pickled by 0.1.0 still load; new pickles name :mod:`specpack._carry.values`.
Nothing else imports this module.
"""

from __future__ import annotations

from ._carry.values import Blob, EnumRef, _rebuild_array

__all__ = ["Blob", "EnumRef", "_rebuild_array"]

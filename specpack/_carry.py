"""Names that pickles made by specpack 0.1.0 refer to (``specpack._carry.CodeRef``).

Kept so that packs pickled by 0.1.0 (as Ray and SB3 store them) still load; new pickles name
:mod:`specpack.carry.code`. Nothing else imports this module.
"""

from __future__ import annotations

from .carry.code import CodeRef

__all__ = ["CodeRef"]

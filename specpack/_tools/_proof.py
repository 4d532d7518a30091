"""How a pack proves itself: verify (two builds here), seal and check (a reference rollout
carried in the pack, compared wherever it is rebuilt).

:class:`~specpack.SpecPack`'s ``verify``, ``seal`` and ``check`` call these functions; the
machinery is :mod:`specpack._tools._verify` and :mod:`specpack._tools._seal`, imported on first use.
Nothing here imports the pack module at load time.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .._core._errors import SpecPackError

if TYPE_CHECKING:
    from .._core._packvalue import PackValue
    from .._core._sealed import Seal
    from ._verify.check_report import CheckReport
    from ._verify.engine import SpecPack as Provable
    from ._verify.report import VerifyReport

__all__ = ["check", "seal", "verify"]


def verify(pack: Provable, *, steps: int, seed: int, where: Any, check: bool, timeout: float,
           ignore_info: Iterable[str]) -> VerifyReport:
    """``pack.verify(...)``: :func:`specpack.verify` of the pack."""
    from ._verify.engine import verify as run

    return run(pack, steps=steps, seed=seed, where=where, check=check, timeout=timeout,
               ignore_info=ignore_info)


def seal(pack: PackValue, *, steps: int, seed: int, timeout: float,
         ignore_info: Iterable[str]) -> Seal:
    """The seal of ``pack``: a reference rollout made in a fresh interpreter."""
    from ._seal import make_seal

    return make_seal(pack, steps=steps, seed=seed, timeout=timeout, ignore_info=ignore_info)


def check(pack: PackValue, *, where: str | None, timeout: float) -> CheckReport:
    """``pack.check(...)``: rebuild here and compare with the pack's seal."""
    if pack.sealed is None:
        raise SpecPackError(
            f"pack {pack.label} holds no seal to check against; seal it where it was "
            "captured with sealed = pack.seal(steps=100, seed=0) and check that pack")
    from ._seal import check_seal

    if where is None:  # check_seal's own default
        return check_seal(pack, pack.sealed, timeout=timeout)
    return check_seal(pack, pack.sealed, where=where, timeout=timeout)

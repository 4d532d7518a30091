"""The public face of the seal: :func:`specpack.seal` (a reference rollout kept in the pack)
and :func:`specpack.check` (a rebuild anywhere, compared with it); see ``_seal``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .._core._errors import SpecPackError
from .._core._keywords import checked_keywords
from ._seal import check_seal, make_seal
from ._verify.engine import check_pack

if TYPE_CHECKING:
    from .._core._pack import SpecPack
    from ._verify.check_report import CheckReport

__all__ = ["check", "seal"]


@checked_keywords
def seal(pack: SpecPack, steps: int = 100, seed: int = 0, *, timeout: float = 120.0,
         ignore_info: Iterable[str] = ()) -> SpecPack:
    """A copy of ``pack`` (same fingerprint) holding its own proof in ``sealed``: the per-step
    digests of a seeded rollout made in a fresh interpreter, which :func:`specpack.check`
    compares a rebuild with anywhere later (docs/another-machine.md).

    Parameters
    ----------
    pack
        The pack to seal (a :class:`~specpack.SpecPack`; ``pack`` itself is not changed).
    steps, seed
        The seeded rollout recorded (the same actions on every later check).
    timeout
        Seconds for the reference rollout.
    ignore_info
        ``info`` keys left out of the seal, and so of every check (wall-clock times).

    Returns
    -------
    SpecPack
        ``pack`` with ``sealed`` set: dump it, and check it where it is loaded.

    Raises
    ------
    ArgumentTypeError
        ``pack`` is not a :class:`~specpack.SpecPack` (an id, a class, a live env: capture it
        first, ``specpack.seal(specpack.capture("CartPole-v1"))``).
    BuildError
        The pack could not be built, or its interpreter died or timed out.
    SpecPackError
        Bad options; or the rollout raised, or returned a value with no exact encoding.
    """
    check_pack(pack, "specpack.seal")
    return pack.evolve(sealed=make_seal(pack, steps=steps, seed=seed, timeout=timeout,
                                        ignore_info=ignore_info))


@checked_keywords
def check(pack: SpecPack, *, where: str | None = None, timeout: float = 120.0) -> CheckReport:
    """Rebuild ``pack`` and compare it with the rollout recorded where it was sealed
    (:func:`specpack.seal`); the report is truthy only when identical, else names the first
    differing step and field.

    Parameters
    ----------
    pack
        A sealed :class:`~specpack.SpecPack` (``specpack.seal(pack)``, or a pack file written
        from one).
    where
        Where the rebuild runs: ``"subprocess"`` (the default: a fresh interpreter of this
        machine under the seal's ``PYTHONHASHSEED``; this process runs none of the env's code),
        ``"here"`` (a thread of this process: it sees this process's state), ``"spawn"`` or
        ``"forkserver"``.
    timeout
        Seconds for the rebuild and rollout.

    Returns
    -------
    CheckReport
        Truthy only when the layers, spaces and every digest of the rollout match.

    Raises
    ------
    ArgumentTypeError
        ``pack`` is not a :class:`~specpack.SpecPack`.
    SpecPackError
        The pack holds no seal: make one with ``specpack.seal(pack)``.
    """
    check_pack(pack, "specpack.check")
    sealed = pack.sealed
    if sealed is None:
        raise SpecPackError(
            f"pack {pack.label} holds no seal to check against; seal it where it was "
            "captured with sealed = specpack.seal(pack, steps=100, seed=0) and check that pack")
    return check_seal(pack, sealed, where="subprocess" if where is None else where,
                      timeout=timeout)

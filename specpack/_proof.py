"""How a pack proves itself: :meth:`verify` (two builds here), :meth:`seal` and :meth:`check`
(a reference rollout carried in the pack, compared wherever it is rebuilt).

Mixed into :class:`~specpack.SpecPack`; the machinery is :mod:`specpack._verify` and
:mod:`specpack._seal`. Nothing here imports the pack module.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from ._deprecated import positional
from .errors import SpecPackError

if TYPE_CHECKING:
    from ._process import Boundary
    from ._seal import CheckReport, Seal
    from ._verify.report import VerifyReport
    from .pack import SpecPack

__all__ = ["ProofFace"]


class ProofFace:
    """The proving methods of a pack (its fields are read through the pack's own slots)."""

    __slots__ = ()
    sealed: Seal | None

    @property
    def label(self) -> str:  # the pack's own
        raise NotImplementedError

    def _evolve(self, **changes: Any) -> Any:  # the pack's own
        raise NotImplementedError

    def verify(
        self,
        *args: Any,
        steps: int = 100,
        seed: int = 0,
        where: Boundary = "subprocess",
        check: bool = False,
        timeout: float = 120.0,
        ignore_info: Iterable[str] = (),
    ) -> VerifyReport:
        """Rebuild in a fresh interpreter and compare with a rebuild here: :func:`specpack.verify`.

        Truthy only when both rollouts completed, were compared and matched.

        Parameters
        ----------
        steps, seed
            The seeded rollout both sides run (same actions on both sides).
        where
            ``"subprocess"`` (a fresh ``python``), ``"spawn"`` or ``"forkserver"``.
        check
            Raise :class:`~specpack.errors.NotIdenticalError` instead of returning a falsy
            report.
        timeout
            One deadline, in seconds, for the whole call (every side, and the comparison).
        ignore_info
            ``info`` keys left out of the comparison (wall-clock times in episode
            statistics); the report lists them.
        """
        from ._verify.engine import verify

        flags = positional(args, ("steps", "seed", "where", "check", "timeout"), "pack.verify()",
                           {"steps": steps, "seed": seed, "where": where, "check": check,
                            "timeout": timeout})
        return verify(cast("SpecPack", self), **flags, ignore_info=ignore_info)

    def seal(self, steps: int = 100, seed: int = 0, *, timeout: float = 120.0,
             ignore_info: Iterable[str] = ()) -> Any:
        """This pack holding its own proof: a reference rollout made in a fresh interpreter.

        The returned pack (same fingerprint) carries per-step digests of a seeded rollout
        (``pack.sealed``); :meth:`check`, anywhere it is run later (another machine, a
        container, another version), rebuilds and compares with them. Dump it to a file to
        take the proof along::

            sealed = specpack.capture("CartPole-v1").seal(steps=100, seed=0)
            specpack.dump(sealed, "cartpole.specpack")

        Returns
        -------
        SpecPack
            A new pack, the same fingerprint, ``sealed`` set.

        Parameters
        ----------
        steps, seed
            The seeded rollout recorded (the same actions on every later check).
        timeout
            Seconds for the reference rollout.
        ignore_info
            ``info`` keys left out of the seal (wall-clock times in episode statistics); the
            seal records them, so every check leaves out the same ones.
        """
        from ._seal import make_seal

        return self._evolve(seal=make_seal(self, steps=steps, seed=seed, timeout=timeout,
                                           ignore_info=ignore_info))

    def check(self, *, where: str | None = None, timeout: float = 120.0) -> CheckReport:
        """Rebuild here and compare with the sealed reference rollout (see :meth:`seal`).

        Unlike :meth:`verify`, which compares two builds on this machine, this compares with
        the rollout recorded where the pack was sealed. The report is truthy only when
        identical; it names the first differing step and field.

        Parameters
        ----------
        where
            Where the rebuild runs (as :func:`specpack._seal.check_seal` takes it; ``None``:
            its default).
        timeout
            Seconds for the rebuild and rollout.

        Example::

            pack = specpack.load("cartpole.specpack")   # sealed elsewhere
            report = pack.check()
            assert report, report                        # names the first differing step

        Raises
        ------
        SpecPackError
            The pack holds no seal: make one with ``pack.seal()``.
        """
        if self.sealed is None:
            raise SpecPackError(
                f"pack {self.label} holds no seal to check against; seal it where it was "
                "captured with sealed = pack.seal(steps=100, seed=0) and check that pack")
        from ._seal import check_seal

        if where is None:  # check_seal's own default
            return check_seal(self, self.sealed, timeout=timeout)
        return check_seal(self, self.sealed, where=where, timeout=timeout)

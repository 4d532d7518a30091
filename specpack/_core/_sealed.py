"""The :class:`Seal` value a sealed pack carries: plain data importing no tool, so a process
that unpickles a sealed pack loads nothing more (:mod:`specpack._tools._seal` makes seals)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._errors import PackFormatError, SpecPackError
from ._restorer import restorer

__all__ = ["Seal", "restore_seal"]


@dataclass(frozen=True)
class Seal:
    """The digests of one seeded rollout of a pack, made in a fresh interpreter.

    Attributes
    ----------
    steps, seed
        The rollout: ``reset(seed=seed)``, then ``steps`` actions planned from a seeded copy
        of the action space.
    fields
        The fields of a step event, in the order of its digests.
    digests
        One tuple per event: its name (``"reset 0"``, ``"step 17"``), then one sha256 per
        field (a step: ``fields``; a reset: observation, info).
    layers
        The env's wrapper layers, outermost first.
    spaces
        The sha256 of the spaces' descriptions (before and after the first reset).
    made_with
        The versions the rollout ran under (Python, platform, specpack, the libraries, the
        distributions of ``requires`` and ``loaded``) and its ``PYTHONHASHSEED``.
    ignore_info
        ``info`` keys left out of the digests (a check leaves out the same).
    loaded
        The distributions the rollout's interpreter loaded (sorted; empty in older seals).
    """

    steps: int
    seed: int
    fields: tuple[str, ...]
    digests: tuple[tuple[str, ...], ...] = field(repr=False)
    layers: tuple[str, ...]
    spaces: str
    made_with: Mapping[str, str] = field(hash=False)
    ignore_info: tuple[str, ...] = ()
    loaded: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        s = object.__setattr__
        for name in ("steps", "seed"):
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                raise SpecPackError(f"Seal.{name}={value!r} must be a non-negative int")
        for name in ("fields", "layers", "ignore_info", "loaded"):
            s(self, name, _strings(getattr(self, name), f"Seal.{name}"))
        s(self, "digests", tuple(_strings(d, "Seal.digests[...]") for d in
                                 _sequence(self.digests, "Seal.digests")))
        if type(self.spaces) is not str:
            raise SpecPackError(f"Seal.spaces={self.spaces!r} must be a str (a sha256)")
        if not isinstance(self.made_with, Mapping) or not all(
                type(k) is str and type(v) is str for k, v in self.made_with.items()):
            raise SpecPackError("Seal.made_with must map str to str (name -> version)")
        s(self, "made_with", dict(self.made_with))

    def to_data(self) -> dict[str, Any]:
        """The seal as plain data (ints, strings, tuples, a dict) for a pack file (``loaded``
        only when not empty: seals made before it existed read and write as they did)."""
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["made_with"] = dict(self.made_with)
        if not self.loaded:
            del data["loaded"]
        return data

    def __reduce__(self) -> tuple[Any, ...]:
        return (restore_seal, (self.to_data(),))

    @classmethod
    def from_data(cls, data: Any) -> Seal:
        """The seal of :meth:`to_data`'s output, every part checked.

        Raises
        ------
        PackFormatError
            ``data`` is not a seal's data.
        """
        if type(data) is not dict:
            raise PackFormatError(f"the seal must be a dict, not {type(data).__name__}")
        extra = sorted(map(str, set(data) - set(cls.__dataclass_fields__)))
        if extra:
            raise PackFormatError(f"the seal holds unknown fields {extra}")
        try:
            return cls(**data)
        except (SpecPackError, TypeError) as e:
            raise PackFormatError(f"the seal is malformed: {e}") from None


@restorer
def restore_seal(data: dict[str, Any]) -> Seal:
    """A pickled :class:`Seal`."""
    return Seal.from_data(data)


def _sequence(value: Any, what: str) -> tuple[Any, ...]:
    if type(value) not in (list, tuple):
        raise SpecPackError(f"{what} must be a tuple, not {type(value).__name__}")
    return tuple(value)


def _strings(value: Any, what: str) -> tuple[str, ...]:
    items = _sequence(value, what)
    if not all(type(v) is str for v in items):
        raise SpecPackError(f"{what} must hold only strings")
    return items

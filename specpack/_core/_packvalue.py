"""The fields of a pack, declared once: the value :class:`~specpack.SpecPack` adds its methods
to; the modules working on a pack's fields take a :class:`PackValue`, not the pack module."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import InitVar, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from ._carry.carried import Blob
from ._carry.ref import CodeRef, iter_carried
from ._carry.tree import is_plain, materialize
from ._layer import Layer

if TYPE_CHECKING:
    from ._assets import Asset
    from ._sealed import Seal
    from ._surface import Surface

__all__ = ["PackValue", "carried_by"]


_P = TypeVar("_P", bound="PackValue")


class _Referable:
    """A slot for weak references: what is derived from a pack is kept beside it."""

    __slots__ = ("__weakref__",)


@dataclasses.dataclass(frozen=True, slots=True, eq=False, repr=False, kw_only=True)
class PackValue(_Referable):
    """A pack's fields and what reads them (:class:`~specpack.SpecPack` documents each)."""

    # The fields, in the order of the pickled state (append only: see specpack._core._state).
    backend: str
    id: str | None
    entry_point: CodeRef
    _kwargs: dict[str, Any]
    spec: Mapping[str, Any]
    layers: tuple[Layer, ...]
    auto_render: bool
    versions: Mapping[str, str]
    notes: tuple[str, ...] = ()
    vector: bool = False
    surface: Surface | None = None
    _requires: Mapping[str, str] = field(default_factory=dict)
    assets: tuple[Asset, ...] = ()
    sealed: Seal | None = None
    #: Whether ``_kwargs`` hold only immutable builtins (computed when not given).
    plain: InitVar[bool | None] = None
    # Derived from ``_kwargs`` by __post_init__ (its one write: no default to write first).
    _plain: bool = field(init=False, compare=False, repr=False)

    def __post_init__(self, plain: bool | None) -> None:
        # Mappings: always the pack's own read-only copy; a tuple or bool given as one is kept.
        s = object.__setattr__
        s(self, "spec", MappingProxyType(dict(self.spec)))  # a dict given stays the caller's
        if type(self.layers) is not tuple:
            s(self, "layers", tuple(self.layers))
        if type(self.auto_render) is not bool:
            s(self, "auto_render", bool(self.auto_render))
        s(self, "versions", MappingProxyType(dict(self.versions)))
        if type(self.notes) is not tuple:
            s(self, "notes", tuple(self.notes))
        if type(self.vector) is not bool:
            s(self, "vector", bool(self.vector))
        s(self, "_requires", MappingProxyType(dict(self._requires)))
        if type(self.assets) is not tuple:
            s(self, "assets", tuple(self.assets))
        s(self, "_plain", plain if plain is not None else all(map(is_plain, self._kwargs.values())))

    @classmethod
    def _of(cls: type[_P], fields: Mapping[str, Any], requires: dict[str, str]) -> _P:
        """``cls(**fields, _requires=requires)`` for ``fields`` naming each field but ``surface``,
        ``assets`` and ``sealed`` (a capture's draft): the same value in under half the time
        (every first capture makes one): no keywords bound, no field set twice, and the
        ``spec``, ``versions`` and ``requires`` dicts taken over, not copied (a draft's are made
        for it, and nothing writes them). :data:`_SLOTS` keeps it to the declared fields."""
        self = _new(cls)
        backend, id_, entry, kwargs, spec, layers, auto_render, versions, notes, vector, \
            surface, _requires, assets, sealed, plain = _SLOTS
        backend(self, fields["backend"])
        id_(self, fields["id"])
        entry(self, fields["entry_point"])
        kw = fields["_kwargs"]
        kwargs(self, kw)
        spec(self, MappingProxyType(fields["spec"]))
        value = fields["layers"]
        layers(self, value if type(value) is tuple else tuple(value))
        value = fields["auto_render"]
        auto_render(self, value if type(value) is bool else bool(value))
        versions(self, MappingProxyType(fields["versions"]))
        value = fields["notes"]
        notes(self, value if type(value) is tuple else tuple(value))
        value = fields["vector"]
        vector(self, value if type(value) is bool else bool(value))
        surface(self, None)
        _requires(self, MappingProxyType(requires))
        assets(self, ())
        sealed(self, None)
        plain(self, all(map(is_plain, kw.values())))
        return self

    @property
    def kwargs(self) -> Mapping[str, Any]:
        """The env constructor kwargs: a read-only mapping of fresh copies, exact types kept
        (imports referenced code and unpickles by-value values: see docs/security.md)."""
        return MappingProxyType(materialize(self._kwargs))

    @property
    def requires(self) -> Mapping[str, str]:
        """``{distribution: version}`` that must be installed where the pack is built (decided
        at capture; ``make()`` refuses a missing one: docs/how-it-works.md)."""
        return self._requires

    @property
    def max_episode_steps(self) -> int | None:
        """The episode limit of the outermost ``TimeLimit`` layer (as ``env.spec`` reports)."""
        for layer in self.layers:
            if (layer.name == "TimeLimit" and layer.cls.module.startswith(("gymnasium.", "gym."))
                    and "max_episode_steps" in layer._kwargs):
                value = layer._kwargs["max_episode_steps"]
                return value if type(value) is int else None
        return None

    @property
    def nondeterministic(self) -> bool:
        """The spec's ``nondeterministic`` flag (verify skips the rollout comparison then)."""
        return bool(self.spec.get("nondeterministic", False))

    @property
    def label(self) -> str:
        """A short human name: the id, else the entry point's qualified name."""
        return self.id if self.id is not None else self.entry_point.name

    @property
    def observation_space(self) -> Any:
        """The observation space recorded at capture (a fresh copy), or None if not recorded."""
        return None if self.surface is None else copy.deepcopy(self.surface.observation_space)

    @property
    def action_space(self) -> Any:
        """The action space recorded at capture (a fresh copy), or None if not recorded."""
        return None if self.surface is None else copy.deepcopy(self.surface.action_space)

    @property
    def metadata(self) -> Mapping[str, Any] | None:
        """The env's ``metadata`` recorded at capture (read-only), or None if not recorded."""
        return None if self.surface is None else MappingProxyType(self.surface.metadata)

    @property
    def render_mode(self) -> str | None:
        """The env's ``render_mode`` recorded at capture (None also when not recorded)."""
        return None if self.surface is None else self.surface.render_mode

    def carried(self) -> Iterator[CodeRef | Blob]:
        """Every piece of code and opaque object the pack carries (entry point first)."""
        return carried_by(self.entry_point, self._kwargs, self.layers)


#: The slot setters of :meth:`PackValue._of`, in the order of the fields (checked here: a field
#: added to PackValue fails the import until ``_of`` sets it too).
_FIELDS = ("backend", "id", "entry_point", "_kwargs", "spec", "layers", "auto_render", "versions",
           "notes", "vector", "surface", "_requires", "assets", "sealed", "_plain")
if tuple(f.name for f in dataclasses.fields(PackValue)) != _FIELDS:  # pragma: no cover
    raise AssertionError("PackValue's fields changed: update PackValue._of and _FIELDS")
_SLOTS = tuple(getattr(PackValue, name).__set__ for name in _FIELDS)
_new = object.__new__


def carried_by(entry_point: CodeRef, kwargs: dict[str, Any],
               layers: tuple[Layer, ...]) -> Iterator[CodeRef | Blob]:
    """The code and opaque objects of an entry point, its kwargs and its wrapper layers."""
    yield entry_point
    yield from iter_carried(kwargs)
    for layer in layers:
        yield layer.cls
        yield from iter_carried(layer._kwargs)

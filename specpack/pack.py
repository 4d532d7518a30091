"""The :class:`SpecPack` value: everything needed to rebuild one env, resolved and carried.

A pack is immutable and self-contained. It holds the entry point (a
:class:`~specpack.carry.CodeRef`, by reference or by value), the constructor kwargs (a private
deep copy), the spec metadata the env sees as ``env.spec``, and the wrapper stack as a tuple of
:class:`Layer` from the outermost wrapper inwards. Nothing in it refers to the registry or to
modules a worker would have to pre-import.

Its identity (``fingerprint``, ``==``, ``hash``) comes from its own fields in canonical typed
JSON; nothing is imported or unpickled to compute it. It pickles with plain ``pickle`` through
a ``__reduce__`` that names only specpack itself. Its other faces live below this module: its
text form (:mod:`specpack._fileface`), how it builds (:mod:`specpack._build`) and its
recorded surface (:mod:`specpack._surface`).
"""

from __future__ import annotations

import hashlib
import pickle
import sys
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ._assets import Asset
from ._build import BuildFace
from ._fileface import FileFace
from ._proof import ProofFace
from ._surface import Surface, SurfaceFace
from ._text import short
from .backends import Blueprint
from .carry.code import CodeRef, code_ref_from_state
from .carry.values import Blob, is_plain, iter_carried, materialize, pickle_exact
from .errors import PackFormatError, SpecPackError
from .layer import Layer

if TYPE_CHECKING:
    from ._seal import Seal
    from .typedjson.encode import Encoder

__all__ = ["FORMAT_VERSION", "Layer", "SpecPack"]

#: Version of a pickled pack's state layout; readers accept every version up to this one
#: (1: specpack 0.1; 2: a tuple of builtins led by the fingerprint; 3: format 2 followed by
#: ``requires``, ``assets`` and ``seal``, as builtins). The JSON manifest has its own version
#: (``fileformat.manifest.FORMAT``).
FORMAT_VERSION = 3



class SpecPack(SurfaceFace, FileFace, BuildFace, ProofFace):
    """How to build one env, resolved in the process where it was known.

    Make one with :func:`specpack.capture`; rebuild with :meth:`make` in any process::

        pack = specpack.capture("CartPole-v1", max_episode_steps=200)
        env = pack.make()                      # here, or in a spawn/forkserver worker
        blob = pickle.dumps(pack)              # plain stdlib pickle

    The pack describes construction, not run-time state: running statistics of a wrapper,
    an episode in progress or an RNG position are not captured (seed with ``reset(seed=...)``).

    What a rebuild elsewhere needs is on the pack too:

    ``requires``
        ``{distribution: version}`` that must be installed where it is built: the
        distributions of the code it names by reference and, once the pack has been built
        (``make()`` in this process, or ``record_spaces=True`` at capture), those whose
        modules the build imported or whose objects the env holds (mujoco for an Ant).
        ``make()`` refuses a missing one (``BuildError`` naming ``pip install
        name==version``) and warns for another version.
    ``assets``
        The files the env is given (:class:`~specpack._assets.Asset`: path, size, sha256,
        carried). ``make()`` checks a file that is not carried (``AssetError`` when missing
        or different) and writes a carried one into a local cache, passing that path.
    ``sealed``
        The reference rollout of :meth:`seal` (``None`` until sealed); :meth:`check` compares
        a rebuild with it.
    """

    __slots__ = (
        "__weakref__",
        "_blueprint",
        "_built",
        "_fingerprint",
        "_kwargs",
        "_plain",
        "_reduced",
        "_requires",
        "_skew_checked",
        "_surface",
        "assets",
        "auto_render",
        "backend",
        "entry_point",
        "id",
        "layers",
        "notes",
        "sealed",
        "spec",
        "vector",
        "versions",
    )

    backend: str
    id: str | None
    entry_point: CodeRef
    _kwargs: dict[str, Any]
    _plain: bool
    spec: Mapping[str, Any]
    layers: tuple[Layer, ...]
    auto_render: bool
    versions: Mapping[str, str]
    notes: tuple[str, ...]
    vector: bool
    _fingerprint: str | None
    _blueprint: Blueprint | None
    _reduced: tuple[Any, ...] | None
    _skew_checked: bool
    _surface: Surface | None
    _requires: Mapping[str, str]
    _built: frozenset[str] | None
    assets: tuple[Asset, ...]
    sealed: Seal | None

    def __init__(
        self,
        *,
        backend: str,
        id: str | None,
        entry_point: CodeRef,
        kwargs: dict[str, Any],
        spec: Mapping[str, Any],
        layers: tuple[Layer, ...],
        auto_render: bool,
        versions: Mapping[str, str] | tuple[tuple[str, str], ...],
        notes: tuple[str, ...] = (),
        plain: bool | None = None,
        vector: bool = False,
        surface: Surface | None = None,
        requires: Mapping[str, str] | None = None,
        assets: Iterable[Asset] = (),
        seal: Seal | None = None,
    ) -> None:
        """Assemble a pack from already lowered parts (use :func:`specpack.capture`)."""
        s = object.__setattr__
        s(self, "backend", backend)
        s(self, "id", id)
        s(self, "entry_point", entry_point)
        s(self, "_kwargs", kwargs)
        s(self, "spec", MappingProxyType(spec if type(spec) is dict else dict(spec)))
        s(self, "layers", tuple(layers))
        s(self, "auto_render", bool(auto_render))
        s(self, "versions", MappingProxyType(dict(versions)))
        s(self, "notes", tuple(notes))
        s(self, "vector", bool(vector))
        s(self, "_plain", all(is_plain(v) for v in kwargs.values()) if plain is None else plain)
        s(self, "_fingerprint", None)
        s(self, "_blueprint", None)
        s(self, "_reduced", None)
        s(self, "_skew_checked", False)
        s(self, "_surface", surface)
        s(self, "_requires", MappingProxyType(dict(requires or {})))
        s(self, "_built", None)
        s(self, "assets", tuple(assets))
        s(self, "sealed", seal)

    # -- value semantics -------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"SpecPack is immutable (cannot set {name!r}); capture again instead")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"SpecPack is immutable (cannot delete {name!r})")

    def __reduce__(self) -> tuple[Any, ...]:
        reduced = self._reduced
        if reduced is None:
            reduced = (_restore, (FORMAT_VERSION, self._state()))
            object.__setattr__(self, "_reduced", reduced)
        return reduced

    def _state(self) -> tuple[Any, ...]:
        """The pickled state: builtins only, led by the fingerprint (see :func:`_restore`)."""
        return (
            self.fingerprint,
            self.backend,
            self.id,
            self.entry_point._state(),
            self._kwargs if self._plain else pickle_exact(self._kwargs),
            pickle_exact(dict(self.spec)),
            tuple((layer.cls._state(), pickle_exact(layer._kwargs)) for layer in self.layers),
            self.auto_render,
            dict(self.versions),
            self.notes,
            self.vector,
            self._surface,
            dict(self.requires),
            tuple(a.state() for a in self.assets),
            None if self.sealed is None else self.sealed.to_data(),
        )

    def _content(self, enc: Encoder) -> dict[str, Any]:
        """The fields that shape the env, as typed JSON (the fingerprint's and manifest's body).

        ``vector`` appears only for a vector-only pack, so that every other pack keeps the
        fingerprint it had before the field existed.
        """
        content = {
            "backend": self.backend,
            "id": self.id,
            "entry_point": enc.value(self.entry_point, 0),
            "kwargs": enc.value(self._kwargs, 0),
            "spec": enc.value(dict(self.spec), 0),
            "layers": [
                {"class": enc.value(layer.cls, 0), "kwargs": enc.value(layer._kwargs, 0)}
                for layer in self.layers
            ],
            "render_wrappers": "make" if self.auto_render else None,
        }
        if self.vector:
            content["vector"] = True
        return content

    @property
    def fingerprint(self) -> str:
        """A stable digest of everything that shapes the env (not versions or notes).

        The assets' paths and digests are in it (another file is another env); ``requires``
        and the seal are not (they describe where and how the env was proven, like
        ``versions``).

        Equal for equal content (``capture(id)`` and ``capture(gymnasium.spec(id))`` agree),
        kept by pickle and JSON round trips, different when anything that shapes the env
        differs (``0``, ``0.0``, ``-0.0`` and ``False`` are different values). Code carried by
        value is hashed by its payload.
        """
        fp = self._fingerprint
        if fp is None:
            # lazy: a worker that unpickles a pack (fingerprint carried) and builds never needs it
            from .typedjson.encode import Encoder, canonical_json

            content = self._content(Encoder(None, canonical=True))
            if self.assets:  # the files' bytes shape the env; absent: the old fingerprints
                content["assets"] = [[a.path, a.kind, a.sha256] for a in self.assets]
            try:
                text = canonical_json(content)
            except RecursionError:
                raise PackFormatError(
                    "the pack's values are nested too deeply to fingerprint") from None
            fp = "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()
            object.__setattr__(self, "_fingerprint", fp)
        return fp

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SpecPack):
            return NotImplemented
        return self is other or self.fingerprint == other.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        stack = "".join(f"{layer.name}<" for layer in self.layers)
        base = self.entry_point.qualname + (" (by value)" if self.entry_point.by_value else "")
        closing = ">" * len(self.layers)
        args = ", ".join(f"{k}={short(v, 60)}" for k, v in self._kwargs.items())
        ident = repr(self.id) if self.id is not None else "None"
        return (
            f"<SpecPack id={ident} {stack}{base}({args}){closing} "
            f"backend={self.backend} (spec only: no run-time state)>"
        )

    # -- reading ---------------------------------------------------------------------------

    @property
    def kwargs(self) -> Mapping[str, Any]:
        """The env constructor kwargs: a read-only mapping of fresh copies, exact types kept.

        Code carried by reference is imported, and by-value code and objects are unpickled,
        to give the real values (see ``docs/security.md`` for what that means for a file).
        """
        return MappingProxyType(materialize(self._kwargs))

    @property
    def max_episode_steps(self) -> int | None:
        """The episode limit of the outermost ``TimeLimit`` layer (as ``env.spec`` reports)."""
        for layer in self.layers:
            if (
                layer.name == "TimeLimit"
                and layer.cls.module.startswith(("gymnasium.", "gym."))
                and "max_episode_steps" in layer._kwargs
            ):
                value = layer._kwargs["max_episode_steps"]
                return value if type(value) is int else None
        return None

    @property
    def nondeterministic(self) -> bool:
        """The spec's ``nondeterministic`` flag (verify skips the rollout comparison then)."""
        return bool(self.spec.get("nondeterministic", False))

    def carried(self) -> Iterator[CodeRef | Blob]:
        """Every piece of code and opaque object the pack carries (entry point first)."""
        yield self.entry_point
        yield from iter_carried(self._kwargs)
        for layer in self.layers:
            yield layer.cls
            yield from iter_carried(layer._kwargs)

    def with_surface(self, surface: Surface) -> SpecPack:
        """This pack with ``surface`` recorded (a new pack; the same fingerprint)."""
        return self._evolve(surface=surface)

    def _evolve(self, **changes: Any) -> SpecPack:
        """A copy of this pack with ``changes`` (constructor arguments) applied."""
        fields: dict[str, Any] = dict(
            backend=self.backend, id=self.id, entry_point=self.entry_point,
            kwargs=self._kwargs, spec=self.spec, layers=self.layers,
            auto_render=self.auto_render, versions=self.versions, notes=self.notes,
            plain=self._plain, vector=self.vector, surface=self._surface,
            requires=self.requires, assets=self.assets, seal=self.sealed,
        )
        fields.update(changes)
        return SpecPack(**fields)

    @property
    def requires(self) -> Mapping[str, str]:
        """``{distribution: version}`` the env needs installed (see the class docstring).

        What a first build in this process imported is resolved to distributions when this
        is read (or the pack pickled or written), not at ``make()``: a worker pays nothing.
        """
        built = self._built
        if not built:
            return self._requires
        from ._provenance import requires_of

        found = requires_of(m for m in built if m in sys.modules)
        merged = MappingProxyType({**found, **self._requires})
        object.__setattr__(self, "_requires", merged)
        object.__setattr__(self, "_built", frozenset())
        return merged

    def _record_build(self, before: set[str], env: Any) -> None:
        """Note, once per process, the modules the first build imported and those of the
        objects the env holds (``requires`` resolves them when read)."""
        modules = set(sys.modules).difference(before)
        node = getattr(env, "unwrapped", env)
        modules.update(c.__module__ for c in type(node).__mro__)
        modules.update(type(v).__module__ for v in list(getattr(node, "__dict__", {}).values()))
        object.__setattr__(self, "_built", frozenset(m for m in modules if isinstance(m, str)))
        object.__setattr__(self, "_reduced", None)  # the pickled state now holds more

    @property
    def label(self) -> str:
        """A short human name: the id, else the entry point's qualified name."""
        return self.id if self.id is not None else self.entry_point.name


#: Recently unpickled packs by everything that differs between two packs' states: the
#: fingerprint (exact for all that shapes the env), the entry point's and layers' code states
#: (which add ``allow`` and the payloads' Python), versions, notes and the recorded surface
#: (spaces, metadata, render mode: not in the fingerprint), by a digest of its pickle. A pack is
#: an immutable value, so every unpickled copy of one can be the same object (Ray and SB3 ship
#: the same pack many times); it then also keeps its build plan. Bounded: cleared past 256.
_unpickled: dict[Any, SpecPack] = {}


def _state_key(state: tuple[Any, ...]) -> Any:
    """The unpickle cache's key of a format-2 or -3 state: strings, bytes and None, so ``==``
    is exact. The fingerprint covers each code state but its Python tag and ``allow`` (added
    when set) and a partial's bound arguments (in the fingerprint); it covers the assets'
    paths and digests but not whether their bytes are carried, nor ``requires`` or the seal,
    which are keyed here by a digest of their pickle."""
    fp, _, _, entry, _, _, layers, _, versions, notes, _, surface = state[:12]
    seen = None if surface is None else hashlib.sha256(pickle.dumps(surface, 5)).digest()
    policy = [c[3:5] for c in (entry, *[c for c, _ in layers]) if c[3] is not None
              or c[4] is not None]
    extra = None
    if len(state) > 12 and any(state[12:]):
        extra = hashlib.sha256(pickle.dumps(state[12:], 5)).digest()
    return (fp, tuple(versions.items()), notes, seen, tuple(policy) if policy else None, extra)


def _seal_from_data(data: dict[str, Any]) -> Seal:
    from ._seal import Seal  # lazy: sealing machinery is not needed to build

    return Seal.from_data(data)


def _restore(fmt: int, state: tuple[Any, ...]) -> SpecPack:
    """Unpickle a pack (``__reduce__``'s counterpart); accepts every known format version."""
    if fmt in (2, 3):
        (fp, backend, id_, entry, kwargs, spec, layers, auto_render, versions, notes,
         vector, surface) = state[:12]
        requires, assets, seal = state[12:15] if fmt == 3 else ({}, (), None)
        try:
            key = _state_key(state)
            hit = _unpickled.get(key)
        except (TypeError, ValueError, RecursionError, pickle.PicklingError):  # not cached
            key, hit = None, None
        if hit is not None:
            return hit
        pack = SpecPack(
            backend=backend,
            id=id_,
            entry_point=code_ref_from_state(entry),
            kwargs=kwargs,
            spec=spec,
            layers=tuple(Layer(code_ref_from_state(c), kw) for c, kw in layers),
            auto_render=auto_render,
            versions=versions,
            notes=notes,
            vector=vector,
            surface=surface,
            requires=requires,
            assets=tuple(Asset.from_state(a) for a in assets),
            seal=None if seal is None else _seal_from_data(seal),
        )
        object.__setattr__(pack, "_fingerprint", fp)
        object.__setattr__(pack, "_reduced", (_restore, (fmt, state)))
        if key is not None:
            if len(_unpickled) >= 256:
                _unpickled.clear()
            _unpickled[key] = pack
        return pack
    if fmt != 1:  # a newer format
        raise SpecPackError(
            f"this pickle holds a pack of format {fmt!r}, but this specpack reads formats up to "
            f"{FORMAT_VERSION}; upgrade specpack"
        )
    backend, id_, entry, kwargs, spec, layers, auto_render, versions, notes = state[:9]
    return SpecPack(
        backend=backend,
        id=id_,
        entry_point=entry,
        kwargs=kwargs,
        spec=spec,
        layers=tuple(layers),
        auto_render=auto_render,
        versions=versions,
        notes=tuple(notes),
        vector=len(state) > 9 and bool(state[9]),
    )


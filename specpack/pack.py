"""The :class:`SpecPack` value: everything needed to rebuild one env, resolved and carried.

A pack is immutable and self-contained. It holds the entry point (by reference or by value),
the constructor kwargs (a private deep copy), the spec metadata the env sees as ``env.spec``,
and the wrapper stack as a tuple of :class:`Layer` from the outermost wrapper inwards. Nothing
in it refers to the registry or to modules a worker would have to pre-import.

It pickles with plain ``pickle`` through a ``__reduce__`` that names only specpack itself, so
it loads in any process that has specpack installed, also one that never imported the env's
module; by-value code is unpickled only when ``make()`` needs it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ._carry import CodeRef
from ._values import is_plain, iter_carried, materialize, pickle_exact
from .errors import SpecPackError

if TYPE_CHECKING:
    from .verify import VerifyReport

__all__ = ["FORMAT_VERSION", "Layer", "SpecPack"]

#: Version of the pack's state layout (pickle and JSON manifest). Readers accept every version
#: up to this one.
FORMAT_VERSION = 1


class Layer:
    """One wrapper of a stack: its class and the constructor kwargs it was built with."""

    __slots__ = ("_kwargs", "cls")

    cls: CodeRef
    _kwargs: dict[str, Any]

    def __init__(self, cls: CodeRef, kwargs: dict[str, Any]) -> None:
        object.__setattr__(self, "cls", cls)
        object.__setattr__(self, "_kwargs", kwargs)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Layer is immutable (cannot set {name!r})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (Layer, (self.cls, pickle_exact(self._kwargs)))

    @property
    def name(self) -> str:
        """The wrapper class's qualified name, e.g. ``TimeLimit``."""
        return self.cls.qualname

    @property
    def kwargs(self) -> Mapping[str, Any]:
        """The constructor kwargs (without ``env``), as a read-only mapping of fresh values."""
        return MappingProxyType(materialize(self._kwargs))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Layer):
            return NotImplemented
        from .codec import encode_value

        return self.cls == other.cls and encode_value(self._kwargs) == encode_value(other._kwargs)

    def __hash__(self) -> int:
        return hash(self.cls)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"Layer({self.cls.name}{', ' if args else ''}{args})"


class SpecPack:
    """How to build one env, resolved in the process where it was known.

    Make one with :func:`specpack.capture`; rebuild with :meth:`make` in any process::

        pack = specpack.capture("CartPole-v1", max_episode_steps=200)
        env = pack.make()                      # here, or in a spawn/forkserver worker
        blob = pickle.dumps(pack)              # plain stdlib pickle

    The pack describes construction, not run-time state: running statistics of a wrapper,
    an episode in progress or an RNG position are not captured (seed with ``reset(seed=...)``).
    """

    __slots__ = (
        "_backend",
        "_cache",
        "_fingerprint",
        "_inner",
        "_kwargs",
        "_plain",
        "_skew_checked",
        "auto_render",
        "backend",
        "entry_point",
        "id",
        "layers",
        "notes",
        "spec",
        "versions",
    )

    backend: str
    id: str | None
    entry_point: CodeRef
    _kwargs: dict[str, Any]
    _cache: dict[str, Any]
    _inner: tuple[Layer, ...]
    _plain: bool
    spec: Mapping[str, Any]
    layers: tuple[Layer, ...]
    auto_render: bool
    versions: Mapping[str, str]
    notes: tuple[str, ...]
    _fingerprint: str | None
    _backend: Any
    _skew_checked: bool

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
        s(self, "_inner", tuple(reversed(self.layers)))
        s(self, "_plain", all(is_plain(v) for v in kwargs.values()) if plain is None else plain)
        s(self, "_fingerprint", None)
        s(self, "_backend", None)
        s(self, "_cache", {})
        s(self, "_skew_checked", False)

    # -- value semantics -------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"SpecPack is immutable (cannot set {name!r}); capture again instead")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"SpecPack is immutable (cannot delete {name!r})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore, (FORMAT_VERSION, self._state()))

    def _state(self) -> tuple[Any, ...]:
        return (
            self.backend,
            self.id,
            self.entry_point,
            self._kwargs if self._plain else pickle_exact(self._kwargs),
            pickle_exact(dict(self.spec)),
            self.layers,
            self.auto_render,
            dict(self.versions),
            self.notes,
        )

    @property
    def fingerprint(self) -> str:
        """A stable digest of everything that shapes the env (not versions or notes).

        Equal for equal content (``capture(id)`` and ``capture(gymnasium.spec(id))`` agree),
        kept by pickle and JSON round trips, different when anything that shapes the env
        differs. Code carried by value is hashed by its payload.
        """
        fp = self._fingerprint
        if fp is None:
            from .codec import content_bytes

            fp = "sha256:" + hashlib.sha256(content_bytes(self)).hexdigest()
            object.__setattr__(self, "_fingerprint", fp)
        return fp

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SpecPack):
            return NotImplemented
        return self.fingerprint == other.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        stack = "".join(f"{layer.name}<" for layer in self.layers)
        base = self.entry_point.qualname + (" (by value)" if self.entry_point.by_value else "")
        closing = ">" * len(self.layers)
        args = ", ".join(f"{k}={_short(v)}" for k, v in self._kwargs.items())
        ident = repr(self.id) if self.id is not None else "None"
        return (
            f"<SpecPack id={ident} {stack}{base}({args}){closing} "
            f"backend={self.backend} (spec only: no run-time state)>"
        )

    # -- reading ---------------------------------------------------------------------------

    @property
    def kwargs(self) -> Mapping[str, Any]:
        """The env constructor kwargs: a read-only mapping of fresh copies, exact types kept."""
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
                return value if isinstance(value, int) else None
        return None

    @property
    def nondeterministic(self) -> bool:
        """The spec's ``nondeterministic`` flag (verify skips the rollout comparison then)."""
        return bool(self.spec.get("nondeterministic", False))

    def carried(self) -> Iterator[CodeRef | Any]:
        """Every piece of code and opaque object the pack carries (entry point first)."""
        yield self.entry_point
        yield from iter_carried(self._kwargs)
        for layer in self.layers:
            yield layer.cls
            yield from iter_carried(layer._kwargs)

    # -- building ----------------------------------------------------------------------------

    def make(self, **kwargs: Any) -> Any:
        """Build the env, in this process, exactly as captured.

        ``kwargs`` are merged over the captured constructor kwargs (e.g.
        ``pack.make(render_mode="rgb_array")``). Works without the registry and without
        pre-importing the env's module. A constructor that raises surfaces as
        :class:`~specpack.errors.BuildError` naming the pack, chained to the original.
        """
        backend = self._backend
        if backend is None:
            from .backends import get_backend

            backend = get_backend(self.backend)
            object.__setattr__(self, "_backend", backend)
        if not self._skew_checked:
            object.__setattr__(self, "_skew_checked", True)
            from .versions import check_skew

            check_skew(self.versions, f"pack {self.label}")
        kw = dict(self._kwargs) if self._plain else materialize(self._kwargs)
        if kwargs:
            kw.update(kwargs)
        return backend.build(self, kw)

    @property
    def label(self) -> str:
        """A short human name: the id, else the entry point's qualified name."""
        return self.id if self.id is not None else self.entry_point.name

    def verify(
        self,
        steps: int = 100,
        seed: int = 0,
        where: str = "subprocess",
        check: bool = False,
        timeout: float = 120.0,
    ) -> VerifyReport:
        """Rebuild in a fresh interpreter and compare with a rebuild here.

        See :func:`specpack.verify.verify_pack`. ``check=True`` raises
        :class:`~specpack.errors.NotIdenticalError` when they differ.
        """
        from .verify import verify_pack

        return verify_pack(self, steps=steps, seed=seed, where=where, check=check, timeout=timeout)

    def register(self, id: str | None = None) -> str:
        """Put this pack into this process's registry under ``id`` (default: ``pack.id``).

        For tools that only take env ids, e.g. inside a worker. Idempotent: registering the
        same pack again under the same id is a no-op; another pack under a taken id raises.
        Returns the id.
        """
        from .backends import get_backend

        return get_backend(self.backend).register(self, id)

    # -- files -----------------------------------------------------------------------------

    def to_json(self, indent: int | None = 2) -> str:
        """The typed, human-readable manifest (see docs/file-format.md)."""
        from .codec import to_json

        return to_json(self, indent=indent)

    @classmethod
    def from_json(cls, text: str | bytes, *, allow: Any = None) -> SpecPack:
        """Read a manifest written by :meth:`to_json` (hand edits welcome if well-formed)."""
        from .codec import from_json

        return from_json(text, allow=allow)


def _short(value: Any, limit: int = 60) -> str:
    """A bounded repr (a 5,000-digit int or a huge array must not flood or break ``repr``)."""
    if type(value) is int and value.bit_length() > 200:
        return f"<int of {len(hex(value)) - 2} hex digits>"
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - repr of user objects may fail
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _restore(fmt: int, state: tuple[Any, ...]) -> SpecPack:
    """Unpickle a pack (``__reduce__``'s counterpart); accepts every known format version."""
    if not isinstance(fmt, int) or fmt > FORMAT_VERSION or fmt < 1:
        raise SpecPackError(
            f"this pickle holds a pack of format {fmt!r}, but this specpack reads formats up to "
            f"{FORMAT_VERSION}; upgrade specpack"
        )
    backend, id_, entry, kwargs, spec, layers, auto_render, versions, notes = state
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
    )

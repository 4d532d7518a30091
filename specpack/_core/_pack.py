"""The :class:`SpecPack` value: everything needed to rebuild one env, resolved and carried. Its
fields are :class:`~specpack._core._packvalue.PackValue`'s; its methods delegate to the modules
below (build order, pickled state, text form: docs/how-it-works.md)."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ._backends import get_backend
from ._build import order_of
from ._keywords import checked_keywords
from ._layer import Layer
from ._packvalue import PackValue
from ._restorer import restorer
from ._state import fingerprint, from_state, reduced, state_of
from ._text import short

if TYPE_CHECKING:
    from ._process.launch import Boundary
    from ._surface import Surface

__all__ = ["Layer", "SpecPack"]


class SpecPack(PackValue):
    """How to build one env, resolved in the process where it was known.

    Made by :func:`specpack.capture`, rebuilt by :meth:`make` in any process, pickled with plain
    ``pickle``: construction, not run-time state (an episode, an RNG); :meth:`evolve` copies it.

    Attributes
    ----------
    backend
        The backend that builds it: ``"gymnasium"``, ``"gym"`` or ``"pettingzoo"``.
    id
        The registered env id it was captured from, or None (a class, function or live env).
    entry_point
        The env constructor, a :class:`~specpack.CodeRef` (by reference or by value).
    spec
        The spec fields the built env shows as ``env.spec`` (read-only mapping).
    layers
        The wrapper stack, outermost first, as :class:`~specpack.Layer` values.
    auto_render
        Whether ``make()`` adds the render wrappers ``gymnasium.make`` adds for a render mode.
    versions
        ``{name: version}`` of Python and the libraries where it was captured; a rebuild
        under others warns (:class:`~specpack.VersionSkewWarning`).
    notes
        Remarks from capture (what travels by value and why).
    vector
        True for a vector-only env: build it with :func:`specpack.make_vec`.
    surface
        Spaces, metadata and render mode recorded at capture, or None (not fingerprinted).
    assets
        The files the env is given (:class:`~specpack.Asset`), checked or written by ``make()``.
    sealed
        The reference rollout of :func:`specpack.seal` (None until sealed).
    """

    __slots__ = ()

    def evolve(self, **changes: Any) -> SpecPack:
        """A copy with ``changes`` applied (same fingerprint unless one shapes the env).

        Parameters
        ----------
        **changes
            New values of fields, by name: ``surface``, ``assets``, ``sealed``, ``notes``,
            ``versions``, ``requires``... (and the private ``_kwargs``: lowered kwargs).
        """
        changes["_requires"] = changes.pop("requires", self._requires)
        return dataclasses.replace(self, **changes)

    @checked_keywords
    def with_surface(self, surface: Surface) -> SpecPack:
        """Deprecated: ``pack.evolve(surface=surface)`` (removed in specpack 0.4)."""
        # stacklevel 3: the caller's line, past checked_keywords' wrapper
        warnings.warn("SpecPack.with_surface(s) is deprecated and stops working in specpack "
                      "0.4; use pack.evolve(surface=s)", DeprecationWarning, stacklevel=3)
        return self.evolve(surface=surface)

    def __reduce__(self) -> tuple[Any, ...]:
        return (restore_pack, reduced(self))

    def _state(self) -> tuple[Any, ...]:
        """The pickled state (:func:`specpack._core._state.state_of`)."""
        return state_of(self)

    @property
    def fingerprint(self) -> str:
        """A stable digest of everything that shapes the env, assets included (not versions,
        notes, ``requires`` or the seal): equal for equal content, kept by pickle and JSON."""
        return fingerprint(self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SpecPack):
            return NotImplemented
        return self is other or self.fingerprint == other.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        stack = "".join(f"{layer.name}<" for layer in self.layers)
        base = self.entry_point.qualname + (" (by value)" if self.entry_point.by_value else "")
        args = ", ".join(f"{k}={short(v, 60)}" for k, v in self._kwargs.items())
        return (f"<SpecPack id={self.id!r} {stack}{base}({args}){'>' * len(self.layers)} "
                f"backend={self.backend} (spec only: no run-time state)>")

    def make(self, **kwargs: Any) -> Any:
        """Build the env here with its wrapper stack, as ``gymnasium.make`` would (no registry).

        Parameters
        ----------
        **kwargs
            Merged over the captured constructor kwargs (``pack.make(render_mode="rgb_array")``).

        Raises
        ------
        BuildError
            The constructor or a wrapper raised (chained, and also of its type where safe), or
            carried code could not be loaded here.
        UntrustedPackError
            A reference resolves outside the ``allow`` list the pack was loaded with.
        SpecPackError
            The pack is vector-only: use :func:`specpack.make_vec`.
        """
        return order_of(self).make(kwargs)

    @checked_keywords
    def register(self, id: str | None = None) -> str:
        """Register this pack here (idempotent) and return the id, for tools that only take
        ids: ``gymnasium.make(id)`` then builds exactly ``pack.make()``.

        Parameters
        ----------
        id
            The id to register under (default: ``pack.id``; needed when the pack has none).

        Raises
        ------
        CaptureError
            The pack has no id and none was given, or another env holds the id.
        """
        return get_backend(self.backend).register(self, id)

    def _make_vector(self, num_envs: int | None, kwargs: dict[str, Any]) -> Any:
        """Build a vector-only pack's vector env (``specpack.make_vec`` calls this)."""
        return order_of(self).make_vector(num_envs, kwargs)

    # -- deprecated

    @checked_keywords
    def verify(self, *, steps: int = 100, seed: int = 0, where: Boundary = "subprocess",
               check: bool = False, timeout: float = 120.0, ignore_info: Iterable[str] = ()) -> Any:
        """Deprecated: ``specpack.verify(pack, ...)`` (removed in specpack 0.4)."""
        return _moved("verify")(self, steps=steps, seed=seed, where=where, check=check,
                                timeout=timeout, ignore_info=ignore_info)

    @checked_keywords
    def seal(self, steps: int = 100, seed: int = 0, *, timeout: float = 120.0,
             ignore_info: Iterable[str] = ()) -> SpecPack:
        """Deprecated: ``specpack.seal(pack, ...)`` (removed in specpack 0.4)."""
        sealed: SpecPack = _moved("seal")(self, steps, seed, timeout=timeout,
                                          ignore_info=ignore_info)
        return sealed

    @checked_keywords
    def check(self, *, where: str | None = None, timeout: float = 120.0) -> Any:
        """Deprecated: ``specpack.check(pack, ...)`` (removed in specpack 0.4)."""
        return _moved("check")(self, where=where, timeout=timeout)

    # -- text form: loaded on first use (a worker never loads the file format)

    @checked_keywords
    def to_json(self, indent: int | None = 2) -> str:
        """The typed, human-readable manifest (strict JSON: docs/file-format.md).

        Parameters
        ----------
        indent
            JSON indentation (``None``: one line).
        """
        from ._fileformat import text

        return text.to_json(self, indent)

    @classmethod
    @checked_keywords
    def from_json(cls, text: str | bytes, *, trust: bool = False, key: bytes | None = None,
                  allow: Iterable[str] | str | None = None, source: str = "<manifest>") -> SpecPack:
        """Read a manifest (or a pack file's bytes) with the checks of :func:`specpack.load`;
        nothing is imported or unpickled.

        Parameters
        ----------
        text
            The manifest (``pack.to_json()``), or the bytes of a pack file, signed or not.
        trust
            Accept by-value payloads without a signature (they run when ``make()`` loads them).
        key
            The HMAC key the text must be signed with.
        allow
            Modules and exact ``module:qualname`` references admitted (docs/security.md).
        source
            How messages name the text.

        Raises
        ------
        PackFormatError
            The text is malformed (the message names the field).
        UntrustedPackError
            Payloads without trust or key, or references outside ``allow``.
        SignatureError
            ``key`` does not verify the text.
        """
        from ._fileformat import text as form

        return cls(**form.read(text, trust=trust, key=key, allow=allow, source=source))


def _moved(name: str) -> Any:
    """Warn that ``SpecPack.<name>()`` is deprecated and return ``specpack.<name>``."""
    import specpack  # the core imports no tool

    warnings.warn(f"SpecPack.{name}() is deprecated and stops working in specpack 0.4; use "
                  f"specpack.{name}(pack, ...)", DeprecationWarning, stacklevel=4)
    return getattr(specpack, name)


@restorer
def restore_pack(fmt: int, *args: Any) -> SpecPack:
    """A pickled pack (of another specpack version or format: a PackFormatError)."""
    return from_state(SpecPack, fmt, *args)

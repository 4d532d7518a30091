"""How a pack becomes an env: its build plan, :meth:`make`, the vector build and registering.

Mixed into :class:`~specpack.SpecPack` (the value and its fields are :mod:`specpack.pack`):
the fields are turned once into a backend :class:`~specpack.backends.Blueprint` (the version
skew is checked then), and each build hands the blueprint and fresh kwargs to the backend.
Nothing here imports the pack module.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from ._assets import Asset
from .backends import Blueprint, get_backend
from .carry.code import CodeRef
from .carry.values import is_plain, materialize
from .errors import SpecPackError
from .layer import Layer
from .versions import check_skew, skew_free

__all__ = ["BuildFace"]


class BuildFace:
    """The building methods of a pack (its fields are read through the pack's own slots)."""

    __slots__ = ()
    backend: str
    id: str | None
    entry_point: CodeRef
    _kwargs: dict[str, Any]
    _plain: bool
    spec: Mapping[str, Any]
    layers: tuple[Layer, ...]
    auto_render: bool
    versions: Mapping[str, str]
    vector: bool
    _blueprint: Blueprint | None
    _skew_checked: bool
    _built: frozenset[str] | None
    assets: tuple[Asset, ...]

    @property
    def label(self) -> str:  # the pack's own
        raise NotImplementedError

    @property
    def nondeterministic(self) -> bool:  # the pack's own
        raise NotImplementedError

    @property
    def requires(self) -> Mapping[str, str]:  # the pack's own
        raise NotImplementedError

    def _record_build(self, before: set[str], env: Any) -> None:  # the pack's own
        raise NotImplementedError

    def _plan(self) -> Blueprint:
        bp = self._blueprint
        if bp is None:
            if not self._skew_checked:
                object.__setattr__(self, "_skew_checked", True)
                check_skew(self.versions, f"pack {self.label}")
                needs = skew_free(self.requires, self.versions)
                if needs:
                    from ._provenance import check_requires

                    check_requires(needs, label=f"pack {self.label}")
            bp = Blueprint(
                label=self.label,
                entry=self.entry_point,
                layers=tuple(
                    (layer.cls, layer._kwargs,
                     all(is_plain(v) for v in layer._kwargs.values()))
                    for layer in reversed(self.layers)
                ),
                spec=self.spec,
                auto_render=self.auto_render,
                versions=self.versions,
            )
            object.__setattr__(self, "_blueprint", bp)
        return bp

    def make(self, **kwargs: Any) -> Any:
        """Build the env, in this process, exactly as captured.

        Works without the registry and without pre-importing the env's module.

        Parameters
        ----------
        **kwargs
            Merged over the captured constructor kwargs (``pack.make(render_mode="rgb_array")``).

        Returns
        -------
        gymnasium.Env
            The env with its wrapper stack, as ``gymnasium.make`` would have built it.

        Raises
        ------
        BuildError
            The constructor or a wrapper raised (chained to the original; also an instance of
            the original's type where that is safe, e.g. ``TypeError``), or carried code could
            not be loaded here.
        UntrustedPackError
            A reference resolves outside the ``allow`` list the pack was loaded with.
        SpecPackError
            The pack is vector-only: use :func:`specpack.make_vec`.
        """
        bp = self._blueprint or self._plan()
        if self.vector:
            raise SpecPackError(
                f"pack {self.label} is vector-only (its spec has a vector_entry_point and no "
                f"entry_point), so there is no single env to make; use "
                f"specpack.make_vec(pack, num_envs)"
            )
        kw = self._kwargs_here()
        if kwargs:
            kw.update(kwargs)
        if self._built is not None:
            return get_backend(self.backend).build(bp, kw)
        before = set(sys.modules)
        env = get_backend(self.backend).build(bp, kw)
        self._record_build(before, env)
        return env

    def _kwargs_here(self) -> dict[str, Any]:
        """Fresh constructor kwargs, with the assets checked and carried ones' local paths.

        A file that is not carried must be here with the captured bytes (``AssetError``
        otherwise: checked at every build, so a pack never builds with another file); a
        carried one is written once into the local cache and its path passed instead.
        """
        kw = dict(self._kwargs) if self._plain else materialize(self._kwargs)
        if self.assets:
            from ._assets import check_assets, remap
            from ._assets import materialize as write_assets

            check_assets(self.assets, label=f"pack {self.label}")
            kw = remap(kw, write_assets(self.assets))
        return kw

    def _make_vector(self, num_envs: int | None, kwargs: dict[str, Any]) -> Any:
        """Build a vector-only pack's vector env (``specpack.make_vec`` calls this)."""
        kw = self._kwargs_here()
        kw.update(kwargs)
        return get_backend(self.backend).build_vector(self._blueprint or self._plan(), num_envs,
                                                      kw)

    def register(self, id: str | None = None) -> str:
        """Put this pack into this process's registry under ``id`` (default: ``pack.id``).

        For tools that only take env ids, e.g. inside a worker. ``gymnasium.make(id)`` then
        builds exactly ``pack.make()`` (no wrapper applied twice). Idempotent: registering the
        same pack again under the same id is a no-op.

        Parameters
        ----------
        id
            The id to register under; needed when the pack has none (captured from a class).

        Returns
        -------
        str
            The id registered.

        Raises
        ------
        CaptureError
            The pack has no id and none was given, or another env holds the id.
        """
        return get_backend(self.backend).register(self, id)


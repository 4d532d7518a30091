"""How a pack becomes an env: its build plan, ``make``, the vector build and registering.

:class:`~specpack.SpecPack`'s building methods call these functions: the fields are turned
once into a backend :class:`~specpack._backends.Blueprint` (the version skew is checked then),
and each build hands the blueprint and fresh kwargs to the backend. Nothing here imports the
pack module at load time.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from ._backends import Blueprint, get_backend
from ._carry.tree import is_plain, materialize
from ._errors import SpecPackError
from ._versions import check_skew, skew_free

if TYPE_CHECKING:
    from ._pack import SpecPack

__all__ = ["kwargs_here", "make", "make_vector", "plan", "register"]


def plan(pack: SpecPack) -> Blueprint:
    """The pack's build plan, made once (checking version skew and ``requires`` then)."""
    bp = pack._blueprint
    if bp is None:
        if not pack._skew_checked:
            object.__setattr__(pack, "_skew_checked", True)
            check_skew(pack.versions, f"pack {pack.label}")
            needs = skew_free(pack.requires, pack.versions)
            if needs:
                from ._provenance import check_requires

                check_requires(needs, label=f"pack {pack.label}")
        bp = Blueprint(
            label=pack.label,
            entry=pack.entry_point,
            layers=tuple(
                (layer.cls, layer._kwargs, all(is_plain(v) for v in layer._kwargs.values()))
                for layer in reversed(pack.layers)
            ),
            spec=pack.spec,
            auto_render=pack.auto_render,
            versions=pack.versions,
        )
        object.__setattr__(pack, "_blueprint", bp)
    return bp


def make(pack: SpecPack, kwargs: dict[str, Any]) -> Any:
    """``pack.make(**kwargs)``: build the env here (see :meth:`SpecPack.make`)."""
    bp = pack._blueprint or plan(pack)
    if pack.vector:
        raise SpecPackError(
            f"pack {pack.label} is vector-only (its spec has a vector_entry_point and no "
            f"entry_point), so there is no single env to make; use "
            f"specpack.make_vec(pack, num_envs)"
        )
    kw = kwargs_here(pack)
    if kwargs:
        kw.update(kwargs)
    if pack._built is not None:
        return get_backend(pack.backend).build(bp, kw)
    before = set(sys.modules)
    env = get_backend(pack.backend).build(bp, kw)
    _record_build(pack, before, env)
    return env


def _record_build(pack: SpecPack, before: set[str], env: Any) -> None:
    """Note, once per process, the modules the first build imported and those of the
    objects the env holds (``pack.requires`` resolves them when read)."""
    modules = set(sys.modules).difference(before)
    node = getattr(env, "unwrapped", env)
    modules.update(c.__module__ for c in type(node).__mro__)
    modules.update(type(v).__module__ for v in list(getattr(node, "__dict__", {}).values()))
    object.__setattr__(pack, "_built", frozenset(m for m in modules if isinstance(m, str)))
    object.__setattr__(pack, "_reduced", None)  # the pickled state now holds more


def kwargs_here(pack: SpecPack) -> dict[str, Any]:
    """Fresh constructor kwargs, with the assets checked and carried ones' local paths.

    A file that is not carried must be here with the captured bytes (``AssetError``
    otherwise: checked at every build, so a pack never builds with another file); a
    carried one is written once into the local cache and its path passed instead.
    """
    kw = dict(pack._kwargs) if pack._plain else materialize(pack._kwargs)
    if pack.assets:
        from ._assets import check_assets, remap
        from ._assets import materialize as write_assets

        check_assets(pack.assets, label=f"pack {pack.label}")
        kw = remap(kw, write_assets(pack.assets))
    return kw


def make_vector(pack: SpecPack, num_envs: int | None, kwargs: dict[str, Any]) -> Any:
    """Build a vector-only pack's vector env (``specpack.make_vec`` calls this)."""
    kw = kwargs_here(pack)
    kw.update(kwargs)
    return get_backend(pack.backend).build_vector(pack._blueprint or plan(pack), num_envs, kw)


def register(pack: SpecPack, id: str | None) -> str:
    """``pack.register(id)``: put the pack into this process's registry (see the method)."""
    return get_backend(pack.backend).register(pack, id)

"""How a pack becomes an env: its build order, ``make``, the vector build and registering.

:class:`~specpack.SpecPack`'s building methods call these functions. A pack is turned once
into an :class:`Order`: everything a build reads of it (the backend's
:class:`~specpack._core._backends.Blueprint`, the lowered kwargs, the files, what must be
installed) and nothing else. Each build hands the blueprint and fresh kwargs to the backend;
the version skew is checked at the first. An order pickles on its own, and that is what
``make_vec``'s and the adapters' spawn and forkserver workers are sent: a worker builds from it
without loading the pack's class (``docs/how-it-works.md``). Nothing here imports the pack
module, and nothing here writes a pack: its order is kept beside it (:mod:`specpack._core._beside`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._assets import check_assets, remap
from ._assets import materialize as write_assets
from ._backends import Blueprint, get_backend
from ._beside import Beside
from ._carry.ref import CodeRef
from ._carry.tree import is_plain, materialize, pickle_exact
from ._errors import SpecPackError
from ._restorer import restorer
from ._versions import check_requires, check_skew, skew_free

if TYPE_CHECKING:
    from ._assets import Asset
    from ._backends.recipe import PackLike
    from ._packvalue import PackValue

__all__ = ["Order", "make", "make_vector", "order_of", "plan", "register", "restore_order"]


class Order:
    """Everything ``make()`` reads of a pack: a pack's build order.

    Parameters
    ----------
    backend
        The backend that builds it.
    blueprint
        What the backend builds from (entry point, wrapper layers, spec, versions).
    kwargs
        The pack's lowered constructor kwargs (never mutated: each build materialises a copy).
    plain
        Whether ``kwargs`` hold only immutable scalars (a build then copies the dict only).
    assets
        The files the env is given (checked, or written from the pack, at every build).
    requires
        ``{distribution: version}`` that must be installed where it is built.
    vector
        A vector-only pack: there is no single env to make.
    """

    __slots__ = ("_ready", "assets", "backend", "blueprint", "kwargs", "plain", "requires",
                 "vector")

    def __init__(self, backend: str, blueprint: Blueprint, kwargs: dict[str, Any], plain: bool,
                 assets: tuple[Asset, ...], requires: Mapping[str, str], vector: bool) -> None:
        self.backend = backend
        self.blueprint = blueprint
        self.kwargs = kwargs
        self.plain = plain
        self.assets = assets
        self.requires = requires
        self.vector = vector
        self._ready = False

    @property
    def label(self) -> str:
        """The pack's short name (its id, else its entry point's name)."""
        return self.blueprint.label

    def check(self) -> None:
        """Warn once of version skew and refuse a missing or other required distribution.

        Call it with the backend loaded: a library's version is read from its imported module
        (``__version__``); one not imported yet would be looked up in the installed
        distributions' metadata (``importlib.metadata``: about 20 ms of imports).
        """
        if self._ready:
            return
        self._ready = True
        bp = self.blueprint
        check_skew(bp.versions, f"pack {bp.label}")
        needs = skew_free(self.requires, bp.versions)
        if needs:
            check_requires(needs, label=bp.label)

    def fresh_kwargs(self) -> dict[str, Any]:
        """Fresh constructor kwargs, with the assets checked and carried ones' local paths.

        A file that is not carried must be here with the captured bytes (``AssetError``
        otherwise: checked at every build, so a pack never builds with another file); a
        carried one is written once into the local cache and its path passed instead.
        """
        kw = dict(self.kwargs) if self.plain else materialize(self.kwargs)
        if self.assets:
            check_assets(self.assets, label=f"pack {self.label}")
            kw = remap(kw, write_assets(self.assets))
        return kw

    def make(self, kwargs: Mapping[str, Any]) -> Any:
        """Build the env here, ``kwargs`` merged over the pack's (see :meth:`SpecPack.make`)."""
        if self.vector:
            raise SpecPackError(
                f"pack {self.label} is vector-only (its spec has a vector_entry_point and no "
                f"entry_point), so there is no single env to make; use "
                f"specpack.make_vec(pack, num_envs)"
            )
        backend, kw = self.prepare(kwargs)
        return backend.build(self.blueprint, kw)

    def prepare(self, kwargs: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
        """The backend (loaded first: :meth:`check` reads its library's version), checked, and
        fresh kwargs with ``kwargs`` merged over the pack's: what every build starts from."""
        backend = get_backend(self.backend)
        self.check()
        kw = self.fresh_kwargs()
        if kwargs:
            kw.update(kwargs)
        return backend, kw

    def __reduce__(self) -> tuple[Any, ...]:
        bp = self.blueprint
        layers = tuple((cls, pickle_exact(kw), plain) for cls, kw, plain in bp.layers)
        return (restore_order, (
            self.backend, bp.label, bp.entry, layers, pickle_exact(dict(bp.spec)),
            bp.auto_render, dict(bp.versions),
            self.kwargs if self.plain else pickle_exact(self.kwargs), self.plain,
            tuple(self.assets), dict(self.requires), self.vector,
        ))

    def __repr__(self) -> str:
        return f"Order({self.label}, backend={self.backend!r})"


@restorer
def restore_order(backend: str, label: str, entry: CodeRef,
                  layers: tuple[tuple[CodeRef, Mapping[str, Any], bool], ...],
                  spec: dict[str, Any], auto_render: bool, versions: dict[str, str],
                  kwargs: dict[str, Any], plain: bool, assets: tuple[Asset, ...],
                  requires: dict[str, str], vector: bool) -> Order:
    """A pickled :class:`Order` (made in the process that sent a worker its factory; never
    written to a file, so its layout may change between releases)."""
    blueprint = Blueprint(label=label, entry=entry, layers=layers, spec=spec,
                          auto_render=auto_render, versions=versions)
    return Order(backend, blueprint, kwargs, plain, assets, requires, vector)


#: Each live pack's build order, kept beside it.
_orders: Beside[Order] = Beside()


def order_of(pack: PackValue) -> Order:
    """The pack's build order, made once per pack."""
    order = _orders.get(pack)
    if order is None:
        blueprint = Blueprint(
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
        order = _orders.put(pack, Order(pack.backend, blueprint, pack._kwargs, pack._plain,
                                        pack.assets, pack.requires, pack.vector))
    return order


def order_to_send(pack: PackValue) -> Order:
    """The order a worker is sent: :func:`order_of` (a pack's ``requires`` never changes)."""
    return order_of(pack)


def plan(pack: PackValue) -> Blueprint:
    """The pack's build plan (the blueprint of its order)."""
    return order_of(pack).blueprint


def make(pack: PackValue, kwargs: dict[str, Any]) -> Any:
    """``pack.make(**kwargs)``: build the env here (see :meth:`SpecPack.make`)."""
    return order_of(pack).make(kwargs)


def make_vector(pack: PackValue, num_envs: int | None, kwargs: dict[str, Any]) -> Any:
    """Build a vector-only pack's vector env (``specpack.make_vec`` calls this)."""
    order = order_of(pack)
    backend, kw = order.prepare(kwargs)
    return backend.build_vector(order.blueprint, num_envs, kw)


def register(pack: PackLike, backend: str, id: str | None) -> str:
    """``pack.register(id)``: put the pack into this process's registry (see the method)."""
    return get_backend(backend).register(pack, id)

"""How a pack becomes an env: its build order (:class:`Order`), made once per pack: everything a
build reads of a pack. It pickles on its own and is what spawn and forkserver workers are sent,
so they build without the pack's class (docs/how-it-works.md)."""

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
    from ._packvalue import PackValue

__all__ = ["Order", "order_of", "order_to_send", "restore_order"]


class Order:
    """Everything ``make()`` reads of a pack: a pack's build order (its ``kwargs`` are never
    mutated: each build materialises a copy, or copies the dict when ``plain``)."""

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

    def make(self, kwargs: Mapping[str, Any]) -> Any:
        """Build the env here, ``kwargs`` merged over the pack's (see :meth:`SpecPack.make`)."""
        if self.vector:
            raise SpecPackError(f"pack {self.label} is vector-only (its spec has a "
                                "vector_entry_point and no entry_point), so there is no single "
                                "env to make; use specpack.make_vec(pack, num_envs)")
        backend, kw = self.prepare(kwargs)
        return backend.build(self.blueprint, kw)

    def make_vector(self, num_envs: int | None, kwargs: Mapping[str, Any]) -> Any:
        """Build a vector-only pack's vector env (``specpack.make_vec`` calls this)."""
        backend, kw = self.prepare(kwargs)
        return backend.build_vector(self.blueprint, num_envs, kw)

    def prepare(self, kwargs: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
        """The backend and fresh kwargs (``kwargs`` over the pack's, carried files' local paths);
        checks the files at every build and the versions at the first."""
        # The backend first: a library's version is then read from its module, not from the
        # installed distributions' metadata (about 20 ms of imports).
        backend = get_backend(self.backend)
        if not self._ready:
            self._ready = True
            check_skew(self.blueprint.versions, f"pack {self.label}")
            needs = skew_free(self.requires, self.blueprint.versions)
            if needs:
                check_requires(needs, label=self.label)
        kw = dict(self.kwargs) if self.plain else materialize(self.kwargs)
        if self.assets:
            check_assets(self.assets, label=f"pack {self.label}")
            kw = remap(kw, write_assets(self.assets))  # a carried file: cached once per node
        if kwargs:
            kw.update(kwargs)
        return backend, kw

    def __reduce__(self) -> tuple[Any, ...]:
        bp = self.blueprint
        layers = tuple((cls, pickle_exact(kw), plain) for cls, kw, plain in bp.layers)
        return (restore_order, (
            self.backend, bp.label, bp.entry, layers, pickle_exact(dict(bp.spec)), bp.auto_render,
            dict(bp.versions), self.kwargs if self.plain else pickle_exact(self.kwargs), self.plain,
            tuple(self.assets), dict(self.requires), self.vector))

    def __repr__(self) -> str:
        return f"Order({self.label}, backend={self.backend!r})"


@restorer
def restore_order(backend: str, label: str, entry: CodeRef,
                  layers: tuple[tuple[CodeRef, Mapping[str, Any], bool], ...], spec: dict[str, Any],
                  auto_render: bool, versions: dict[str, str], kwargs: dict[str, Any], plain: bool,
                  assets: tuple[Asset, ...], requires: dict[str, str], vector: bool) -> Order:
    """A pickled :class:`Order` (never written to a file: its layout may change freely)."""
    blueprint = Blueprint(label, entry, layers, spec, auto_render, versions)
    return Order(backend, blueprint, kwargs, plain, assets, requires, vector)


#: Each live pack's build order, kept beside it.
_orders: Beside[Order] = Beside()


def order_of(pack: PackValue) -> Order:
    """The pack's build order, made once per pack."""
    order = _orders.get(pack)
    if order is None:
        layers = tuple((layer.cls, layer._kwargs, all(map(is_plain, layer._kwargs.values())))
                       for layer in reversed(pack.layers))
        blueprint = Blueprint(pack.label, pack.entry_point, layers, pack.spec, pack.auto_render,
                              pack.versions)
        order = _orders.put(pack, Order(pack.backend, blueprint, pack._kwargs, pack._plain,
                                        pack.assets, pack.requires, pack.vector))
    return order


#: The order a worker is sent: :func:`order_of` (a pack's ``requires`` never changes).
order_to_send = order_of

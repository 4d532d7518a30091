"""The walks over a lowered tree (what :func:`.values.lower` returns): plain data (scalars,
containers, read-only numpy arrays and scalars) and :class:`Carried` leaves, objects rebuilt in
each process."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._restorer import restorer

__all__ = ["MAX_INT_BITS", "SCALAR_TYPES", "Carried", "detached_void", "exact_key", "is_plain",
           "materialize", "pickle_exact"]

#: The types a lowered tree keeps as they are, without a walk.
SCALAR_TYPES = frozenset((type(None), bool, int, float, complex, str, bytes))
#: Largest int a pack carries (what a manifest's ``$int`` can hold, in hexadecimal).
MAX_INT_BITS = 4_000_000


class Carried:
    """A leaf of a lowered tree: an immutable value, compared by content, that stands for an
    object rebuilt in each process."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable (cannot set {name!r})")

    def _set(self, **fields: Any) -> None:
        """Set fields of this immutable value (at construction, or a lazy cache)."""
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def load(self) -> Any:
        """The object this leaf stands for, in this process."""
        raise NotImplementedError(f"{type(self).__name__} does not define load()")

    def _exact_key(self) -> tuple[Any, ...]:
        """A hashable key equal for two leaves exactly when they are identical."""
        raise NotImplementedError(f"{type(self).__name__} does not define _exact_key()")


def materialize(tree: Any) -> Any:
    """A fresh Python value from a lowered tree (code loaded, blobs unpickled, arrays copied)."""
    t = type(tree)
    if t in SCALAR_TYPES:
        return tree
    if t is dict:
        return {materialize(k): materialize(v) for k, v in tree.items()}
    if t is list or t is tuple or t is set or t is frozenset:
        return t(materialize(v) for v in tree)
    if t is np.ndarray:
        return tree.copy()
    if isinstance(tree, Carried):
        return tree.load()
    if t is np.void:
        return detached_void(tree)  # a structured scalar is a mutable view: copy it
    return tree  # other numpy scalars: immutable


def is_plain(tree: Any) -> bool:
    """True when materialising is a no-op (only immutable scalars, no code, no arrays)."""
    t = type(tree)
    if t in SCALAR_TYPES:
        return True
    if t is tuple or t is frozenset:
        return all(is_plain(v) for v in tree)
    if t is dict or t is list or t is set or t is np.ndarray or isinstance(tree, Carried):
        return False
    return isinstance(tree, np.generic) and t is not np.void


def exact_key(tree: Any) -> Any:
    """A hashable key equal for two lowered trees exactly when they are identical (the key of
    capture caches): not ``==``, under which ``0 == 0.0 == False``, ``-0.0 == 0.0`` and arrays
    of another dtype are equal. All NaNs of a type are one value."""
    t = type(tree)
    if t is str or tree is None:
        return tree
    if t is float:
        return ("f", tree.hex())
    if t is int or t is bool or t is bytes:
        return (t.__name__, tree)
    if t is complex:
        return ("j", tree.real.hex(), tree.imag.hex())
    if t is tuple or t is list:
        return (t.__name__, tuple(exact_key(v) for v in tree))
    if t is dict:
        return ("d", frozenset((exact_key(k), exact_key(v)) for k, v in tree.items()))
    if t is set or t is frozenset:
        return (t.__name__, frozenset(exact_key(v) for v in tree))
    if t is np.ndarray:
        return ("a", tree.dtype.str, tree.dtype.descr if tree.dtype.names else None,
                tree.shape, np.ascontiguousarray(tree).tobytes())
    if isinstance(tree, np.generic):
        arr = np.asarray(tree)
        return ("g", arr.dtype.str, arr.dtype.descr if arr.dtype.names else None, arr.tobytes())
    if isinstance(tree, Carried):
        return tree._exact_key()
    return ("?", t.__module__, t.__qualname__, id(tree))


class _ExactArray:
    """Pickles a lowered array with its exact dtype: numpy's own pickle (protocols below 5)
    rebuilds a big-endian array in native order, changing a pack's values and fingerprint."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray) -> None:
        self.array = array

    def __reduce__(self) -> tuple[Any, ...]:
        a = self.array
        return (restore_array, (a.dtype, a.shape, np.ascontiguousarray(a).tobytes()))


@restorer
def restore_array(dtype: np.dtype[Any], shape: tuple[int, ...], data: bytes) -> Any:
    """A pickled lowered array (``_ExactArray``): read-only, exactly ``dtype`` and ``shape``."""
    if data:
        return np.frombuffer(data, dtype=dtype).reshape(shape)
    arr = np.zeros(shape, dtype=dtype)
    arr.flags.writeable = False
    return arr


def pickle_exact(tree: Any) -> Any:
    """A lowered tree whose arrays pickle exactly (byte order kept); used by ``__reduce__``."""
    t = type(tree)
    if t is np.ndarray:
        return _ExactArray(tree)
    if t is dict:
        return {k: pickle_exact(v) for k, v in tree.items()}
    if t is list or t is tuple:
        return t(pickle_exact(v) for v in tree)
    return tree


def detached_void(value: np.void) -> np.void:
    """A copy of a structured numpy scalar that owns its memory (not a view of the caller's)."""
    # np.array(value, copy=True) still shares the caller's memory for a void scalar (numpy
    # 2.4): copy field by field into a 0-d array of our own.
    own = np.zeros((), dtype=value.dtype)
    own[()] = value
    return own[()]  # type: ignore[return-value,no-any-return]

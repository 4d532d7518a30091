"""By-value payloads (cloudpickle, with the modules a fresh interpreter could not import), and the
:class:`Witness` of what the pickler read, which holds while pickling again would write the same
bytes: a stale payload is told without re-pickling (docs/how-it-works.md)."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import io
import operator
import sys
import threading
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import cloudpickle

from .._restorer import PICKLED
from .importable import MAIN_NAMES, non_importable_modules, reference_of
from .sources import Located, code_objects, file_stamp

__all__ = ["Witness", "by_value_modules", "dumps_witnessed", "forced_modules", "portable_dumps"]

#: What picks the modules every payload made in this context pickles by value (``capture(...,
#: self_contained=True)``); asked at each pickling, as resolving the env imports them.
_FORCED: contextvars.ContextVar[Callable[[], Iterable[str]] | None] = contextvars.ContextVar(
    "specpack_forced_by_value", default=None)


@contextlib.contextmanager
def by_value_modules(select: Callable[[], Iterable[str]]) -> Iterator[None]:
    """Within the block, payloads also carry by value the modules ``select()`` names."""
    token = _FORCED.set(select)
    try:
        yield
    finally:
        _FORCED.reset(token)


def forced_modules() -> frozenset[str]:
    """The modules :func:`by_value_modules` forces now (empty outside such a block)."""
    select = _FORCED.get()
    return frozenset() if select is None else frozenset(select())


_pickle_lock = threading.Lock()
_MISSING = object()
_EMPTY_CELL = object()
#: Types whose objects cannot change after they are made (or are pickled by name): nothing to
#: compare. Their items, if any, are in the pickler's memo on their own.
_FIXED: frozenset[type] = frozenset({
    str, bytes, int, float, complex, bool, type(None), tuple, frozenset, range, slice,
    type(...), type(NotImplemented), types.CodeType, types.BuiltinFunctionType,
    types.WrapperDescriptorType, types.MethodDescriptorType, types.GetSetDescriptorType,
    types.MemberDescriptorType, types.ClassMethodDescriptorType, types.MethodWrapperType,
})
#: Modules whose functions a payload names but never carries (cloudpickle's own helpers, ours).
_OWN = ("cloudpickle.", "specpack.", "copyreg", "builtins", "types", "_abc", "abc")
#: The module globals cloudpickle carries with every dynamic function, besides those it names.
_BASE_GLOBALS = ("__package__", "__name__", "__path__", "__file__")
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement (not a C type)


class _Pickler(cloudpickle.Pickler):  # type: ignore[misc]
    """cloudpickle's pickler, saving the ``specpack._pickled`` rebuilders by reference (not by
    value, as it would while that module is not imported), as a pack's pickle does."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, types.FunctionType) and obj.__module__ == PICKLED:
            return NotImplemented  # pickle's own save_global: by reference, identity checked
        return super().reducer_override(obj)


def dumps_witnessed(obj: Any, *, force_modules: set[str] | None = None,
                    witnessed: bool = True) -> tuple[bytes, Witness | None]:
    """cloudpickle ``obj`` so that a fresh interpreter can load it (``force_modules`` by value
    even if importable), and if ``witnessed`` a :class:`Witness` of what it read (or None)."""
    scan = non_importable_modules()
    modules = scan | forced_modules() | (force_modules or set())
    with _pickle_lock:
        registered = []
        try:
            for name in sorted(modules):
                mod = sys.modules.get(name)
                if mod is not None and name not in MAIN_NAMES:
                    with contextlib.suppress(ValueError):
                        cloudpickle.register_pickle_by_value(mod)
                        registered.append(mod)
            buf = io.BytesIO()
            pickler = _Pickler(buf, protocol=4)
            pickler.dump(obj)
            return buf.getvalue(), _witness(pickler.memo, modules, scan) if witnessed else None
        finally:
            for mod in registered:
                with contextlib.suppress(ValueError):
                    cloudpickle.unregister_pickle_by_value(mod)


def portable_dumps(obj: Any) -> bytes:
    """cloudpickle ``obj`` so that a fresh interpreter can load it."""
    return dumps_witnessed(obj, witnessed=False)[0]


@dataclasses.dataclass(slots=True, eq=False)
class Witness:
    """What a by-value pickle read; :meth:`holds` while pickling again would give its bytes."""

    _checks: list[tuple[Any, tuple[Any, ...]]]
    _files: dict[str, Any]
    _modules: frozenset[str]
    _scan: frozenset[str]

    def holds(self) -> bool:
        """Whether the objects read (by identity), sources and by-value modules are unchanged."""
        scan = non_importable_modules()
        if scan is not self._scan and scan != self._scan:
            return False
        for obj, state in self._checks:
            now = _state(obj, self._modules)
            if now is None or len(now) != len(state) or not all(map(operator.is_, now, state)):
                return False
        return all(file_stamp(name) == stamp for name, stamp in self._files.items())


def _witness(memo: Any, frozen: frozenset[str], scan: frozenset[str]) -> Witness | None:
    """The witness of what a pickler's ``memo`` holds (None: something cannot be compared)."""
    checks: list[tuple[Any, tuple[Any, ...]]] = []
    files: dict[str, Any] = {}
    for _, obj in memo.copy().values():
        if isinstance(obj, Located):  # its maps are fresh; its sources are read from files
            files.update((name, file_stamp(name)) for name in obj.files.values())
        elif type(obj) not in _FIXED:
            state = _state(obj, frozen)
            if state is None:
                return None
            if state:
                checks.append((obj, state))
    return Witness(checks, files, frozen, scan)


def _by_name(obj: Any, modules: frozenset[str]) -> bool:
    """Whether ``obj`` is one of ours or cloudpickle's, pickled by name (nothing to compare)."""
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str) or module in modules or module in MAIN_NAMES:
        return False
    return (module + ".").startswith(_OWN) and reference_of(obj) is not None


def _contents(cell: types.CellType) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return _EMPTY_CELL


def _state(obj: Any, modules: frozenset[str]) -> tuple[Any, ...] | None:
    """The references cloudpickle takes from ``obj`` (``()``: none to compare; None: unknown)."""
    kind = type(obj)
    if kind is dict:
        return tuple(x for item in obj.items() for x in item)
    if kind is list or kind is set:
        return tuple(obj)
    if kind is types.CellType:
        return (_contents(obj),)
    if kind is types.FunctionType:
        if _by_name(obj, modules):
            return ()
        names = (*_BASE_GLOBALS, *(n for c in code_objects(obj.__code__) for n in c.co_names))
        return (obj.__code__, obj.__defaults__, obj.__kwdefaults__, obj.__dict__, obj.__name__,
                obj.__qualname__, obj.__module__, obj.__doc__, obj.__annotations__,
                reference_of(obj) is None, *map(_contents, obj.__closure__ or ()),
                *(obj.__globals__.get(n, _MISSING) for n in names))
    if isinstance(obj, type):
        if not obj.__flags__ & _HEAPTYPE or _by_name(obj, modules):  # static types are fixed
            return ()
        unnamed = reference_of(obj) is None
        if "_abc_impl" in vars(obj) and (
                unnamed or obj.__module__ in modules or obj.__module__ in MAIN_NAMES):
            return None  # by value, cloudpickle carries its ABC registry too: not compared here
        return (type(obj), obj.__name__, obj.__qualname__, obj.__bases__, unnamed,
                *(x for item in vars(obj).items() for x in item))
    if kind is property:
        return (obj.fget, obj.fset, obj.fdel, obj.__doc__)
    if kind is staticmethod or kind is classmethod:
        return (obj.__func__,)
    if kind is types.ModuleType:  # pickled by name unless it was built at run time
        return () if sys.modules.get(obj.__name__) is obj else None
    return None

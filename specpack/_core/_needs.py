"""What a pack needs where it is built, found at capture: ``requires`` and ``assets``.

:func:`with_needs` applies :mod:`._reach` and the asset rule of :mod:`._assets` to a draft;
nothing is read from disk unless a kwarg, a default or ``assets=[...]`` could name a file.
"""

from __future__ import annotations

import errno
import inspect
import os
import sys
import sysconfig
import types
from collections.abc import Iterable, Mapping
from contextlib import suppress
from itertools import repeat
from typing import TYPE_CHECKING, Any

from ._assets import Asset, carried_bytes, counts_as_file, find_paths, read_asset, written_as_path
from ._carry.carried import Blob
from ._carry.code import CodeRef, code_ref, live_object
from ._carry.values import lower_mapping
from ._errors import CaptureError, file_error_for
from ._provenance import source_of, user_modules
from ._reach import requires_of_pack

if TYPE_CHECKING:
    from ._draft import Draft
    from ._pack import SpecPack

__all__ = ["absolute_kwargs", "check_needs_options", "entry_defaults", "find_assets",
           "user_by_value", "user_code", "with_needs"]

_MAX_DEPTH = 32  # kwargs nested deeper are not looked at (as in _assets)


def check_needs_options(assets: Any, self_contained: bool, limit: Any,
                        by_value: bool | None) -> tuple[Any, ...]:
    """Check ``assets``, ``self_contained`` and ``max_asset_bytes``; the named assets as a tuple."""
    if type(limit) is not int or limit < 0:
        raise CaptureError(f"max_asset_bytes={limit!r} must be a number of bytes (an int >= 0)")
    if self_contained and by_value is False:
        raise CaptureError("self_contained=True carries the user's own code by value, which "
                           "by_value=False forbids; drop one of them")
    if isinstance(assets, (str, bytes, os.PathLike)):
        return (assets,)
    try:
        return tuple(assets)
    except TypeError:
        raise CaptureError(f"assets={assets!r} must be a list of paths (str or "
                           "os.PathLike)") from None


def entry_defaults(entry: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """The entry point's absolute-path defaults not overridden by ``given`` (a relative one,
    Ant's ``"ant.xml"``, is the env's); memoised, read without ``inspect.signature`` if it can."""
    found = _file_defaults(entry)  # mostly empty: then no comprehension
    return {name: value for name, value in found if name not in given} if found else {}


#: ``entry -> (token, found)``: the token is ``(function, __defaults__, __kwdefaults__)`` when
#: read without ``inspect.signature`` (valid while the same objects), else ``None`` (always).
_defaults_memo: dict[Any, tuple[tuple[Any, Any, Any] | None, tuple[tuple[str, Any], ...]]] = {}


def _token(entry: Any) -> tuple[Any, Any, Any]:
    """The function a plain entry point's defaults live on, and its two defaults attributes."""
    fn = entry if type(entry) is types.FunctionType else getattr(entry, "__init__", None)
    return fn, getattr(fn, "__defaults__", None), getattr(fn, "__kwdefaults__", None)


def _file_defaults(entry: Any) -> tuple[tuple[str, Any], ...]:
    """``(name, default)`` of ``entry``'s keyword parameters whose default is an absolute path."""
    if entry is None:
        return ()
    # try/except, not contextlib.suppress, and no map(): this runs in every capture
    try:
        hit = _defaults_memo.get(entry)
    except TypeError:  # unhashable: read every time
        hit = None
    if hit is not None:
        token = hit[0]
        if token is None:
            return hit[1]
        fn, defaults, kwdefaults = _token(entry)
        if fn is token[0] and defaults is token[1] and kwdefaults is token[2]:
            return hit[1]
    found = _plain_defaults(entry)
    memo = None if found is None else _token(entry)
    if found is None:
        try:
            params = inspect.signature(entry).parameters.values()
        except (TypeError, ValueError):
            return ()
        found = tuple((p.name, p.default) for p in params if _absolute(p.default)
                      and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    with suppress(TypeError):  # unhashable
        if len(_defaults_memo) > 1024:
            _defaults_memo.clear()
        _defaults_memo[entry] = (memo, found)
    return found


def _plain_function(obj: Any) -> bool:
    return (type(obj) is types.FunctionType and "__wrapped__" not in obj.__dict__
            and "__signature__" not in obj.__dict__)


def _plain_defaults(entry: Any) -> tuple[tuple[str, Any], ...] | None:
    """:func:`_file_defaults` from the ``__defaults__`` of ``entry`` (a plain function) or of the
    plain ``__init__`` a class runs; ``None`` when only ``inspect.signature`` can tell."""
    fn, method = entry, not _plain_function(entry)
    if method:
        if (not isinstance(entry, type) or type(entry).__call__ is not type.__call__
                or getattr(entry, "__signature__", None) is not None):
            return None
        for base in entry.__mro__:
            if base is object:
                return ()  # no parameters
            if "__new__" in base.__dict__:
                return None
            if "__init__" in base.__dict__:
                fn = base.__dict__["__init__"]
                break
        if not _plain_function(fn):
            return None
    code = fn.__code__
    defaults = fn.__defaults__ or ()
    first = code.co_argcount - len(defaults)
    out = [(code.co_varnames[i], value) for i, value in enumerate(defaults, first)
           if i >= code.co_posonlyargcount and not (method and i == 0) and _absolute(value)]
    out += [(name, value) for name, value in (fn.__kwdefaults__ or {}).items() if _absolute(value)]
    return tuple(out)


#: Where a path names the machine, not the env's data (``/dev/null``, ``/proc/cpuinfo``).
_SYSTEM_DIRS = tuple(os.sep + d + os.sep for d in ("proc", "sys", "dev", "run"))


def _user_file(path: str) -> bool:
    """Whether a found path is an asset: a regular file not in the stdlib, an installed
    distribution or a system folder (a folder only in ``assets=[...]``: ``log_dir="/tmp"``)."""
    real = os.path.realpath(path)
    if not os.path.isfile(real) or real.startswith(_SYSTEM_DIRS):
        return False
    paths = sysconfig.get_paths()
    names = ("stdlib", "platstdlib", "purelib", "platlib")
    return not real.startswith(tuple({os.path.realpath(paths[n]) + os.sep
                                      for n in names if n in paths}))


def find_assets(kwargs: Mapping[str, Any], defaults: Mapping[str, Any], named: Iterable[Any], *,
                carry: bool, limit: int, label: str) -> tuple[tuple[Asset, ...], dict[str, Any]]:
    """The assets of an env (kwargs', then ``defaults``', then ``named``) and, when carried,
    the defaults naming one: those become explicit kwargs, so ``make()`` can pass the local
    copy's path. Carried assets add at most ``limit`` bytes to the pack in all."""
    found = [p for p in find_paths(kwargs) if _user_file(p)]
    from_defaults = {}
    for name, value in defaults.items():  # absolute paths only (entry_defaults)
        p = counts_as_file(value)
        if p is not None and _user_file(p) and p not in found:
            found.append(p)
            from_defaults[name] = value
    for item in named:
        try:
            p = _named_path(item)
        except TypeError:
            raise CaptureError(f"assets=[...] takes paths (str or os.PathLike), got "
                               f"{type(item).__name__} for {label!r}") from None
        if not os.path.exists(p):
            raise file_error_for(errno.ENOENT, f"assets=[...] names {p}, which does not exist; "
                                 f"give the path of a file or folder {label!r} reads", p)
        if p not in found:
            found.append(p)
    assets: list[Asset] = []
    left = limit
    for p in found:
        asset = read_asset(p, carry=carry, limit=max(left, 0))
        left -= carried_bytes(asset)
        assets.append(asset)
    return tuple(assets), (from_defaults if carry else {})


def _named_path(item: Any) -> str:
    """The absolute path an ``assets=[...]`` item names (``TypeError`` for a non-path)."""
    text = os.fspath(item)
    if not isinstance(text, str):
        raise TypeError(f"{type(item).__name__} is not a str path")
    return os.path.abspath(os.path.expanduser(text))


def _absolute(value: Any) -> bool:
    """Whether ``value`` is an absolute path (a str or ``os.PathLike``)."""
    if type(value) is str:
        return os.path.isabs(value)
    if value is None or type(value) in (bool, int, float) or not isinstance(value, os.PathLike):
        return False
    try:
        path = os.fspath(value)
    except Exception:  # noqa: BLE001 - a user PathLike may raise
        return False
    return isinstance(path, str) and os.path.isabs(path)


def _pathlib_blob(value: Any) -> bool:
    return isinstance(value, Blob) and value.type_name.startswith("pathlib.")


def _looks_like_path(tree: Any, depth: int = 0) -> bool:
    """Whether a lowered kwargs value may name a file, from how it is written alone: a str
    written as a path or a ``pathlib`` path, nested in dicts, lists, tuples and sets too."""
    t = type(tree)
    if t is str:
        return written_as_path(tree)
    if t is dict:
        tree = tree.values()
    elif not (t is list or t is tuple or t is set or t is frozenset):
        return _pathlib_blob(tree)
    return depth < _MAX_DEPTH and any(map(_looks_like_path, tree, repeat(depth + 1)))


def absolute_kwargs(given: Mapping[str, Any], named: Iterable[str] = ()) -> dict[str, Any]:
    """``{name: new value}`` for the lowered kwargs ``given`` holding (nested too) a relative path
    of an asset (``named``: ``assets=[...]``'s), made absolute so a build elsewhere reads it."""
    paths = tuple(named)
    new = {key: _absolute_tree(value, paths, 0) for key, value in given.items()}
    return {key: value for key, value in new.items() if value is not given[key]}


def _absolute_tree(tree: Any, named: tuple[str, ...], depth: int) -> Any:
    t = type(tree)
    if t is str or _pathlib_blob(tree):
        value = tree if t is str else tree.load()
        if os.path.isabs(os.fspath(value)):
            return tree
        path = counts_as_file(value, named)
        if path is None or not (path in named or os.path.isdir(path) or _user_file(path)):
            return tree  # not a file, or one of an installed distribution's: not an asset
        return path if t is str else type(value)(path)
    if depth >= _MAX_DEPTH:
        return tree
    if t is dict:
        items = {k: _absolute_tree(v, named, depth + 1) for k, v in tree.items()}
        return items if any(items[k] is not tree[k] for k in tree) else tree
    if t is list or t is tuple or t is set or t is frozenset:
        parts = [_absolute_tree(v, named, depth + 1) for v in tree]
        return t(parts) if any(a is not b for a, b in zip(parts, tree)) else tree
    return tree


def user_by_value(ref: CodeRef, obj: Any, self_contained: bool, what: str) -> CodeRef:
    """``ref``, carried by value instead when self-contained and it is the user's own code."""
    if (not self_contained or ref.by_value or ref.module in ("__main__", "__mp_main__")
            or ref.module not in sys.modules or source_of(ref.module).origin != "user"):
        return ref
    return code_ref(obj, by_value=True, what=what)


def user_code() -> list[str]:
    """The loaded modules that are the user's own (what ``self_contained`` carries by value)."""
    return user_modules(name for name, mod in list(sys.modules.items())
                        if mod is not None and name != "__main__")


def _path_view(value: Any) -> Any:
    """Lowered kwargs with only what may name a file: strings, and the ``pathlib`` paths
    capture itself just pickled (loaded back; no other object is unpickled, so no code runs)."""
    if isinstance(value, dict):
        return {k: _path_view(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_path_view(v) for v in value]
    if isinstance(value, Blob):
        return value.load() if value.type_name.startswith("pathlib.") else None
    return value


def with_needs(draft: Draft, named: tuple[Any, ...], carry: bool, limit: int,
               **more: Any) -> SpecPack:
    """The one pack a capture makes: ``draft`` with ``requires`` and ``assets`` (``carry``: their
    bytes, at most ``limit`` in all); memoised without files. ``more``: a live env's ``requires``
    (merged over the code's) and ``surface``; such a pack computes ``plain``, is not memoised."""
    if draft.made is not None and not named and not more:
        return draft.made  # a memoised capture's draft: the pack made of it before
    given = draft.kwargs
    defaults = entry_defaults(live_object(draft.entry_point), given)
    changes: dict[str, Any] = {"requires": requires_of_pack(draft.code_refs())}
    files = bool(named or defaults) or (bool(given) and _looks_like_path(given))
    if files:
        view = given if draft.plain else _path_view(given)
        changes["assets"], explicit = find_assets(view, defaults, named, carry=carry,
                                                  limit=limit, label=draft.label)
        explicit = {**absolute_kwargs(given, [_named_path(item) for item in named]), **explicit}
        if explicit:
            extra, plain = lower_mapping(dict(explicit), draft.label, "kwargs", None)
            changes.update(_kwargs={**given, **extra}, plain=draft.plain and plain)
    if more:
        changes.pop("plain", None)
        changes["requires"] = {**changes["requires"], **more.pop("requires", {})}
        changes.update(more)
    out = draft.pack(**changes)
    if not files and not more:
        draft.keep(out)
    return out
